"""The per-session ledger: which files a session changed, which commands failed, and
whether its work was handed off. Small rows, no transcript, nothing of the prompt."""

from __future__ import annotations

import os

from waymark.base import clock
from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.hooks.event import Event
from waymark.storage import connection as db

TYPE_CHECKING = False
if TYPE_CHECKING:
    import apsw

    from waymark.projects.resolve import Project

ERROR_TAIL = 400
COMMAND_MAX = 300


def ensure_session(
    conn: apsw.Connection, project: Project, event: Event, **start: str | None
) -> None:
    """Create the session row if this is the first event we see of it."""
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (event.session_id,)).fetchone():
        return
    with db.write(conn):
        conn.execute(
            "INSERT OR IGNORE INTO sessions (id, client, project_id, started_at, git_head_start,"
            " git_dirty_seen) VALUES (?, ?, ?, ?, ?, ?)",
            (
                event.session_id,
                event.client,
                project.id,
                clock.now(),
                start.get("head"),
                start.get("dirty"),
            ),
        )


def record_tool(conn: apsw.Connection, project: Project, event: Event) -> None:
    """Files an edit tool changed; a failed command with a bounded, redacted error tail."""
    from waymark.hooks.event import edited_paths, shell_command

    ensure_session(conn, project, event)
    paths = [_relative(project, p) for p in edited_paths(event)]
    command = shell_command(event)
    stamp = clock.now()
    with db.write(conn):
        for path in dict.fromkeys(p for p in paths if p):
            conn.execute(
                "INSERT INTO session_ledger (session_id, at, kind, path) VALUES (?, ?, 'edit', ?)",
                (event.session_id, stamp, path),
            )
        if paths:
            conn.execute(
                "UPDATE sessions SET last_change_at = ? WHERE id = ?", (stamp, event.session_id)
            )
        if command is not None:
            conn.execute(
                "UPDATE sessions SET last_shell_at = ? WHERE id = ?", (stamp, event.session_id)
            )
        if event.failed and (command or event.tool_name):
            from waymark.base import redact  # its patterns need `re` (~6 ms): only failures pay

            cmd, _ = redact.scrub((command or event.tool_name or "")[:COMMAND_MAX])
            tail, _ = redact.scrub((event.error or "")[-ERROR_TAIL:])
            conn.execute(
                "INSERT INTO session_ledger (session_id, at, kind, command, exit_code, error_tail)"
                " VALUES (?, ?, 'failure', ?, ?, ?)",
                (event.session_id, stamp, cmd, event.exit_code, tail),
            )


def _relative(project: Project, path: str) -> str | None:
    root = project.files
    if not root:
        return None
    full = path if os.path.isabs(path) else os.path.join(root, path)
    try:
        rel = os.path.relpath(os.path.realpath(full), os.path.realpath(root))
    except ValueError:
        return None
    if rel.startswith(os.pardir):
        return None
    return rel.replace(os.sep, "/")


def note_git_changes(conn: apsw.Connection, project: Project, session_id: str) -> None:
    """Work done through the shell shows up only in git: if the dirty set moved since the
    session started, count it as a change made at the last shell command."""
    from waymark.projects import git

    row = conn.execute(
        "SELECT git_dirty_seen, last_shell_at, last_change_at FROM sessions WHERE id = ?",
        (session_id,),
    ).fetchone()
    if row is None or row[1] is None or not project.files:
        return
    before = json.loads(row[0]) if row[0] else None
    now = git.dirty(project.files)
    if before is None or now is None or now == before:
        return
    changed = sorted(p for p in set(now) | set(before) if now.get(p) != before.get(p))
    known = {
        r[0]
        for r in conn.execute(
            "SELECT path FROM session_ledger WHERE session_id = ? AND kind = 'edit'", (session_id,)
        )
    }
    with db.write(conn):
        for path in changed:
            if path not in known:
                conn.execute(
                    "INSERT INTO session_ledger (session_id, at, kind, path)"
                    " VALUES (?, ?, 'edit', ?)",
                    (session_id, row[1], path),
                )
        if row[2] is None or row[1] > row[2]:
            conn.execute(
                "UPDATE sessions SET last_change_at = ? WHERE id = ?", (row[1], session_id)
            )
        conn.execute(
            "UPDATE sessions SET git_dirty_seen = ? WHERE id = ?",
            (json.dumps(now, sort_keys=True), session_id),
        )


def settle(conn: apsw.Connection, project: Project, event: Event) -> str | None:
    """Bring the session's record of changes up to date (edits, and shell work git shows);
    then the time of its last change if no checkpoint was saved after it, else None."""
    ensure_session(conn, project, event)
    note_git_changes(conn, project, event.session_id)
    return unsaved(conn, project, event.session_id)


def mark_if_unsaved(conn: apsw.Connection, project: Project, event: Event, why: str) -> None:
    """Leave the "handoff needed" marker when the session's changes have no checkpoint."""
    if settle(conn, project, event):
        mark_handoff_needed(conn, project, event.session_id, why)


def unsaved(conn: apsw.Connection, project: Project, session_id: str) -> str | None:
    """The session's last change time when no checkpoint revision was saved after it."""
    row = conn.execute("SELECT last_change_at FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None or row[0] is None:
        return None
    saved = conn.execute(
        "SELECT 1 FROM checkpoint_revisions r JOIN checkpoints c ON c.id = r.checkpoint_id"
        " WHERE c.project_id = ? AND r.created_at >= ? LIMIT 1",
        (project.id, row[0]),
    ).fetchone()
    return None if saved else str(row[0])


def mark_handoff_needed(conn: apsw.Connection, project: Project, session_id: str, why: str) -> None:
    with db.write(conn):
        conn.execute(
            "INSERT INTO handoff_markers (project_id, session_id, reason, created_at)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (project_id, session_id) DO UPDATE SET"
            " reason = excluded.reason, created_at = excluded.created_at, cleared_at = NULL,"
            " cleared_by = NULL",
            (project.id, session_id, why, clock.now()),
        )


def files_changed(conn: apsw.Connection, session_id: str, limit: int = 20) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT path FROM session_ledger WHERE session_id = ? AND kind = 'edit'"
            " GROUP BY path ORDER BY max(seq) DESC LIMIT ?",
            (session_id, limit),
        )
    ]
