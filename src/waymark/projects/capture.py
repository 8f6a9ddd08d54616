"""Where hooks may capture: only projects the user enabled, or every git repository when the
`capture.all_git_repos` setting is on. Everywhere else the hooks stay silent."""

from __future__ import annotations

import apsw

from waymark.base import clock
from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.projects.resolve import Project
from waymark.storage import connection as db

TYPE_CHECKING = False  # typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any


def policy(conn: apsw.Connection, project: Project) -> dict[str, Any]:
    row = conn.execute(
        "SELECT enabled, changed_at FROM project_capture WHERE project_id = ?", (project.id,)
    ).fetchone()
    if row is not None:
        verb = "enabled" if row[0] else "disabled"
        return {
            "enabled": bool(row[0]),
            "why": f"{verb} with `waymark {verb[:-1]}` ({row[1][:10]})",
        }
    if all_git_repos(conn) and project.how.startswith("git"):
        return {"enabled": True, "why": "capture.all_git_repos is on and this is a git repository"}
    return {"enabled": False, "why": "not enabled; run `waymark enable` in this project"}


def all_git_repos(conn: apsw.Connection) -> bool:
    row = conn.execute("SELECT value FROM settings WHERE key = 'capture.all_git_repos'").fetchone()
    return bool(row and json.loads(row[0]))


def set_enabled(conn: apsw.Connection, project: Project, enabled: bool) -> None:
    with db.write(conn):
        conn.execute(
            "INSERT INTO project_capture (project_id, enabled, changed_at) VALUES (?, ?, ?)"
            " ON CONFLICT (project_id) DO UPDATE SET enabled = excluded.enabled,"
            " changed_at = excluded.changed_at",
            (project.id, int(enabled), clock.now()),
        )
