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
__all__ = ["KINDS", "checked", "links_of", "relate"]


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


def checked(conn: Connection, project: Project, given: object) -> list[tuple[str, str]]:
    """`given` (`[{id, kind?}]`, kind "related" unless said) as (full id, kind) pairs, every
    one a memory of `project` and a known kind: checked before anything is written, so a
    write that also links is refused whole rather than saved with its links half made."""
    from waymark.memories.store import full_id

    if not isinstance(given, list) or not all(isinstance(g, dict) for g in given):
        raise InvalidArgument("links is a list of {id, kind?}", fields=["links"])
    pairs = []
    for link in given:
        unknown = sorted(set(link) - {"id", "kind"})
        if unknown or not isinstance(link.get("id"), str):
            raise InvalidArgument("each link is {id, kind?}", fields=["links"])
        kind = link.get("kind") or "related"
        if kind not in KINDS:
            raise InvalidArgument(f"unknown link kind {kind!r}; valid kinds: {', '.join(KINDS)}")
        dst = full_id(conn, link["id"])
        found, owner = owner_of(conn, dst)
        if not found or owner not in (project.id, None):
            raise NotFound(f"no memory {link['id']!r} in this project", id=link["id"])
        pairs.append((dst, kind))
    return pairs
