"""Where hooks may capture: every git repository while the `capture.all_git_repos` setting
is on (the default), else only projects the user enabled; never where the user disabled it.
Everywhere else the hooks stay silent."""

from __future__ import annotations

from waymark.base import clock
from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage.projects import get_capture, put_capture
from waymark.storage.settings import get_setting

TYPE_CHECKING = False  # typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

    from waymark.storage.connection import Connection


def policy(conn: Connection, project: Project) -> dict[str, Any]:
    chosen = get_capture(conn, project.id)
    if chosen is not None:
        enabled, changed_at = chosen
        verb = "enabled" if enabled else "disabled"
        return {"enabled": enabled, "why": f"{verb} with `waymark {verb[:-1]}` ({changed_at[:10]})"}
    if all_git_repos(conn) and project.how.startswith("git"):
        return {"enabled": True, "why": "capture.all_git_repos is on and this is a git repository"}
    if project.how.startswith("git"):
        why = "capture is per project (capture.all_git_repos is off); run `waymark enable` here"
    else:
        why = "not a git repository; run `waymark enable` here to capture"
    return {"enabled": False, "why": why}


def all_git_repos(conn: Connection | None) -> bool:
    """The setting; on where no database exists yet (the default)."""
    from waymark.settings import DEFAULTS

    stored = get_setting(conn, "capture.all_git_repos") if conn is not None else None
    return bool(DEFAULTS["capture.all_git_repos"] if stored is None else json.loads(stored))


def set_enabled(conn: Connection, project: Project, enabled: bool) -> None:
    from waymark.storage.events import log_event

    with db.write(conn):
        put_capture(conn, project.id, enabled, clock.now())
        log_event(conn, "capture.enable" if enabled else "capture.disable", project_id=project.id)
