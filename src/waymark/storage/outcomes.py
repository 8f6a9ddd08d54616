"""SQL for `outcomes`: what became of the change a memory or checkpoint led to (git)."""

from __future__ import annotations

TYPE_CHECKING = False  # the hooks read it: typing would cost them ~3 ms
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from waymark.storage.connection import Connection

KEYS = (
    "item_id", "project_id", "kind", "commits", "files", "state", "later", "reverted_by",
    "set_by", "checked_at",
)  # fmt: skip


def put(conn: Connection, row: dict[str, Any]) -> None:
    conn.execute(
        f"INSERT OR REPLACE INTO outcomes ({', '.join(KEYS)})"
        f" VALUES ({', '.join('?' * len(KEYS))})",
        tuple(row[k] for k in KEYS),
    )


def get(conn: Connection, item_id: str) -> dict[str, Any] | None:
    row = conn.execute(
        f"SELECT {', '.join(KEYS)} FROM outcomes WHERE item_id = ?", (item_id,)
    ).fetchone()
    return None if row is None else dict(zip(KEYS, row, strict=True))


def of_project(conn: Connection, project_id: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        f"SELECT {', '.join(KEYS)} FROM outcomes WHERE project_id = ? ORDER BY item_id",
        (project_id,),
    ).fetchall()
    return [dict(zip(KEYS, row, strict=True)) for row in rows]


def any_settled(conn: Connection, project_id: str) -> bool:
    """True when some item of the project held or was reverted (ranking reads them only
    then: one index probe for a project with none)."""
    return (
        conn.execute(
            "SELECT 1 FROM outcomes WHERE project_id = ? AND state IN ('held', 'reverted') LIMIT 1",
            (project_id,),
        ).fetchone()
        is not None
    )


def states(conn: Connection, rowids: Sequence[int]) -> dict[int, tuple[str, str | None, int]]:
    """memory rowid -> (state, reverted_by, later) for those held or reverted."""
    if not rowids:
        return {}
    marks = ", ".join("?" * len(rowids))
    rows = conn.execute(
        "SELECT m.rowid, o.state, o.reverted_by, o.later FROM memories m"
        " JOIN outcomes o ON o.item_id = m.id"
        f" WHERE m.rowid IN ({marks}) AND o.state IN ('held', 'reverted')",
        tuple(rowids),
    ).fetchall()
    return {int(str(r)): (str(s), None if b is None else str(b), int(str(n)))
            for r, s, b, n in rows}  # fmt: skip


def reverted_among(conn: Connection, project_id: str, item_ids: Sequence[str]) -> set[str]:
    """Those of `item_ids` whose change was reverted (one index probe when none is)."""
    if not item_ids or not any_settled(conn, project_id):
        return set()
    marks = ", ".join("?" * len(item_ids))
    return {
        str(r[0])
        for r in conn.execute(
            f"SELECT item_id FROM outcomes WHERE item_id IN ({marks}) AND state = 'reverted'",
            tuple(item_ids),
        )
    }
