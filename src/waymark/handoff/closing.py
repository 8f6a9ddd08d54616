"""What happens when an agent's turn ends and when its session ends, whichever face saw it:
the Stop and SessionEnd hooks, or the memory proxy (an answer without tool calls; a
conversation gone quiet, or the proxy stopping).

At a turn's end: the opt-in session summary is refreshed as a candidate and what was shown
is checked for use. At the session's end: the ledger is closed (with a handoff marker when
work changed and no checkpoint was saved), then the extras: measured use, skills learned
from work, insights from the error log. An extra that fails is reported, never raised: the
session is closed whatever happens after.
"""

from __future__ import annotations

from waymark.projects.resolve import Project
from waymark.storage.connection import Connection

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def turn_ended(
    conn: Connection, project: Project, session_id: str, cwd: str | None, last_message: str | None
) -> list[str]:
    """The summary candidate and measured use after an answer; what was skipped, and why."""
    problems = []
    try:
        from waymark.curation import summary

        summary.refresh(conn, project, session_id, cwd, last_message)
    except Exception as exc:  # the summary is extra
        problems.append(f"session summary skipped: {exc!r}")
    try:
        from waymark.curation.use import settle

        settle(conn, project, session_id, last_message)
    except Exception as exc:  # measurement is extra too
        problems.append(f"measured use skipped: {exc!r}")
    return problems


def session_ended(
    conn: Connection,
    project: Project,
    session_id: str,
    client: str,
    reason: str,
    last_message: str | None = None,
    *,
    cwd: str | None = None,
) -> list[str]:
    """Close the session's ledger, then the extras; what was skipped, and why. With `cwd`
    (a hook, which the client kills at its deadline: Claude Code gives every SessionEnd
    hook 1.5 s together) the extras run in a process of their own that nothing waits for,
    so the hook ends once the ledger is closed; without it (a long-lived face) they run
    here."""
    from waymark.handoff import ledger
    from waymark.projects.git import head

    ledger.mark_if_unsaved(
        conn, project, session_id, client, "ended with changes and no checkpoint"
    )
    ledger.end_session(conn, project, session_id, reason, head(project.files))
    if cwd is not None:
        try:
            _extras_later(cwd, session_id, last_message)
            return []
        except OSError as exc:  # no process to be had: do them here, as before
            problems = [f"extras ran in the hook: {exc!r}"]
            return problems + extras(conn, project, session_id, last_message)
    return extras(conn, project, session_id, last_message)


def extras(
    conn: Connection, project: Project, session_id: str, last_message: str | None
) -> list[str]:
    """After a session closed: measured use, skills learned from its work, insights from the
    error log. An extra that fails is reported, never raised."""
    problems = []
    try:
        from waymark.curation.use import refresh_sections, settle

        settle(conn, project, session_id, last_message)
        refresh_sections(conn, project)
    except Exception as exc:  # measurement is extra: the session is closed already
        problems.append(f"measured use skipped: {exc!r}")
    try:
        from waymark.curation.skills import extract

        extract(conn, project, session_id)
    except Exception as exc:  # extra work too
        problems.append(f"skills skipped: {exc!r}")
    try:
        from waymark.curation.mistakes import propose_insights

        propose_insights(conn, project, session_id)
    except Exception as exc:  # extra work: the session is closed whatever happens here
        problems.append(f"insights skipped: {exc!r}")
    return problems


EXTRAS = "session-end-"  # the hand-over file's prefix, in the data home's `pending` folder


def _extras_later(cwd: str, session_id: str, last_message: str | None) -> None:
    """Hand the extras to a process of their own: what they need goes in an owner-only file
    (the last message can hold anything: never on a command line), which it reads, and
    removes when done."""
    import os
    import sys

    from waymark import home
    from waymark.base import jsonlite as json
    from waymark.base.files import new_temp, private_dir

    folder = os.path.join(home.data_home(), "pending")
    private_dir(folder)
    path = new_temp(folder, EXTRAS)
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"cwd": cwd, "session_id": session_id, "last_message": last_message}))
    from waymark.base.launch import detached

    detached([sys.executable, "-I", "-c",
              "from waymark.packets.after_session import run;run()", path])  # fmt: skip


def run_extras(also: Callable[[Connection, Project], None] | None = None) -> None:
    """The hand-over's process: read and remove its file, then the extras of that session
    (and `also`, what a wing above adds: `packets.after_session`); each problem a line in
    hooks.log. Never raises."""
    import contextlib
    import os
    import sys

    from waymark.base import jsonlite as json
    from waymark.base import logfile

    def say(message: str) -> None:
        logfile.append("hooks.log", "SessionEnd", message, max_bytes=512 * 1024)

    path = sys.argv[1] if len(sys.argv) > 1 else ""
    try:
        with open(path, encoding="utf-8") as f:
            given = json.loads(f.read())
        from waymark.projects.capture import hook_project
        from waymark.storage import connection as db

        conn = db.connect()
        try:
            found = hook_project(conn, given["cwd"], given["session_id"])
            if found is not None:
                for problem in extras(conn, found[0], given["session_id"],
                                      given["last_message"]):  # fmt: skip
                    say(problem)
                if also is not None:
                    try:
                        also(conn, found[0])
                    except Exception as exc:  # an extra: the session is closed already
                        say(f"extras failed: {exc!r}")
        finally:
            conn.close()
    except Exception as exc:  # a process nobody waits for: its log is all it has
        say(f"extras failed: {exc!r}")
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)  # gone once done: what is left is for the next look
