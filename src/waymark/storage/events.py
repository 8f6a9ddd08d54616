"""The audit trail: one `events` row per operation, ids and metadata only."""

from __future__ import annotations

from waymark.base import clock
from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import apsw


def log_event(
    conn: apsw.Connection,
    op: str,
    *,
    project_id: str | None,
    memory_id: str | None = None,
    actor: str | None = None,
    session_id: str | None = None,
    **detail: Any,
) -> None:
    """Append to the audit trail. Ids and metadata only: never a payload erase must reach."""
    conn.execute(
        "INSERT INTO events (at, op, project_id, memory_id, actor, session_id, detail)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            clock.now(),
            op,
            project_id,
            memory_id,
            actor,
            session_id,
            json.dumps(detail, sort_keys=True),
        ),
    )


def count_use(conn: apsw.Connection, memory_ids: list[str], stamp: str) -> None:
    """Count a real use of each memory (put in front of the model, or opened), inside the
    caller's transaction. Retrieval alone never counts: ranking must not depend on reads."""
    for memory_id in dict.fromkeys(memory_ids):
        conn.execute(
            "INSERT INTO memory_use (memory_rowid, uses, last_used) SELECT rowid, 1, ?"
            " FROM memories WHERE id = ? ON CONFLICT (memory_rowid) DO UPDATE SET"
            " uses = uses + 1, last_used = excluded.last_used",
            (stamp, memory_id),
        )
