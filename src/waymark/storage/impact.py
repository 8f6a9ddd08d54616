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


def per_session(
    conn: Connection, project_id: str, since: str
) -> list[tuple[str, int, int, int, str | None, list[str]]]:
    """For each session with a packet since, from its receipts in one pass: (session id,
    tokens injected, records shown (each once), prompt packets that showed a memory (a
    prompt packet's lines cite memories or nothing), the checkpoint its SessionStart packet
    showed (it started from that handoff) or None, when each failure packet was made)."""
    return [
        (
            str(s),
            int(t or 0),
            int(n),
            int(r),
            None if c is None else str(c),
            sorted(str(f).split(",")) if f else [],
        )  # fmt: skip
        for s, t, n, r, c, f in conn.execute(
            "SELECT session_id, sum(tokens),"
            " count(DISTINCT CASE WHEN item IS NOT NULL AND tokens > 0 THEN item END),"
            " count(DISTINCT CASE WHEN hook = 'UserPromptSubmit' AND tokens > 0 AND"
            " item IS NOT NULL THEN packet END),"
            " min(CASE WHEN hook = 'SessionStart' AND section = 'Active checkpoint' AND"
            " tokens > 0 THEN item END),"
            " group_concat(DISTINCT CASE WHEN kind = 'failure' THEN at END)"
            " FROM injections WHERE project_id = ? AND at >= ? GROUP BY session_id",
            (project_id, since),
        )
    ]


def used_per_session(conn: Connection, project_id: str, since: str) -> dict[str, int]:
    """session id -> the records it used of those its packets showed (`curation.use`), for
    the sessions that started since."""
    return {
        str(s): int(n)
        for s, n in conn.execute(
            "SELECT u.session_id, count(*) FROM injected_used u JOIN sessions s ON"
            " s.id = u.session_id WHERE s.project_id = ? AND s.started_at >= ?"
            " GROUP BY u.session_id",
            (project_id, since),
        )
    }


def passed_after(conn: Connection, session_id: str, at: str) -> bool:
    """Whether the session's newest failed command by `at` (the one a failure packet
    answered) passed later."""
    for (passed,) in conn.execute(
        "SELECT passed_at IS NOT NULL FROM command_failures WHERE session_id = ? AND"
        " failed_at <= ? ORDER BY failed_at DESC LIMIT 1",
        (session_id, at),
    ):
        return bool(passed)
    return False


def asked_recalls(conn: Connection, project_id: str, since: str) -> list[str]:
    """When each recall an agent asked for (the MCP tool) answered with memories."""
    return [
        str(a)
        for (a,) in conn.execute(
            "SELECT at FROM events WHERE op = 'recall.served' AND project_id = ? AND at >= ?",
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
