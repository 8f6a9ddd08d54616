"""Injection receipts, read back: which packets a session got, line by line, and why.

Every hook packet records one receipt row per line it put in front of the model (hook,
session, section, the record shown, tokens, and what chose it: pinned, a path match, a
score). These answer "why did the agent get this?" for `waymark log --injected`,
`waymark recall --explain --packet`, and the MCP `recall` tool's `packet` argument.
"""

from __future__ import annotations

from waymark.errors import NotFound
from waymark.projects.resolve import Project
from waymark.storage import memories as rows
from waymark.storage import sessions
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any


def packets(
    conn: Connection,
    project: Project,
    *,
    session_id: str | None = None,
    packet: str | None = None,
    limit: int = 20,
) -> list[dict[str, Any]]:
    """The project's newest packets (of one session, or the one named; `packet="last"` is
    the newest), newest first, each with its lines and their records' titles."""
    wanted = None if packet in (None, "last") else packet
    found = sessions.receipts(
        conn,
        project.id,
        session_id=session_id,
        packet=wanted,
        packets=1 if packet else limit,
    )
    if packet and not found:
        raise NotFound(
            f"no injection receipt {packet!r} in this project"
            + (f" for session {session_id}" if session_id else ""),
            packet=packet,
        )
    grouped: dict[str, dict[str, Any]] = {}
    links: dict[str, dict[str, Any]] = {}
    for row in found:
        entry = grouped.setdefault(
            row["packet"],
            {
                "packet": row["packet"],
                "at": row["at"],
                "session_id": row["session_id"],
                "hook": row["hook"],
                "kind": row["kind"],
                "tokens": 0,
                "lines": [],
            },
        )
        entry["tokens"] += row["tokens"]
        line = {k: row[k] for k in ("section", "item", "why", "tokens", "text")}
        if row["item"]:
            if row["item"] not in links:
                links[row["item"]] = source_of(conn, project, row["item"])
            line |= links[row["item"]]
        entry["lines"].append(line)
    return sorted(grouped.values(), key=lambda p: (p["at"], p["packet"]), reverse=True)


def source_of(conn: Connection, project: Project, item: str) -> dict[str, Any]:
    """What a line came from, for a link: {source: memory, type, title, status}, {source:
    checkpoint, status}, {source: failure}, or {} for an item of no page."""
    if len(item) == 26 and item.isalnum():
        memory = rows.get_memory(conn, item)
        if memory is not None:
            return {"source": "memory", "type": memory.type, "title": memory.title,
                    "status": memory.status}  # fmt: skip
        from waymark.storage.checkpoints import get_checkpoint

        held = get_checkpoint(conn, project.id, item)
        if held is not None:
            return {"source": "checkpoint", "status": held[0][2]}
    if item.startswith("failure:"):
        return {"source": "failure"}
    return {}


def render_text(found: list[dict[str, Any]]) -> str:
    """The packets for people: a header per packet, one line per line injected."""
    if not found:
        return "no injections recorded"
    out: list[str] = []
    for p in found:
        out.append(
            f"{p['at'][:19]}Z  {p['hook']} ({p['kind']})  session {p['session_id']}"
            f"  {p['tokens']} tokens  packet {p['packet']}"
        )
        for line in p["lines"]:
            what = line["item"] or "-"
            title = f"  {line['type']}: {line['title']}" if "title" in line else ""
            out.append(
                f"  {line['section']:<26} {what:<28} {line['tokens']:>4} tok  {line['why']}{title}"
            )
            if line.get("text"):
                out.append(f"      {line['text'][:200]}")
    return "\n".join(out)
