"""The Stop rule: no session that changed the project ends without a handoff, and none loops.

When the session changed files and no checkpoint revision was saved after the last change,
ask once (block, audited as `stop.asked`) with a short reason naming Waymark's `checkpoint`
tool. When the client says this Stop already follows a block (`stop_hook_active`), or the
agent was already asked about this same unsaved state, never ask again: leave a "handoff
needed" marker instead (`handoff.marked`), which the next SessionStart shows and only a real
checkpoint save clears.
"""

from __future__ import annotations

from waymark.handoff import ledger
from waymark.storage import connection as db
from waymark.storage import sessions
from waymark.storage.events import log_event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection


def decide(
    conn: Connection, project: Project, session_id: str, client: str, *, stop_hook_active: bool
) -> str | None:
    """The reason to block this Stop with, or None to let it stop."""
    since = ledger.settle(conn, project, session_id, client)
    if since is None:
        return None
    with db.write(conn):  # read and set together: a second delivery must not ask again
        row = sessions.get_session(conn, session_id)
        asked = stop_hook_active or (row is not None and row["asked_for"] == since)
        if not asked:
            sessions.update_session(conn, session_id, asked_for=since)
            log_event(conn, "stop.asked", project_id=project.id, session_id=session_id,
                      actor=client, files=len(sessions.files_changed(conn, session_id, 50)))  # fmt: skip
    if asked:
        ledger.mark_handoff_needed(
            conn, project, session_id, "stopped with changes and no checkpoint"
        )
        return None
    return reason(conn, project, session_id)


def reason(conn: Connection, project: Project, session_id: str) -> str:
    """What the agent is asked: the files it changed and the exact call to make."""
    from waymark.handoff.checkpoints import active

    files = sessions.files_changed(conn, session_id, 6)
    current = active(conn, project, session_id)
    how = (
        f'operation "revise" with checkpoint_id "{current.id}" and expected_revision_id '
        f'"{current.revision.id}"'
        if current
        else 'operation "create"'
    )
    return (
        f"Waymark: this session changed {', '.join(files) or 'files'} and no checkpoint was "
        f"saved since. Before stopping, call Waymark's `checkpoint` tool ({how}) with one "
        "line each: objective; progress (what is done); decisions (and why); "
        "failed_approaches (and why they failed); tests (command and pass/fail); next_action "
        "(the exact next step); relevant_files (the files changed). Then stop."
    ) + _not_done(conn, project, session_id)


def _not_done(conn: Connection, project: Project, session_id: str) -> str:
    """The done commands of the session's tasks that have not passed since its last edit."""
    from waymark.storage.tasks import held_by

    held = held_by(conn, project.id, session_id)
    if not held:
        return ""
    from waymark.handoff import checkpoints, tasks

    unmet = []
    for task_id in held:
        state = tasks.done_state(conn, project, checkpoints.get(conn, project, task_id))
        unmet += [f"`{c}`" for c in tasks.unmet_commands(state) if f"`{c}`" not in unmet]
    if not unmet:
        return ""
    return (f" Your task's definition of done is not met: {', '.join(unmet)} has not passed "
            "since your last edit; run it, or record in tests that it was not run.")  # fmt: skip
