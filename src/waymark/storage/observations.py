"""Rows of `observations`: immutable implementation evidence attached to a memory."""

from __future__ import annotations

from waymark.base import jsonlite as json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from waymark.storage.connection import Connection

COLUMNS = (
    "id", "memory_id", "project_id", "status", "links", "note", "actor", "session_id",
    "created_at",
)  # fmt: skip


def _row(values: Sequence[Any]) -> dict[str, Any]:
    row = dict(zip(COLUMNS, values, strict=True))
    row["links"] = json.loads(row["links"])
    return row


def add_observation(conn: Connection, row: dict[str, Any]) -> None:
    values = [json.dumps(row[c]) if c == "links" else row[c] for c in COLUMNS]
    conn.execute(
        f"INSERT INTO observations ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
        values,
    )


def observations_of(
    conn: Connection, memory_id: str, project_id: str, limit: int, offset: int
) -> list[dict[str, Any]]:
    """The memory's observations made in the project, newest first (in the order they were
    written, never by a clock that ties)."""
    rows = conn.execute(
        f"SELECT {', '.join(COLUMNS)} FROM observations WHERE memory_id = ? AND project_id = ?"
        " ORDER BY seq DESC LIMIT ? OFFSET ?",
        (memory_id, project_id, limit, offset),
    ).fetchall()
    return [_row(r) for r in rows]


def count_observations(conn: Connection, memory_id: str, project_id: str) -> int:
    row: Any = conn.execute(
        "SELECT count(*) FROM observations WHERE memory_id = ? AND project_id = ?",
        (memory_id, project_id),
    ).fetchone()
    return int(row[0])


def latest_observations(
    conn: Connection, memory_ids: Sequence[str], project_id: str
) -> dict[str, dict[str, Any]]:
    """memory id -> its newest observation in the project, for those that have one."""
    if not memory_ids:
        return {}
    rows = conn.execute(
        f"SELECT {', '.join('o.' + c for c in COLUMNS)} FROM observations o"
        " WHERE o.project_id = ? AND o.seq = (SELECT max(seq) FROM observations i"
        " WHERE i.memory_id = o.memory_id AND i.project_id = o.project_id)"
        " AND o.memory_id IN (SELECT value FROM json_each(?))",
        (project_id, json.dumps(list(memory_ids))),
    ).fetchall()
    return {str(r[1]): _row(r) for r in rows}


def reported_built(conn: Connection, project_id: str) -> set[str]:
    """Ids of the memories whose latest observation in the project reports them implemented
    or passing (what a retention sweep keeps)."""
    rows = conn.execute(
        "SELECT o.memory_id FROM observations o WHERE o.project_id = ?"
        " AND o.status IN ('REPORTED_IMPLEMENTED', 'REPORTED_PASS')"
        " AND o.seq = (SELECT max(seq) FROM observations i"
        " WHERE i.memory_id = o.memory_id AND i.project_id = o.project_id)",
        (project_id,),
    ).fetchall()
    return {str(r[0]) for r in rows}


def drop_observations(conn: Connection, memory_id: str) -> int:
    """Delete a memory's observations (its erase takes their notes and links with it)."""
    conn.execute("DELETE FROM observations WHERE memory_id = ?", (memory_id,))
    return int(conn.changes())
