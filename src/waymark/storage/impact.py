"""SQL for `waymark stats --impact`: what Waymark's work led to, read from the receipts, the
handoffs, the failures and git's outcomes of one project since a time."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.storage.connection import Connection


def sessions_since(conn: Connection, project_id: str, since: str) -> list[tuple[str, str, str]]:
    """(session id, client, started at) of the project's sessions that started since."""
    return [
        (str(s), str(c), str(a))
        for s, c, a in conn.execute(
            "SELECT id, client, started_at FROM sessions WHERE project_id = ? AND"
            " started_at >= ? ORDER BY started_at",
            (project_id, since),
        )
    ]


def started_from(conn: Connection, project_id: str, since: str) -> dict[str, str]:
    """session id -> the checkpoint its SessionStart packet showed (it started from that
    handoff)."""
    return {
        str(s): str(c)
        for s, c in conn.execute(
            "SELECT session_id, min(item) FROM injections WHERE project_id = ? AND at >= ?"
            " AND hook = 'SessionStart' AND section = 'Active checkpoint' AND tokens > 0"
            " AND item IS NOT NULL GROUP BY session_id",
            (project_id, since),
        )
    }


def saved(conn: Connection, project_id: str, since: str) -> set[tuple[str, str]]:
    """(session id, checkpoint id) of every handoff saved since."""
    return {
        (str(s), str(c))
        for s, c in conn.execute(
            "SELECT DISTINCT r.session_id, r.checkpoint_id FROM checkpoint_revisions r JOIN"
            " checkpoints c ON c.id = r.checkpoint_id WHERE c.project_id = ? AND"
            " r.created_at >= ? AND r.session_id IS NOT NULL",
            (project_id, since),
        )
    }


def prompt_recalls(conn: Connection, project_id: str, since: str) -> list[str]:
    """When each prompt packet that showed a memory was made (a prompt packet's lines cite
    memories, or nothing: what the repository said)."""
    return [
        str(a)
        for (a,) in conn.execute(
            "SELECT min(at) FROM injections WHERE project_id = ? AND at >= ? AND"
            " hook = 'UserPromptSubmit' AND tokens > 0 AND item IS NOT NULL GROUP BY packet",
            (project_id, since),
        )
    ]


def use_by_session(
    conn: Connection, project_id: str, since: str
) -> list[tuple[str, int, int, int]]:
    """(session id, tokens its packets injected, records they showed, those it used) of each
    session with a packet since, each record once per session."""
    return [
        (str(s), int(t or 0), int(n), int(u))
        for s, t, n, u in conn.execute(
            "SELECT j.session_id, sum(j.tokens),"
            " count(DISTINCT CASE WHEN j.item IS NOT NULL AND j.tokens > 0 THEN j.item END),"
            " count(DISTINCT CASE WHEN j.tokens > 0 AND u.item IS NOT NULL THEN j.item END)"
            " FROM injections j LEFT JOIN injected_used u ON u.session_id = j.session_id AND"
            " u.item = j.item WHERE j.project_id = ? AND j.at >= ? GROUP BY j.session_id",
            (project_id, since),
        )
    ]


def asked_recalls(conn: Connection, project_id: str, since: str) -> list[str]:
    """When each recall an agent asked for (the MCP tool) answered with memories."""
    return [
        str(a)
        for (a,) in conn.execute(
            "SELECT at FROM events WHERE op = 'recall.served' AND project_id = ? AND at >= ?",
            (project_id, since),
        )
    ]


def failure_hints(conn: Connection, project_id: str, since: str) -> list[tuple[str, bool]]:
    """(when, whether the failed command passed later) of each packet that said what fixed
    an error before: the failure it answered is the session's newest by then."""
    return [
        (str(a), bool(p))
        for a, p in conn.execute(
            "SELECT j.at, (SELECT f.passed_at IS NOT NULL FROM command_failures f WHERE"
            " f.session_id = j.session_id AND f.failed_at <= j.at ORDER BY f.failed_at DESC"
            " LIMIT 1) FROM injections j WHERE j.project_id = ? AND j.at >= ? AND"
            " j.kind = 'failure' GROUP BY j.packet",
            (project_id, since),
        )
    ]


def decision_outcomes(conn: Connection, project_id: str, since: str) -> list[tuple[str, str]]:
    """(when written, held or reverted) of the decisions written since whose change git
    settled."""
    return [
        (str(a), str(s))
        for a, s in conn.execute(
            "SELECT m.created_at, o.state FROM outcomes o JOIN memories m ON m.id = o.item_id"
            " WHERE o.project_id = ? AND m.type = 'decision' AND m.created_at >= ? AND"
            " o.state IN ('held', 'reverted')",
            (project_id, since),
        )
    ]
