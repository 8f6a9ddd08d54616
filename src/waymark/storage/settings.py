"""SQL for the `settings` table: JSON text by dotted key."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.storage.connection import Connection


def get_setting(conn: Connection, key: str) -> str | None:
    """The stored JSON text of `key`, or None when it was never set."""
    row = conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def put_setting(conn: Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO"
        " UPDATE SET value = excluded.value",
        (key, value),
    )


def all_settings(conn: Connection) -> dict[str, str]:
    return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM settings")}
