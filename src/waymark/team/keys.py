"""How a project and this machine are known on a team store: the project's key every machine
shares, this machine's row for it (`team_sync`), and this machine's id there."""

from __future__ import annotations

import hashlib

from waymark.base import clock
from waymark.errors import InvalidArgument
from waymark.storage import connection as db
from waymark.storage import teamsync
from waymark.team import link

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection


def project_key(conn: Connection, project: Project) -> str:
    """How every machine knows this project in the team store; InvalidArgument when it is
    not shared (`[team] share = true` in its `.waymark.toml`)."""
    from waymark.projects.sharing import is_shared

    if not is_shared(project.files):
        raise InvalidArgument(
            "this project is not shared: add `[team]` with `share = true` to its "
            ".waymark.toml (its memories stay on this machine until then)"
        )
    if project.name:
        return f"name:{project.name}"
    from waymark.storage.projects import project_row

    identity = (project_row(conn, project.id) or {}).get("identity")
    if not identity:
        raise InvalidArgument(
            'this project has no name and no repository identity yet: add `name = "..."` '
            "to its .waymark.toml so every machine finds the same team project"
        )
    return str(identity)


def slot(conninfo: str, project: Project) -> str:
    """This project's row in `team_sync` for the store `conninfo` names (password aside)."""
    store = hashlib.sha256(link.split_password(conninfo)[0].encode()).hexdigest()[:16]
    return f"{store}/{project.id}"


def machine(conn: Connection, conninfo: str, project: Project) -> str:
    """This machine's id for the project on the store `conninfo` names (made on first use)."""
    found = slot(conninfo, project)
    state = teamsync.sync_state(conn, found)
    if state is None:
        with db.write(conn):
            teamsync.start_sync(conn, found, clock.new_id())
        state = teamsync.sync_state(conn, found)
    assert state is not None
    return str(state[0])
