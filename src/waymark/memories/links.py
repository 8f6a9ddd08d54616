"""Typed links between memories: the graph that recall expands one hop."""

from __future__ import annotations

import apsw

from waymark.base import clock
from waymark.errors import InvalidArgument, NotFound
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage.events import log_event

KINDS = ("related", "causes", "solves", "contradicts", "depends_on", "supersedes")


def relate(
    conn: apsw.Connection,
    project: Project,
    src: str,
    dst: str,
    kind: str = "related",
    *,
    actor: str = "user",
) -> bool:
    """Link `src` -> `dst`; True when new, False when the link already existed."""
    if kind not in KINDS:
        raise InvalidArgument(f"unknown link kind {kind!r}; valid kinds: {', '.join(KINDS)}")
    if src == dst:
        raise InvalidArgument("a memory cannot be linked to itself")
    with db.write(conn):
        for memory_id in (src, dst):
            owner = conn.execute(
                "SELECT project_id FROM memories WHERE id = ?", (memory_id,)
            ).fetchone()
            if owner is None or owner[0] not in (project.id, None):
                raise NotFound(f"no memory {memory_id!r} in this project", id=memory_id)
        conn.execute(
            "INSERT OR IGNORE INTO links (src, dst, kind, created_at, actor) VALUES (?, ?, ?, ?, ?)",
            (src, dst, kind, clock.now(), actor),
        )
        created = conn.changes() == 1
        if created:
            log_event(
                conn,
                "relate",
                project_id=project.id,
                memory_id=src,
                actor=actor,
                dst=dst,
                kind=kind,
            )
    return created


def links_of(conn: apsw.Connection, memory_id: str) -> list[dict[str, str]]:
    return [
        {"src": s, "dst": d, "kind": k, "created_at": c}
        for s, d, k, c in conn.execute(
            "SELECT src, dst, kind, created_at FROM links WHERE src = ? OR dst = ?"
            " ORDER BY created_at, src, dst, kind",
            (memory_id, memory_id),
        )
    ]
