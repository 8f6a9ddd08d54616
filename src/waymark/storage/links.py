"""SQL for `links`: typed edges between memories."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.storage.connection import Connection


def insert_link(
    conn: Connection, src: str, dst: str, kind: str, stamp: str, actor: str | None
) -> bool:
    """True when the link is new; False when it already existed."""
    conn.execute(
        "INSERT OR IGNORE INTO links (src, dst, kind, created_at, actor) VALUES (?, ?, ?, ?, ?)",
        (src, dst, kind, stamp, actor),
    )
    return conn.changes() == 1


def links_of(conn: Connection, memory_id: str) -> list[dict[str, str]]:
    """Every link from or to `memory_id`, oldest first."""
    return [
        {"src": s, "dst": d, "kind": k, "created_at": c}
        for s, d, k, c in conn.execute(
            "SELECT src, dst, kind, created_at FROM links WHERE src = ? OR dst = ?"
            " ORDER BY created_at, src, dst, kind",
            (memory_id, memory_id),
        )
    ]
