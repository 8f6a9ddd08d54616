"""SQL for `command_failures`: the commands that failed, per project and session, what was
tried since, and what passed after (the failure hooks, the error log and the skills read
it); and the commands a session saw fail (its ledger's failure lines)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from waymark.storage.connection import Connection

FAILURES_KEPT = 500  # per project: the newest failed commands, passed or not
FAILURE_KEYS = (
    "id", "session_id", "command", "exit_code", "error_tail", "failed_at", "passed_at",
    "passed_session", "fix", "signature", "tried",
)  # fmt: skip


def add_command_failure(
    conn: Connection,
    project_id: str,
    session_id: str,
    stamp: str,
    head: str,
    command: str,
    exit_code: int | None,
    error_tail: str,
    signature: str | None = None,
) -> int:
    """One failed command (redacted by the caller); the project keeps its newest few hundred.
    Its row id."""
    conn.execute(
        "INSERT INTO command_failures (project_id, session_id, head, command, exit_code,"
        " error_tail, failed_at, signature) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (project_id, session_id, head, command, exit_code, error_tail, stamp, signature),
    )
    added = conn.last_insert_rowid()
    conn.execute(
        "DELETE FROM command_failures WHERE project_id = ? AND id <= (SELECT id FROM"
        " command_failures WHERE project_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
        (project_id, project_id, FAILURES_KEPT),
    )
    return int(added)


def failures_by_signature(
    conn: Connection, project_id: str, signature: str, limit: int, *, before: int | None = None
) -> list[dict[str, Any]]:
    """The project's newest failures with this error signature (ids below `before`)."""
    below = before if before is not None else 1 << 62
    return _newest(conn, "project_id = ? AND signature = ? AND id < ?",
                   (project_id, signature, below), limit)  # fmt: skip


def _newest(conn: Connection, where: str, params: tuple[Any, ...], limit: int) -> list[dict]:
    """The newest `limit` failures `where` holds, as dicts of FAILURE_KEYS."""
    rows = conn.execute(
        f"SELECT {', '.join(FAILURE_KEYS)} FROM command_failures WHERE {where}"
        " ORDER BY id DESC LIMIT ?",
        (*params, limit),
    ).fetchall()
    return [dict(zip(FAILURE_KEYS, row, strict=True)) for row in rows]


def unsigned_failures(conn: Connection, project_id: str) -> list[tuple[int, str, str | None]]:
    """(id, command, error_tail) of the project's failures stored before signatures were."""
    rows = conn.execute(
        "SELECT id, command, error_tail FROM command_failures WHERE project_id = ?"
        " AND signature IS NULL",
        (project_id,),
    ).fetchall()
    return [(int(str(i)), str(c), None if t is None else str(t)) for i, c, t in rows]


def set_signatures(conn: Connection, signed: Iterable[tuple[int, str]]) -> None:
    conn.cursor().executemany(
        "UPDATE command_failures SET signature = ? WHERE id = ?",
        [(signature, failure_id) for failure_id, signature in signed],
    )


def open_failures(conn: Connection, session_id: str) -> list[tuple[int, str, str | None]]:
    """(id, command, tried) of this session's failed commands that have not passed since."""
    rows = conn.execute(
        "SELECT id, command, tried FROM command_failures WHERE session_id = ?"
        " AND passed_at IS NULL",
        (session_id,),
    ).fetchall()
    return [(int(str(i)), str(c), None if t is None else str(t)) for i, c, t in rows]


def last_open_failure(conn: Connection, session_id: str) -> dict[str, Any] | None:
    """The session's newest failed command that has not passed since (as stored)."""
    row = conn.execute(
        f"SELECT {', '.join(FAILURE_KEYS)} FROM command_failures WHERE session_id = ?"
        " AND passed_at IS NULL ORDER BY id DESC LIMIT 1",
        (session_id,),
    ).fetchone()
    return None if row is None else dict(zip(FAILURE_KEYS, row, strict=True))


def set_tried(conn: Connection, failure_id: int, tried: str) -> None:
    conn.execute("UPDATE command_failures SET tried = ? WHERE id = ?", (tried, failure_id))


def command_failures(
    conn: Connection, project_id: str, head: str, limit: int
) -> list[dict[str, Any]]:
    """The newest failures of commands starting with `head` in the project."""
    return _newest(conn, "project_id = ? AND head = ?", (project_id, head), limit)


def mark_command_passed(
    conn: Connection, failure_ids: Iterable[int], stamp: str, session_id: str, fix: str | None
) -> None:
    for failure_id in failure_ids:
        conn.execute(
            "UPDATE command_failures SET passed_at = ?, passed_session = ?, fix = ?"
            " WHERE id = ? AND passed_at IS NULL",
            (stamp, session_id, fix, failure_id),
        )


def project_failures_since(
    conn: Connection, project_id: str, since: str, limit: int
) -> list[dict[str, Any]]:
    """The project's newest `limit` failed commands at or after `since` (as stored)."""
    return _newest(conn, "project_id = ? AND failed_at >= ?", (project_id, since), limit)


def failed_commands(conn: Connection, session_id: str) -> list[str]:
    """The commands the session saw fail (as stored: redacted), each once, oldest first."""
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT command FROM session_ledger WHERE session_id = ? AND kind = 'failure'"
            " AND command IS NOT NULL GROUP BY command ORDER BY min(seq)",
            (session_id,),
        )
    ]
