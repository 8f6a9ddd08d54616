"""Rows of insights and rules (`learned`), keyed by their memory's id."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.storage.connection import Connection

COLUMNS = (
    "memory_id", "kind", "importance", "confidence", "fires", "successes", "status", "updated_at",
)  # fmt: skip


def get_learned(conn: Connection, memory_id: str) -> dict[str, Any] | None:
    row = conn.execute(
        f"SELECT {', '.join(COLUMNS)} FROM learned WHERE memory_id = ?", (memory_id,)
    ).fetchone()
    return None if row is None else dict(zip(COLUMNS, row, strict=True))


def add_learned(conn: Connection, memory_id: str, kind: str, stamp: str) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO learned (memory_id, kind, updated_at) VALUES (?, ?, ?)",
        (memory_id, kind, stamp),
    )


def put_learned(conn: Connection, row: dict[str, Any]) -> None:
    conn.execute(
        "UPDATE learned SET kind = ?, importance = ?, confidence = ?, fires = ?, successes = ?,"
        " status = ?, updated_at = ? WHERE memory_id = ?",
        (
            row["kind"], row["importance"], row["confidence"], row["fires"], row["successes"],
            row["status"], row["updated_at"], row["memory_id"],
        ),
    )  # fmt: skip


def list_learned(conn: Connection, project_id: str, kind: str) -> list[dict[str, Any]]:
    """The project's insights or rules with their memory's title and status, newest first."""
    rows = conn.execute(
        f"SELECT {', '.join('l.' + c for c in COLUMNS)}, m.title, m.status FROM learned l"
        " JOIN memories m ON m.id = l.memory_id WHERE m.project_id = ? AND l.kind = ?"
        " ORDER BY l.updated_at DESC, l.memory_id DESC",
        (project_id, kind),
    ).fetchall()
    return [dict(zip((*COLUMNS, "title", "memory_status"), r, strict=True)) for r in rows]


def set_pinned(conn: Connection, memory_id: str, pinned: bool, stamp: str) -> None:
    conn.execute(
        "UPDATE memories SET pinned = ?, updated_at = ? WHERE id = ?",
        (int(pinned), stamp, memory_id),
    )
