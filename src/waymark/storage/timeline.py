"""A project's history in one window of time, as rows of four kinds: sessions, checkpoint
revisions, decisions (and the revisions that replaced them), and changes found reverted.
The library puts them on one axis (`health.timeline`)."""

from __future__ import annotations

from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

KEYS = ("kind", "at", "until", "id", "what", "detail", "session_id", "status")


def entries(
    conn: Connection, project_id: str, since: str, until: str, limit: int
) -> list[dict[str, Any]]:
    """Everything of the project between `since` and `until` (ISO 8601 UTC), oldest first,
    at most `limit` of each kind (the newest of them)."""
    parts = (
        # a session: from its start to its end (None while open)
        "SELECT * FROM (SELECT 'session', started_at, ended_at, id, client, end_reason, id,"
        " CASE WHEN handed_off_at IS NOT NULL THEN 'handed off' WHEN asked_for IS NOT NULL"
        " THEN 'asked for a handoff' END"
        " FROM sessions WHERE project_id = ?1 AND started_at >= ?2 AND started_at < ?3"
        " ORDER BY started_at DESC LIMIT ?4)",
        # a checkpoint revision: what it did (create, revise, complete...) and its body
        "SELECT * FROM (SELECT 'checkpoint', r.created_at, NULL, r.checkpoint_id, r.operation,"
        " r.body, r.session_id, r.status FROM checkpoint_revisions r"
        " JOIN checkpoints c ON c.id = r.checkpoint_id"
        " WHERE c.project_id = ?1 AND r.created_at >= ?2 AND r.created_at < ?3"
        " ORDER BY r.created_at DESC LIMIT ?4)",
        # a decision, or a revision of one (it supersedes the one it replaced)
        "SELECT * FROM (SELECT 'decision', created_at, NULL, id, title, supersedes, session_id,"
        " status FROM memories WHERE project_id = ?1 AND type = 'decision'"
        " AND status IN ('active', 'superseded', 'archived')"
        " AND created_at >= ?2 AND created_at < ?3 ORDER BY created_at DESC LIMIT ?4)",
        # a change found reverted in git (when Waymark found it)
        "SELECT * FROM (SELECT 'revert', checked_at, NULL, item_id, kind, reverted_by, NULL,"
        " state FROM outcomes WHERE project_id = ?1 AND state = 'reverted'"
        " AND checked_at >= ?2 AND checked_at < ?3 ORDER BY checked_at DESC LIMIT ?4)",
    )
    rows = conn.execute(
        " UNION ALL ".join(parts) + " ORDER BY 2, 4", (project_id, since, until, limit)
    ).fetchall()
    return [dict(zip(KEYS, row, strict=True)) for row in rows]


def first_at(conn: Connection, project_id: str) -> str | None:
    """When the project's first session started (where its history begins)."""
    row: Any = conn.execute(
        "SELECT min(started_at) FROM sessions WHERE project_id = ?", (project_id,)
    ).fetchone()
    return row[0] if row else None
