"""What a session should know up front: the active checkpoint, pinned rules, and the
memories scoped to the files in play. Shared by the MCP `recall` tool and the hooks' packets.
"""

from __future__ import annotations

import time

import apsw

from waymark.base import clock
from waymark.memories.record import COLUMNS, Memory, from_row
from waymark.projects import pathnames
from waymark.projects.resolve import Project

TYPE_CHECKING = False  # typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

RULE_TYPES = ("convention", "warning", "decision", "preference")


def checkpoint_section(conn: apsw.Connection, project: Project) -> dict[str, Any] | None:
    """The active checkpoint with its lessons (historical ones marked) and evidence state."""
    from waymark.handoff import (
        checkpoints,  # hashes evidence files: only the callers that show it pay
    )

    current = checkpoints.active(conn, project)
    if current is None:
        return None
    fresh = checkpoints.freshness(current, project.files)
    return {
        "id": current.id,
        "revision_id": current.revision.id,
        "updated_at": current.updated_at,
        "next_action": current.revision.body.get("next_action"),
        "text": current.render(),
        "lessons": checkpoints.lessons(conn, current),
        "evidence_state": fresh["state"],
        "evidence": fresh["evidence"],
    }


RULES_WHERE = (
    "status = 'active' AND (pinned = 1 OR (type IN ('convention', 'warning', 'decision',"
    " 'preference') AND priority > 0))"
)  # the exact condition of the memories_rules index, so SQLite uses it


def pinned_rules(conn: apsw.Connection, project: Project, limit: int = 20) -> list[Memory]:
    """Pinned memories, and conventions, warnings, decisions and preferences of high
    priority: the project's and the global ones, best first."""
    now = _now_iso()
    found: list[Memory] = []
    for owner in ("project_id = ?", "project_id IS NULL"):
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM memories WHERE {owner} AND {RULES_WHERE}"
            " ORDER BY pinned DESC, priority DESC, created_at DESC, id DESC LIMIT ?",
            (project.id, limit * 2) if "?" in owner else (limit * 2,),
        ).fetchall()
        found += [m for m in map(from_row, rows) if not m.valid_until or m.valid_until > now]
    found.sort(key=lambda m: (m.pinned, m.priority, m.created_at, m.id), reverse=True)
    return found[:limit]


TARGET_WHERE = "status = 'active' AND scope_target IS NOT NULL"  # memories_by_target's


def file_memories(
    conn: apsw.Connection, project: Project, paths: list[str], limit: int = 20
) -> list[Memory]:
    """Memories scoped to the given files, their symbols, or the directories above them."""
    named = pathnames.normalise(project, paths)
    targets: list[str] = []
    for path in named:
        targets += [path, *pathnames.ancestors(path)]
    if not targets:
        return []
    # Ranked on what memories_by_target holds; only the chosen rows are read whole.
    base = (
        "SELECT rowid, scope_target, priority, created_at, id, valid_until FROM memories"
        f" WHERE project_id = ? AND {TARGET_WHERE}"
    )
    marks = ", ".join("?" * len(targets))
    rows: list[Any] = conn.execute(
        f"{base} AND scope_target IN ({marks})", (project.id, *targets)
    ).fetchall()
    for path in named:  # `path::Symbol` targets: a range the memories_by_target index serves
        rows += conn.execute(
            f"{base} AND scope_target >= ? AND scope_target < ?",
            (project.id, path + "::", path + ":;"),
        ).fetchall()
    now = _now_iso()
    found = [r for r in rows if not r[5] or r[5] > now]
    found.sort(key=lambda r: (len(r[1]), r[2], r[3], r[4]), reverse=True)
    chosen = [int(r[0]) for r in found[:limit]]
    by_rowid = {
        int(row[0]): from_row(tuple(row[1:]))
        for row in conn.execute(
            f"SELECT rowid, {COLUMNS} FROM memories WHERE rowid IN (SELECT value FROM json_each(?))",
            ("[" + ",".join(map(str, chosen)) + "]",),
        )
    }
    return [by_rowid[r] for r in chosen if r in by_rowid]  # one may be gone since ranked


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


def age(stamp: str, now: float | None = None) -> str:
    """'3d', '5h', '2mo': a short age for a timestamp, for people and models alike."""
    then = clock.epoch(stamp)
    seconds = max(0.0, (now or time.time()) - then)
    for unit, size in (
        ("y", 365 * 86400),
        ("mo", 30 * 86400),
        ("d", 86400),
        ("h", 3600),
        ("m", 60),
    ):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return "now"


def memory_view(memory: Memory, detail: str, now: float | None = None) -> dict[str, Any]:
    """A memory at one of three levels of detail: compact, summary or full."""
    view: dict[str, Any] = {
        "id": memory.id,
        "type": memory.type,
        "title": memory.title,
        "age": age(memory.event_time, now),
    }
    if memory.scope_target:
        view["scope"] = f"{memory.scope_type}:{memory.scope_target}"
    if detail == "compact":
        return view
    if detail == "summary":
        text = memory.content
        view["content"] = text if len(text) <= 300 else text[:297].rstrip() + "..."
        if memory.tags:
            view["tags"] = memory.tags
        if memory.evidence:
            view["evidence"] = memory.evidence
        return view
    return memory.to_dict() | {"age": view["age"]}
