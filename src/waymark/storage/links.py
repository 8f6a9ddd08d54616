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


def links_among(conn: Connection, memory_ids: list[str]) -> list[dict[str, str]]:
    """Every link from or to any of `memory_ids` (one statement for a neighbourhood)."""
    import json

    wanted = json.dumps(memory_ids)
    return [
        {"src": s, "dst": d, "kind": k, "created_at": c}
        for s, d, k, c in conn.execute(
            "SELECT src, dst, kind, created_at FROM links"
            " WHERE src IN (SELECT value FROM json_each(?1))"
            " UNION SELECT src, dst, kind, created_at FROM links"
            " WHERE dst IN (SELECT value FROM json_each(?1))"
            " ORDER BY 4, 1, 2, 3",
            (wanted,),
        )
    ]


def most_linked(conn: Connection, project_id: str, limit: int) -> list[tuple[str, int]]:
    """(memory id, links from or to it) of the project's active memories with the most
    links, most first: where a look at the graph may start."""
    return [
        (str(i), int(n))
        for i, n in conn.execute(
            "SELECT m.id, count(*) AS n FROM (SELECT src AS id FROM links UNION ALL"
            " SELECT dst FROM links) l JOIN memories m ON m.id = l.id"
            " WHERE m.project_id = ? AND m.status = 'active'"
            " GROUP BY m.id ORDER BY n DESC, m.id DESC LIMIT ?",
            (project_id, limit),
        )
    ]
