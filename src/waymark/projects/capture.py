"""Where hooks may capture: every git repository while the `capture.all_git_repos` setting
is on (the default), else only projects the user enabled; never where the user disabled it.
A project or a single session can also be `confirm` (the hooks capture; the agent's own
writes go to the review queue), `read-only` (the hooks inject, never record; the agent's
tools read, never write) or `off`. Everywhere else the hooks stay silent."""

from __future__ import annotations

from waymark.base import clock, markers
from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage.projects import get_capture, put_capture
from waymark.storage.settings import get_setting

TYPE_CHECKING = False  # typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

    from waymark.storage.connection import Connection


MODES = ("on", "confirm", "read-only", "off")


def policy(conn: Connection, project: Project, session_id: str | None = None) -> dict[str, Any]:
    """Whether hooks speak here (`enabled`), whether they record (`records`), the `mode`
    (on, read-only, off) and why. A session's own mode wins over the project's; a turn whose
    prompt said `#no-capture` is read-only, whatever records otherwise."""
    chosen = _policy(conn, project, session_id)
    if chosen["records"] and session_id and markers.turn_quiet(session_id):
        return _mode("read-only", "this turn's prompt said #no-capture")
    return chosen


def _policy(conn: Connection, project: Project, session_id: str | None) -> dict[str, Any]:
    session_mode = _session_mode(conn, session_id)
    if session_mode is not None:
        return _mode(session_mode, "this session was switched to it (`waymark capture`)")
    chosen = get_capture(conn, project.id)
    if chosen is not None:
        mode, changed_at = chosen
        how = {"on": "`waymark enable`", "off": "`waymark disable`"}.get(
            mode, f"`waymark capture {mode}`"
        )
        return _mode(mode, f"set with {how} ({changed_at[:10]})")
    if all_git_repos(conn) and project.git:
        return _mode("on", "capture.all_git_repos is on and this is a git repository")
    if project.git:
        why = "capture is per project (capture.all_git_repos is off); run `waymark enable` here"
    else:
        why = "not a git repository; run `waymark enable` here to capture"
    return _mode("off", why)


EVENT_KEYS = ("cwd", "session_id", "client", "name")
EVENT_ERROR = f"event must carry {', '.join(EVENT_KEYS)} as strings"


def _session_mode(conn: Connection, session_id: str | None) -> str | None:
    if not session_id:
        return None
    # here, not at the top: `waymark status` (no session) skips the module's ~0.4 ms
    from waymark.storage.sessions import session_capture

    return session_capture(conn, session_id)


def requested_event(request: dict[str, Any]) -> dict[str, Any] | None:
    """The hook event a warm-server request carries (its cwd, session, client and name as
    strings, `agent_id` a string or None), or None when it is not of that form."""
    event = request.get("event")
    if not isinstance(event, dict) or not all(isinstance(event.get(k), str) for k in EVENT_KEYS):
        return None
    agent = event.get("agent_id")
    return {**event, "agent_id": agent if isinstance(agent, str) else None}


def hook_project(
    conn: Connection, cwd: str, session_id: str | None
) -> tuple[Project, dict[str, Any]] | None:
    """The project a hook event in `cwd` belongs to and its `policy`, or None where hooks
    never capture (a plain folder, or any repository while capture is per project and
    this one was never enabled). Creates the project of a git repository only when every
    repository is captured."""
    from waymark.errors import NotFound
    from waymark.projects.locate import locate
    from waymark.projects.resolve import resolve

    try:
        project = resolve(conn, None, cwd=cwd, bind=False)
    except NotFound:
        if not all_git_repos(conn) or locate(cwd).how == "directory":
            return None
        project = resolve(conn, None, cwd=cwd)
    return project, policy(conn, project, session_id)


def _mode(mode: str, why: str) -> dict[str, Any]:
    return {
        "enabled": mode != "off",
        "records": mode in ("on", "confirm"),
        "mode": mode,
        "why": why,
    }


def agent_write(conn: Connection, project: Project, session_id: str | None) -> bool:
    """May the agent's tools write here? True: they write to the review queue (confirm);
    False: they write; CaptureRefused: read-only or off, with the mode and how to change it.
    Only a mode someone chose counts: a folder the hooks merely skip (no git repository,
    nothing enabled) still takes the agent's explicit writes, as it always did."""
    from waymark.errors import CaptureRefused

    chosen = _session_mode(conn, session_id)
    if chosen is None:
        stored = get_capture(conn, project.id)
        chosen = stored[0] if stored else None
    if chosen in ("read-only", "off"):
        why = policy(conn, project, session_id)["why"]
        raise CaptureRefused(
            f"capture is {chosen} here ({why}): the agent's tools may read, not write; the "
            "user can switch it back with `waymark capture on`",
            mode=chosen,
        )
    return chosen == "confirm"


def all_git_repos(conn: Connection | None) -> bool:
    """The setting; on where no database exists yet (the default)."""
    from waymark.settings import DEFAULTS

    stored = get_setting(conn, "capture.all_git_repos") if conn is not None else None
    return bool(DEFAULTS["capture.all_git_repos"] if stored is None else json.loads(stored))


def set_enabled(conn: Connection, project: Project, enabled: bool) -> None:
    set_mode(conn, project, "on" if enabled else "off")


def set_mode(
    conn: Connection,
    project: Project,
    mode: str,
    *,
    session_id: str | None = None,
    client: str = "cli",
) -> None:
    """Set the project's capture mode, or one session's (which then wins for that session)."""
    from waymark.errors import InvalidArgument
    from waymark.storage.events import log_event
    from waymark.storage.sessions import put_session_capture

    if mode not in MODES:
        raise InvalidArgument(f"capture mode is one of {', '.join(MODES)} (got {mode!r})")
    with db.write(conn):
        if session_id:
            put_session_capture(conn, session_id, client, project.id, mode, clock.now())
        else:
            put_capture(conn, project.id, mode, clock.now())
        op = {"on": "capture.enable", "off": "capture.disable"}.get(
            mode, f"capture.{mode.replace('-', '_')}"
        )
        log_event(conn, op, project_id=project.id, session_id=session_id, mode=mode)
