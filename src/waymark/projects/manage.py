"""`waymark project list | rebind | remove`: the projects a person can see and fix by hand.

A path project has one directory. A moved repository finds its project by itself (see
`resolve`); a clone at another path, or a directory whose memories were recorded under
another project, is bound to it here. Removing a project takes a backup first.
"""

from __future__ import annotations

import os

from waymark import home
from waymark.base import clock
from waymark.errors import Conflict, InvalidArgument, NotFound
from waymark.projects import identity
from waymark.projects.locate import locate
from waymark.storage import backup
from waymark.storage import connection as db
from waymark.storage.events import log_event
from waymark.storage.projects import (
    delete_project,
    drop_alias,
    move_root,
    named_projects_with,
    path_projects_with,
    project_by_root,
    project_id_by_name,
    project_row,
    project_summaries,
    put_alias,
    rename_project,
    set_identity,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection


def summaries(conn: Connection, *, empty_folders: bool = False) -> list[dict[str, Any]]:
    """Every project: id, kind, name, root (and whether it still exists), counts. A plain
    folder (not a git repository) that holds nothing, where a client or a command once ran,
    is left out unless `empty_folders`: it is no project anyone made."""
    out = []
    for row in project_summaries(conn):
        row["missing"] = bool(row["root"]) and not os.path.isdir(row["root"])
        if empty_folders or not _empty_folder(row):
            out.append(row)
    return out


def every_project(conn: Connection) -> list[Project]:
    """Every project that holds memories, as a Project (nothing bound, nothing created)."""
    from waymark.projects.resolve import resolve

    out = []
    for row in summaries(conn):
        if row["memories"]:
            spec = row["name"] if row["kind"] == "name" else row["root"]
            out.append(resolve(conn, spec, create=False, bind=False))
    return out


def _empty_folder(row: dict[str, Any]) -> bool:
    """A path project of a folder outside git with no memory and no checkpoint."""
    if row["kind"] != "path" or row["memories"] or row["checkpoints"] or not row["root"]:
        return False
    return not os.path.exists(os.path.join(row["root"], ".git"))


def find(conn: Connection, spec: str) -> dict[str, Any]:
    """The project named `spec`, or whose id is `spec` or starts with it (any case)."""
    rows = project_summaries(conn)
    exact = [r for r in rows if r["name"] == spec or r["id"] == spec.upper()]
    if exact:
        return exact[0]
    prefix = [r for r in rows if r["id"].startswith(spec.upper())] if len(spec) >= 4 else []
    if len(prefix) == 1:
        return prefix[0]
    if len(prefix) > 1:
        raise InvalidArgument(
            f"{spec!r} starts {len(prefix)} project ids: {', '.join(r['id'] for r in prefix)}; "
            "give more of it",
            candidates=[r["id"] for r in prefix],
        )
    raise NotFound(
        f"no project with the id or name {spec!r} (see `waymark project list`)", project=spec
    )


def unbound(conn: Connection, directory: str) -> dict[str, Any]:
    """What is known about a directory that is no project yet: its root, and the projects of
    the same repository elsewhere (a clone), which `rebind` can bring here."""
    loc = locate(directory)
    known = identity.of(loc)
    same = []
    for project_id, root in path_projects_with(conn, known) if known else []:
        row = next(r for r in project_summaries(conn) if r["id"] == project_id)
        if row["memories"] or row["checkpoints"]:
            same.append({"id": project_id, "root": root, "memories": row["memories"]})
    named = []
    for project_id, name in named_projects_with(conn, known) if known else []:
        row = next(r for r in project_summaries(conn) if r["id"] == project_id)
        named.append({"id": project_id, "name": name, "memories": row["memories"]})
    return {"root": loc.root, "bound": False, "same_repository": same, "named": named}


def rename(conn: Connection, spec: str, new: str) -> dict[str, Any]:
    """Give project `spec` the name `new`. A named project's old name stays an alias (a
    .waymark.toml still naming it finds the project); a path project becomes named, its
    directory an alias. A project already called `new` must be empty (it is deleted)."""
    from waymark.projects.resolve import valid_name

    if not valid_name(new):
        raise InvalidArgument(
            f"{new!r} is not a valid project name (1-100 of A-Z a-z 0-9 . _ -)", name=new
        )
    target = find(conn, spec)
    holder = project_id_by_name(conn, new)
    if holder == target["id"] and target["name"] == new:
        return {"project": target["id"], "name": new, "previous": target["name"], "changed": False}
    dropped = None
    if holder is not None and holder != target["id"]:
        counts = next(r for r in project_summaries(conn) if r["id"] == holder)
        if counts["memories"] or counts["checkpoints"]:
            raise Conflict(
                f"the name {new!r} is project {holder}, with {counts['memories']} memories and "
                f"{counts['checkpoints']} checkpoints; pick another name or remove it first "
                f"(`waymark project remove {holder} --yes`)",
                project=holder,
            )
        dropped = holder
    previous = target["name"] or target["root"]
    with db.write(conn):
        if dropped:
            delete_project(conn, dropped)
        stamp = clock.now()
        if target["name"]:
            put_alias(conn, "name", target["name"], target["id"], stamp)
        if target["root"]:
            put_alias(conn, "root", target["root"], target["id"], stamp)
        drop_alias(conn, "name", new)
        rename_project(conn, target["id"], new, f"This project is now named {new!r}.")
        log_event(conn, "project.rename", project_id=target["id"], **{"from": previous, "to": new})
    return {
        "project": target["id"],
        "name": new,
        "previous": previous,
        "changed": True,
        "dropped_empty_project": dropped,
        "hint": f'a .waymark.toml naming it says `name = "{new}"` now (the old name still works)',
    }


def rebind(conn: Connection, directory: str, spec: str) -> dict[str, Any]:
    """Bind `directory`'s root to the existing path project `spec`; the project's old root
    is no longer bound. A project already bound here must be empty (it is deleted)."""
    target = find(conn, spec)
    if target["kind"] != "path":
        raise InvalidArgument(
            f"{spec!r} is a named project: a directory joins it by a .waymark.toml with "
            f'`name = "{target["name"]}"`, not by rebind',
            project=target["id"],
        )
    loc = locate(directory)
    old = target["root"]
    if old == loc.root:
        return {"project": target["id"], "root": loc.root, "previous_root": old, "changed": False}
    here = project_by_root(conn, loc.root)
    dropped = None
    if here is not None:
        current = project_row(conn, here[0])
        counts = next(r for r in project_summaries(conn) if r["id"] == here[0])
        if counts["memories"] or counts["checkpoints"]:
            raise Conflict(
                f"{loc.root} is already project {here[0]}, with {counts['memories']} memories "
                f"and {counts['checkpoints']} checkpoints; remove it first "
                f"(`waymark project remove {here[0]} --yes`, which backs up the database)",
                project=here[0],
            )
        dropped = current["id"] if current else None
    known = identity.of(loc)
    with db.write(conn):
        if dropped:
            delete_project(conn, dropped)
        move_root(
            conn,
            target["id"],
            loc.root,
            f"This directory ({loc.root}) was bound to this project by hand; it was at {old}.",
        )
        if known:
            set_identity(conn, target["id"], known)
        log_event(conn, "project.rebind", project_id=target["id"], **{"from": old, "to": loc.root})
    return {
        "project": target["id"],
        "root": loc.root,
        "previous_root": old,
        "changed": True,
        "dropped_empty_project": dropped,
    }


def remove(conn: Connection, spec: str) -> dict[str, Any]:
    """Delete a project and everything recorded under it, after a backup of the database."""
    target = find(conn, spec)
    saved = backup.backup()
    with db.write(conn):
        counts = delete_project(conn, target["id"])
        log_event(conn, "project.remove", project_id=None, removed=target["id"], at=clock.now())
    before, after = db.compact(conn, home.db_path())  # the deleted rows' space back to the disk
    return {
        "project": target, "backup": saved.path, "deleted": counts,
        "bytes_before": before, "bytes_after": after,
    }  # fmt: skip
