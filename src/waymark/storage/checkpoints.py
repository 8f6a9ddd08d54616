"""SQL for `checkpoints`, their immutable `checkpoint_revisions`, and `handoff_markers` (a
session that changed files and ended without a checkpoint)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from waymark.storage.connection import Connection

REVISION_COLUMNS = (
    "id, checkpoint_id, seq, operation, status, body, tokens, actor, client, session_id,"
    " created_at, git_branch"
)


def insert_checkpoint(
    conn: Connection, checkpoint_id: str, project_id: str, stamp: str, parent_id: str | None = None
) -> None:
    """A new active checkpoint (a subtask of `parent_id`); its first revision follows in the
    same transaction."""
    conn.execute(
        "INSERT INTO checkpoints (id, project_id, status, current_revision, created_at,"
        " updated_at, parent_id) VALUES (?, ?, 'active', '', ?, ?, ?)",
        (checkpoint_id, project_id, stamp, stamp, parent_id),
    )


def insert_revision(conn: Connection, values: tuple[Any, ...]) -> None:
    """One revision, `values` in REVISION_COLUMNS order (body as JSON text); it becomes the
    checkpoint's current one."""
    conn.execute(
        f"INSERT INTO checkpoint_revisions ({REVISION_COLUMNS})"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        values,
    )
    conn.execute(
        "UPDATE checkpoints SET current_revision = ?, updated_at = ? WHERE id = ?",
        (values[0], values[10], values[1]),
    )


def set_checkpoint_status(conn: Connection, checkpoint_id: str, status: str) -> None:
    conn.execute("UPDATE checkpoints SET status = ? WHERE id = ?", (status, checkpoint_id))


def get_checkpoint(
    conn: Connection, project_id: str, checkpoint_id: str
) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
    """(id, project_id, status, current_revision, created_at, updated_at) and the current
    revision's row, or None when the project has no such checkpoint."""
    row = conn.execute(
        "SELECT id, project_id, status, current_revision, created_at, updated_at FROM checkpoints"
        " WHERE id = ? AND project_id = ?",
        (checkpoint_id, project_id),
    ).fetchone()
    if row is None:
        return None
    rev = conn.execute(
        f"SELECT {REVISION_COLUMNS} FROM checkpoint_revisions WHERE id = ?", (row[3],)
    ).fetchone()
    assert rev is not None, "a checkpoint always has its current revision"
    return tuple(row), tuple(rev)


def checkpoint_ids_starting(conn: Connection, project_id: str, prefix: str) -> list[str]:
    """The project's checkpoint ids that start with `prefix` (at most 6)."""
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT id FROM checkpoints WHERE project_id = ? AND id >= ? AND id < ?"
            " ORDER BY id LIMIT 6",
            (project_id, prefix, prefix + "\uffff"),
        )
    ]


# The active checkpoint a session works on: one it holds, else the most recently updated
# one no other session holds (open, or its lease passed at ?3), a task before a subtask.
# Without a session (?2 NULL): the most recently updated active checkpoint.
_FOR_SESSION = (
    " c.project_id = ?1 AND c.status = 'active' AND (?2 IS NULL OR c.holder_session IS NULL"
    " OR c.holder_session = ?2 OR c.lease_until <= ?3)"
    " ORDER BY (?2 IS NOT NULL AND c.holder_session IS ?2) DESC,"
    " (?2 IS NOT NULL AND c.parent_id IS NULL) DESC, c.updated_at DESC, c.id DESC LIMIT 1"
)


def active_checkpoint_id(
    conn: Connection, project_id: str, session: str | None = None, stamp: str = ""
) -> str | None:
    """The active checkpoint `session` works on (at `stamp`), or the most recently updated
    active one without a session."""
    row = conn.execute(
        "SELECT c.id FROM checkpoints c WHERE" + _FOR_SESSION, (project_id, session, stamp)
    ).fetchone()
    return None if row is None else str(row[0])


def finished_checkpoint_ids(conn: Connection, project_id: str, limit: int) -> list[str]:
    """The project's completed checkpoints, most recently finished first."""
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT id FROM checkpoints WHERE project_id = ? AND status = 'completed'"
            " ORDER BY updated_at DESC, id DESC LIMIT ?",
            (project_id, limit),
        )
    ]


def checkpoint_ids(conn: Connection, project_id: str, limit: int) -> list[str]:
    """The project's checkpoints, every status, the most recently changed first."""
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT id FROM checkpoints WHERE project_id = ? ORDER BY updated_at DESC, id DESC"
            " LIMIT ?",
            (project_id, limit),
        )
    ]


def revisions(conn: Connection, checkpoint_id: str) -> list[tuple[Any, ...]]:
    """Every revision row of a checkpoint, oldest first."""
    return [
        tuple(r)
        for r in conn.execute(
            f"SELECT {REVISION_COLUMNS} FROM checkpoint_revisions WHERE checkpoint_id = ?"
            " ORDER BY seq",
            (checkpoint_id,),
        )
    ]


# Handoff markers.


def put_marker(conn: Connection, project_id: str, session_id: str, why: str, stamp: str) -> None:
    """Set (or set again) the session's "handoff needed" marker."""
    conn.execute(
        "INSERT INTO handoff_markers (project_id, session_id, reason, created_at)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (project_id, session_id) DO UPDATE SET"
        " reason = excluded.reason, created_at = excluded.created_at, cleared_at = NULL,"
        " cleared_by = NULL",
        (project_id, session_id, why, stamp),
    )


