"""Insights and rules: what the error log's patterns teach, once a person or agent agrees.

An approved insight candidate becomes a lesson memory and an insight here (importance and
confidence 1). A vote up raises both, a vote down lowers both; at zero the memory is
archived (reversible: `waymark unarchive`). An insight reaching PROMOTE on both, or promoted
by a person, becomes a rule: its memory is pinned, so SessionStart shows it beside the pinned
conventions within the packet's budget. Each time an agent rates a rule after use (MCP
`status` review, helpful or not helpful; `waymark rules rate`) it fires, and it succeeds when
it helped; a rule that helped less than SUSPEND_RATE of the time after SUSPEND_FIRES fires is
suspended (unpinned). Retiring keeps the row and its counts. Every change is in the audit log.
"""

from __future__ import annotations

from waymark.base import clock
from waymark.errors import Conflict, InvalidArgument, NotFound
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage import learned as rows
from waymark.storage.connection import Connection
from waymark.storage.events import log_event

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

PROMOTE = 3  # importance and confidence at which an insight becomes a rule
SUSPEND_FIRES = 10
SUSPEND_RATE = 0.2


def _row(conn: Connection, project: Project, memory_id: str, kind: str | None) -> dict:
    from waymark.memories import store

    memory_id = store.full_id(conn, memory_id)
    memory = store.get(conn, memory_id)
    row = rows.get_learned(conn, memory_id)
    if row is None or memory.project_id != project.id:
        raise NotFound(f"no insight or rule {memory_id} in this project", id=memory_id)
    if kind is not None and row["kind"] != kind:
        raise Conflict(f"{memory_id} is a {row['kind']}, not a {kind}", id=memory_id)
    return row


def _save(
    conn: Connection, project: Project, row: dict, op: str, actor: str, **detail: Any
) -> dict:
    row["updated_at"] = clock.now()
    rows.put_learned(conn, row)
    log_event(conn, op, project_id=project.id, memory_id=row["memory_id"], actor=actor, **detail)
    return row


def vote(
    conn: Connection, project: Project, memory_id: str, up: bool, *, actor: str = "user"
) -> dict[str, Any]:
    """One vote on an insight; promoted at PROMOTE, archived at zero."""
    from waymark.memories import store

    with db.write(conn):
        row = _row(conn, project, memory_id, "insight")
        if row["status"] != "active":
            raise Conflict(f"insight {row['memory_id']} is {row['status']}", id=row["memory_id"])
        step = 1 if up else -1
        row["importance"] = max(0, row["importance"] + step)
        row["confidence"] = max(0, row["confidence"] + step)
        if min(row["importance"], row["confidence"]) == 0:
            row["status"] = "retired"
            store.archive_in(
                conn,
                project,
                row["memory_id"],
                actor=actor,
                reason="insight voted down to zero",
                team=True,  # a vote is a say-so on the insight, the team's or not
            )
        elif min(row["importance"], row["confidence"]) >= PROMOTE:
            _make_rule(conn, row)
        return _save(conn, project, row, "vote", actor, up=up)


def promote(conn: Connection, project: Project, memory_id: str, *, actor: str = "user") -> dict:
    """A person's promotion of an insight to a rule."""
    with db.write(conn):
        row = _row(conn, project, memory_id, "insight")
        _make_rule(conn, row)
        return _save(conn, project, row, "promote", actor)


def _make_rule(conn: Connection, row: dict) -> None:
    row["kind"], row["status"] = "rule", "active"
    rows.set_pinned(conn, row["memory_id"], True, clock.now())


def rate(
    conn: Connection, project: Project, memory_id: str, helped: bool, *, actor: str = "user"
) -> dict[str, Any]:
    """A rule fired; `helped` when it did. Suspends one that rarely helps."""
    with db.write(conn):
        return rate_in(conn, project, memory_id, helped, actor=actor)


def rate_in(
    conn: Connection, project: Project, memory_id: str, helped: bool, *, actor: str = "user"
) -> dict[str, Any]:
    row = _row(conn, project, memory_id, "rule")
    if row["status"] != "active":
        raise Conflict(f"rule {row['memory_id']} is {row['status']}", id=row["memory_id"])
    row["fires"] += 1
    row["successes"] += int(helped)
    if row["fires"] >= SUSPEND_FIRES and row["successes"] / row["fires"] < SUSPEND_RATE:
        row["status"] = "suspended"
        rows.set_pinned(conn, row["memory_id"], False, clock.now())
    return _save(conn, project, row, "rate", actor, helped=helped)


def retire(conn: Connection, project: Project, memory_id: str, *, actor: str = "user") -> dict:
    """Stop using a rule (or insight); its row and counts stay."""
    with db.write(conn):
        row = _row(conn, project, memory_id, None)
        if row["status"] == "retired":
            raise Conflict(f"{row['memory_id']} is already retired", id=row["memory_id"])
        row["status"] = "retired"
        rows.set_pinned(conn, row["memory_id"], False, clock.now())
        return _save(conn, project, row, "retire", actor)


def listed(conn: Connection, project: Project, kind: str) -> list[dict[str, Any]]:
    if kind not in ("insight", "rule"):
        raise InvalidArgument("list insights or rules")
    out = rows.list_learned(conn, project.id, kind)
    for r in out:
        r["success_rate"] = round(r["successes"] / r["fires"], 2) if r["fires"] else None
    return out


def note_approved(conn: Connection, memory_id: str) -> None:
    """Inside the caller's transaction: an approved insight candidate's memory is an insight."""
    rows.add_learned(conn, memory_id, "insight", clock.now())
