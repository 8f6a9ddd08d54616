"""What each session was given and what it did: its packets (the receipts, by hook), the
memories it was shown, the files it changed, and how its Stop went. The dashboard's
Sessions pages read these.

A Stop *decision* is one of: `asked` (the agent was asked once for a checkpoint:
`stop.asked`), `saved` (a checkpoint was saved in the session), `marked` (it stopped with
changes and no checkpoint: `handoff.marked`, shown to the next session); a session with none
of these never needed a handoff.
"""

from __future__ import annotations

import json
import os

from waymark.errors import NotFound
from waymark.memories import store
from waymark.projects.resolve import Project
from waymark.storage import events, sessions
from waymark.storage.connection import Connection

from . import receipts

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

STOP_OPS = {"stop.asked": "asked", "handoff.marked": "marked", "handoff.cleared": "saved"}
SAVES = {"checkpoint.create", "checkpoint.revise", "checkpoint.complete", "checkpoint.abandon"}
EVENTS_SHOWN = 200
# Characters per token of compact JSON tool definitions, as a tokenizer counted them on
# Waymark's own (12,264 characters, about 3,660 tokens): JSON is denser than prose.
JSON_CHARS_PER_TOKEN = 12_264 / 3_660


def listing(conn: Connection, project: Project, *, limit: int = 50, offset: int = 0
            ) -> dict[str, Any]:  # fmt: skip
    """The project's sessions, newest first, a page at a time: {sessions, total}."""
    return {"sessions": sessions.session_rows(conn, project.id, limit, offset),
            "total": sessions.count_sessions(conn, project.id)}  # fmt: skip


def tokens_over_time(conn: Connection, project: Project, *, limit: int = 30) -> list[dict]:
    """Tokens injected in each of the newest `limit` sessions that got any, oldest first."""
    return [{"session_id": s, "at": at, "tokens": t}
            for s, at, t in sessions.injected_per_session(conn, project.id, limit)]  # fmt: skip


def detail(conn: Connection, project: Project, session_id: str) -> dict[str, Any]:
    """One session: {session, packets (newest first, each with its lines), by_hook {hook:
    {packets, tokens}}, shown (the memories, with title and type), stop (decisions, oldest
    first), events (its own audit events)}."""
    row = sessions.session_row(conn, session_id)
    if row is None or row["project_id"] != project.id:
        raise NotFound(f"no session {session_id!r} in this project", session=session_id)
    packets = receipts.packets(conn, project, session_id=session_id, limit=200)
    by_hook: dict[str, dict[str, int]] = {}
    for p in packets:
        totals = by_hook.setdefault(p["hook"], {"packets": 0, "tokens": 0})
        totals["packets"] += 1
        totals["tokens"] += p["tokens"]
    own = events.session_events(conn, session_id, EVENTS_SHOWN)
    stop = [{"at": e["at"], "decision": STOP_OPS[e["op"]], "detail": e["detail"]}
            for e in own if e["op"] in STOP_OPS]  # fmt: skip
    if not any(s["decision"] == "saved" for s in stop):
        stop += [{"at": e["at"], "decision": "saved", "detail": e["detail"]}
                 for e in own if e["op"] in SAVES][-1:]  # fmt: skip
    stop.sort(key=lambda s: s["at"])
    shown = []
    for memory_id in sessions.shown_in(conn, session_id):
        try:
            m = store.get(conn, memory_id)
        except NotFound:
            continue  # erased since
        shown.append({"id": m.id, "title": m.title, "type": m.type, "status": m.status})
    return {"session": row, "packets": packets, "by_hook": by_hook, "shown": shown,
            "stop": stop, "events": own,
            "files": sessions.files_changed(conn, session_id, 50)}  # fmt: skip


def tool_definitions() -> dict[str, Any]:
    """What the MCP server's tool definitions cost in every model request (the client sends
    them all each time): {tools: [{name, tokens}], tokens}, from the definitions the server
    advertises (its recorded `tools/list`)."""
    import importlib.util

    spec = importlib.util.find_spec("waymark.server")
    folder = os.path.dirname(spec.origin) if spec and spec.origin else ""
    try:
        with open(os.path.join(folder, "handshake.json"), encoding="utf-8") as f:
            recorded = json.load(f)
        listed = recorded["tools"][recorded["latest"]]["tools"]
    except (OSError, ValueError, KeyError, TypeError):
        return {"tools": [], "tokens": 0}
    tools = []
    for t in listed:
        sent = json.dumps({"name": t["name"], "description": t.get("description", ""),
                           "input_schema": t.get("inputSchema", {})},
                          separators=(",", ":"))  # fmt: skip
        tools.append({"name": t["name"], "tokens": int(-(-len(sent) // JSON_CHARS_PER_TOKEN))})
    return {"tools": tools, "tokens": int(sum(t["tokens"] for t in tools))}
