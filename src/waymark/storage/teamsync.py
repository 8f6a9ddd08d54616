"""SQL for `team_sync`: where this replica stands with each team store (m028)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.storage.connection import Connection


def sync_state(conn: Connection, store: str) -> tuple[str, int, int, str | None] | None:
    """(machine, pushed_seq, pulled_seq, last_sync) with `store`, or None before the first."""
    row = conn.execute(
        "SELECT machine, pushed_seq, pulled_seq, last_sync FROM team_sync WHERE store = ?",
        (store,),
    ).fetchone()
    return None if row is None else (str(row[0]), int(row[1]), int(row[2]), row[3])


def start_sync(conn: Connection, store: str, machine: str) -> None:
    conn.execute("INSERT OR IGNORE INTO team_sync (store, machine) VALUES (?, ?)", (store, machine))


def advance(conn: Connection, store: str, cursor: str, seq: int, stamp: str) -> None:
    """Move the `pushed` or `pulled` cursor with `store` forward to `seq` (never back)."""
    column = {"pushed": "pushed_seq", "pulled": "pulled_seq"}[cursor]
    conn.execute(
        f"UPDATE team_sync SET {column} = max({column}, ?), last_sync = ? WHERE store = ?",
        (seq, stamp, store),
    )
