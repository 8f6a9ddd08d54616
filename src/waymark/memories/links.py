"""Typed links between memories: the graph that recall expands one hop."""

from __future__ import annotations

from waymark.base import clock
from waymark.errors import InvalidArgument, NotFound
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage.events import log_event
from waymark.storage.links import insert_link, links_of
from waymark.storage.memories import owner_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.storage.connection import Connection

KINDS = ("related", "causes", "solves", "contradicts", "depends_on", "supersedes")
__all__ = ["KINDS", "links_of", "relate"]


def relate(
    conn: Connection,
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
    from waymark.memories.store import full_id

    src, dst = full_id(conn, src), full_id(conn, dst)
    if src == dst:
        raise InvalidArgument("a memory cannot be linked to itself")
    with db.write(conn):
        for memory_id in (src, dst):
            found, owner = owner_of(conn, memory_id)
            if not found or owner not in (project.id, None):
                raise NotFound(f"no memory {memory_id!r} in this project", id=memory_id)
        created = insert_link(conn, src, dst, kind, clock.now(), actor)
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
