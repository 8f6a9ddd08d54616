"""Projects: which memory a directory or a name addresses.

A directory resolves to its repository root (see `locate`) and is bound to a generated id in
the database, so nothing is written into the user's repository. A `.waymark.toml` name, or a
`--project NAME` that is not a path, addresses a named project that clones and worktrees share.
"""

from __future__ import annotations

import os

from waymark.base import clock
from waymark.base.record import record
from waymark.errors import NotFound, ProjectError
from waymark.projects.locate import CONFIG_NAME, Location, locate
from waymark.storage import connection as db
from waymark.storage.projects import (
    identity_of,
    insert_named_project,
    insert_path_project,
    move_root,
    path_identities,
    project_by_root,
    project_id_by_name,
    project_name,
    put_alias,
    rename_project,
    set_identity,
    set_notice,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.storage.connection import Connection

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
NAME_CHARS = frozenset(_LETTERS + _LETTERS.upper() + "0123456789._-")


def valid_name(name: str) -> bool:
    """1-100 of A-Z a-z 0-9 . _ - (checked without `re`: hooks load this module)."""
    return 0 < len(name) <= 100 and all(c in NAME_CHARS for c in name)


_ProjectFields = record("_ProjectFields", "id kind name root how tree git", defaults=(None, False))


class Project(_ProjectFields):
    """A project: `kind` "path" or "named"; `root` None for a named project used without a
    directory; `how` says in a sentence how it was chosen; `tree` is the working tree in use
    (a worktree's own top); `git` whether that directory is in a git repository (a named
    project's too). A namedtuple: hooks cannot afford `dataclasses`."""

    __slots__ = ()

    @property
    def files(self) -> str | None:
        """Where the project's files are for this caller: scope targets resolve here."""
        return self.tree or self.root

    def to_dict(self) -> dict[str, str | None]:
        return {
            "id": self.id,
            "kind": self.kind,
            "name": self.name,
            "root": self.root,
            "tree": self.files,
            "how": self.how,
        }


def resolve(
    conn: Connection,
    spec: str | None = None,
    *,
    cwd: str | None = None,
    create: bool = True,
    bind: bool = True,
) -> Project:
    """The project for `spec` (a path or a name), else for the working directory.

    A path project is bound on first sight (unless `bind` is False: then an unbound one is
    NotFound, which is how hooks stay write-free in projects nobody enabled); a named project
    is created only when `create`, so a typo in a read leaves no empty project behind.
    """
    if spec is not None and not _looks_like_path(spec, cwd):
        if not valid_name(spec):
            raise ProjectError(
                f"{spec!r} is neither an existing directory nor a valid project name "
                "(1-100 of A-Z a-z 0-9 . _ -)",
                project=spec,
            )
        return _named(conn, spec, None, f"named project {spec!r} (--project)", create)
    path = os.path.join(cwd or os.getcwd(), os.path.expanduser(spec or "."))
    loc = locate(path)
    if loc.name:
        how = f"named {loc.name!r} in {loc.config_path}"
        found = _named(conn, loc.name, loc.root, how, create and bind)
        _keep_aliases(conn, found.id, loc)
        return found._replace(tree=loc.top, git=loc.how != "directory")
    return _bound(conn, loc, bind)


def _keep_aliases(conn: Connection, project_id: str, loc: Location) -> None:
    """The directory a .waymark.toml names a project from stays an alias of it (a branch or
    checkout without the file, or the file removed, still finds its memories), and the
    project learns its repository's identity once (a clone elsewhere is then recognised).
    One indexed read when nothing changed."""
    if db.read_only(conn):
        return
    here = project_by_root(conn, loc.root)
    if here is not None and here[0] == project_id and here[2] is not None:
        return
    from waymark.projects import identity as ident

    known = ident.of(loc) if here is None or here[2] is None else None
    with db.write(conn):
        here = project_by_root(conn, loc.root)
        stored = identity_of(conn, project_id)
        if here is None or (here[1] == "named" and here[0] != project_id):
            put_alias(conn, "root", loc.root, project_id, clock.now())
            if known and stored and _unrelated(known, stored):
                _say_shared_name(conn, project_id, loc, stored)
        if known and not stored and (here is None or here[0] == project_id):
            set_identity(conn, project_id, known)


def _unrelated(one: str, other: str) -> bool:
    """Two git repositories that share no first commit: not clones of one another."""
    if not (one.startswith("git:") and other.startswith("git:")):
        return False
    return not set(one[4:].split(",")) & set(other[4:].split(","))


def _say_shared_name(conn: Connection, project_id: str, loc: Location, stored: str) -> None:
    """Another repository took a project's name: they now share its memories. Said to the
    next session (the packet's notice) and in the audit log, never silently."""
    from waymark.storage.events import log_event

    first = stored[4:].split(",")[0][:12]
    set_notice(
        conn,
        project_id,
        f"{loc.root} is named {loc.name!r} too, but is another repository (not a clone of "
        f"the one with first commit {first[:8]}): the two share these memories. If they are "
        "different projects, give one of them another name in its .waymark.toml.",
    )
    log_event(conn, "project.name_shared", project_id=project_id, root=loc.root,
              name=loc.name, first_commit=first)  # fmt: skip


def _looks_like_path(spec: str, cwd: str | None) -> bool:
    if spec in (".", "..") or spec.startswith(("~", "./", "../")) or os.sep in spec or "/" in spec:
        return True
    return os.path.isdir(os.path.join(cwd or os.getcwd(), spec))


def _describe(loc: Location) -> str:
    if loc.how == "git-worktree":
        return f"git worktree of the repository at {loc.root}"
    if loc.how == "git":
        return f"git repository at {loc.root}"
    return f"directory {loc.root} (not in a git repository)"


def _bound(conn: Connection, loc: Location, bind: bool = True) -> Project:
    found = project_by_root(conn, loc.root)
    project_id: str | None = None
    if found is not None:
        project_id, _, identity = found
        # Learned once; "" (a repository with no commit yet) is asked again only by writes.
        if (identity is None or (identity == "" and bind)) and not db.read_only(conn):
            _learn_identity(conn, project_id, loc)
        if found[1] == "named":
            return _alias_project(conn, project_id, loc)
    else:
        project_id = _moved_here(conn, loc)
    if project_id is None and not bind:
        raise NotFound(f"{loc.root} is not a Waymark project yet", root=loc.root)
    if project_id is None:
        from waymark.projects import identity as ident

        known = ident.of(loc)
        with db.write(conn):
            found = project_by_root(conn, loc.root)
            project_id = found[0] if found else None
            if project_id is None:
                project_id = clock.new_id()
                insert_path_project(conn, project_id, loc.root, clock.now())
                if known:
                    set_identity(conn, project_id, known)
    return Project(
        id=project_id,
        kind="path",
        name=None,
        root=loc.root,
        how=_describe(loc),
        tree=loc.top,
        git=loc.how != "directory",
    )


def _alias_project(conn: Connection, project_id: str, loc: Location) -> Project:
    """The named project whose .waymark.toml named it from this directory once (no file
    names it here now: a branch without it, or the file removed)."""
    name = project_name(conn, project_id) or project_id
    how = (
        f"{_describe(loc)}, whose memories are under the named project {name!r} (no "
        f'{CONFIG_NAME} names it here: add `name = "{name}"` to say so)'
    )
    return Project(
        id=project_id,
        kind="named",
        name=name,
        root=loc.root,
        how=how,
        tree=loc.top,
        git=loc.how != "directory",
    )


def _learn_identity(conn: Connection, project_id: str, loc: Location) -> None:
    """Record, once, what will recognise this repository after a move."""
    from waymark.projects import identity as ident

    with db.write(conn):
        set_identity(conn, project_id, ident.of(loc) or "")


def _moved_here(conn: Connection, loc: Location) -> str | None:
    """The project of a repository that moved (or was renamed) to `loc.root`: the one path
    project with its identity whose old root is gone. It is re-bound here with a notice for
    the next packet. A clone (the old root still exists) is not: `waymark project rebind`.

    Costs a hook nothing where no project's root is missing (one query and a few stats);
    only then does it ask git for this repository's identity."""
    gone = [
        (pid, old, known) for pid, old, known in path_identities(conn) if not os.path.isdir(old)
    ]
    if not gone:
        return None
    from waymark.projects import identity as ident

    here = ident.of(loc)
    matches = [(pid, old) for pid, old, known in gone if known == here] if here else []
    if len(matches) != 1:
        return None  # none, or several candidates: never guess
    project_id, old = matches[0]
    if db.read_only(conn):
        return project_id  # read what is there; the binding is written when it can be
    from waymark.storage.events import log_event

    with db.write(conn):
        if project_by_root(conn, loc.root) is None:
            note = f"This repository moved from {old} to {loc.root}; its memories came along."
            move_root(conn, project_id, loc.root, note)
            log_event(conn, "project.moved", project_id=project_id, **{"from": old, "to": loc.root})
    return project_id


def _named(conn: Connection, name: str, root: str | None, how: str, create: bool) -> Project:
    project_id = project_id_by_name(conn, name)
    if project_id is None and root is not None:
        project_id = _now_named(conn, name, root)
    if project_id is None:
        if not create:
            raise NotFound(
                f"no project named {name!r} yet; it is created by its first write",
                project=name,
            )
        with db.write(conn):
            project_id = project_id_by_name(conn, name)
            if project_id is None:
                project_id = clock.new_id()
                insert_named_project(conn, project_id, name, clock.now())
    return Project(id=project_id, kind="named", name=name, root=root, how=how)


def _now_named(conn: Connection, name: str, root: str) -> str | None:
    """A `.waymark.toml` added to a directory that already had a project: that project
    takes the name, with its memories, instead of a new empty one."""
    found = project_by_root(conn, root)
    if found is None or found[1] != "path" or db.read_only(conn):
        return found[0] if found and found[1] == "path" else None
    from waymark.storage.events import log_event

    with db.write(conn):
        if project_id_by_name(conn, name) is not None:
            return project_id_by_name(conn, name)
        rename_project(
            conn,
            found[0],
            name,
            f"This project is now named {name!r} (by .waymark.toml); its memories came along.",
        )
        put_alias(conn, "root", root, found[0], clock.now())
        log_event(conn, "project.named", project_id=found[0], name=name, root=root)
    return found[0]