def clear_markers(
    conn: Connection,
    project_id: str,
    stamp: str,
    revision_id: str,
    sessions: Sequence[str],
    shown_before: str | None,
) -> int:
    """Clear the open markers of `sessions`, and those set before `shown_before` (the
    saving session's start, whose first packet showed them); `revision_id` was the handoff.
    How many."""
    from waymark.base import jsonlite as json

    conn.execute(
        "UPDATE handoff_markers SET cleared_at = ?, cleared_by = ? WHERE project_id = ?"
        " AND cleared_at IS NULL AND (session_id IN (SELECT value FROM json_each(?))"
        " OR created_at <= ?)",
        (stamp, revision_id, project_id, json.dumps(list(sessions)), shown_before or ""),
    )
    return int(conn.changes())


def open_markers(
    conn: Connection,
    project_id: str,
    *,
    newest_first: bool = False,
    limit: int = -1,
    except_session: str | None = None,
) -> list[tuple[str, str, str]]:
    """(session_id, reason, created_at) of the project's uncleared markers."""
    other = " AND session_id <> ?" if except_session is not None else ""
    params: tuple[Any, ...] = (project_id,) + ((except_session,) if other else ()) + (limit,)
    return [
        (str(s), str(r), str(c))
        for s, r, c in conn.execute(
            "SELECT session_id, reason, created_at FROM handoff_markers WHERE project_id = ?"
            f" AND cleared_at IS NULL{other}"
            f" ORDER BY created_at{' DESC' if newest_first else ''} LIMIT ?",
            params,
        )
    ]


def revision_body(conn: Connection, revision_id: str) -> str | None:
    """A revision's body as its stored JSON text."""
    row = conn.execute(
        "SELECT body FROM checkpoint_revisions WHERE id = ?", (revision_id,)
    ).fetchone()
    return None if row is None else str(row[0])


def count_revisions(conn: Connection, checkpoint_id: str) -> int:
    row: Any = conn.execute(
        "SELECT count(*) FROM checkpoint_revisions WHERE checkpoint_id = ?", (checkpoint_id,)
    ).fetchone()
    return int(row[0])


def active_revision(
    conn: Connection, project_id: str, session: str | None = None, stamp: str = ""
) -> tuple[str, str] | None:
    """(revision id, body JSON) of the active checkpoint `session` works on
    (`active_checkpoint_id`), in one lookup."""
    row = conn.execute(
        "SELECT r.id, r.body FROM checkpoints c JOIN checkpoint_revisions r"
        " ON r.id = c.current_revision WHERE" + _FOR_SESSION,
        (project_id, session, stamp),
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))


def revision_row(conn: Connection, revision_id: str) -> tuple[Any, ...] | None:
    """One revision's row (REVISION_COLUMNS), or None."""
    row = conn.execute(
        f"SELECT {REVISION_COLUMNS} FROM checkpoint_revisions WHERE id = ?", (revision_id,)
    ).fetchone()
    return None if row is None else tuple(row)


def revision_at(conn: Connection, checkpoint_id: str, seq: int) -> str | None:
    """The id of a checkpoint's revision number `seq` (the one `seq + 1` was made from)."""
    row = conn.execute(
        "SELECT id FROM checkpoint_revisions WHERE checkpoint_id = ? AND seq = ?",
        (checkpoint_id, seq),
    ).fetchone()
    return None if row is None else str(row[0])


def checkpoint_head(conn: Connection, checkpoint_id: str) -> tuple[str, str, int] | None:
    """(project id, current revision id, its highest revision number) of a checkpoint."""
    row = conn.execute(
        "SELECT c.project_id, c.current_revision, max(r.seq) FROM checkpoints c"
        " JOIN checkpoint_revisions r ON r.checkpoint_id = c.id WHERE c.id = ?"
        " GROUP BY c.id",
        (checkpoint_id,),
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]), int(row[2]))


def current_revision_of(conn: Connection, checkpoint_id: str) -> tuple[str, str] | None:
    """(id, created_at) of the checkpoint's current revision."""
    row = conn.execute(
        "SELECT r.id, r.created_at FROM checkpoints c JOIN checkpoint_revisions r"
        " ON r.id = c.current_revision WHERE c.id = ?",
        (checkpoint_id,),
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))


def last_saves(
    conn: Connection, project_id: str, session_id: str
) -> tuple[str | None, str | None, bool]:
    """(when the session last saved a handoff, when anyone in the project last did, whether
    the session's "handoff needed" marker is open)."""
    ((mine,),) = conn.execute(
        "SELECT max(r.created_at) FROM checkpoint_revisions r JOIN checkpoints c"
        " ON c.id = r.checkpoint_id WHERE c.project_id = ? AND r.session_id = ?",
        (project_id, session_id),
    )
    ((newest,),) = conn.execute(
        "SELECT max(updated_at) FROM checkpoints WHERE project_id = ?", (project_id,)
    )
    needed = conn.execute(
        "SELECT 1 FROM handoff_markers WHERE project_id = ? AND session_id = ?"
        " AND cleared_at IS NULL",
        (project_id, session_id),
    ).fetchone()
    return mine, newest, needed is not None
