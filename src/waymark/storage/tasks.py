"""SQL for claims on checkpoints: who holds a task, since when, until when its lease runs,
and where the work started (m051). Plain functions inside the caller's transaction.

A claim is one conditional UPDATE: of two agents racing for one task, SQLite's single
writer lets one statement through first, and the second finds the task held.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.storage.connection import Connection

# A task's claim as read back: the holder's session and agent, what it said of itself (JSON
# text), when it claimed, its lease, the base commit, branch and working tree, the parent.
CLAIM_COLUMNS = (
    "holder_session", "holder_agent", "holder_about", "claimed_at", "lease_until",
    "base_commit", "branch", "worktree", "parent_id",
)  # fmt: skip


def take(
    conn: Connection,
    checkpoint_id: str,
    session: str,
    agent: str,
    about: str,
    stamp: str,
    lease_until: str,
    where: tuple[str | None, str | None, str | None],
) -> bool:
    """Claim the active task when it is open, its lease has passed (at `stamp`), or its
    holder is this session already (a renewal that may name another agent); False when
    another session holds it. A new holder's claim starts now; where the work started
    (`where`: base commit, branch, working tree) is kept from the first claim of a holder."""
    base, branch, tree = where
    conn.execute(
        "UPDATE checkpoints SET"
        " claimed_at = CASE WHEN holder_session IS ?2 AND lease_until > ?5 THEN claimed_at"
        " ELSE ?5 END,"
        " base_commit = CASE WHEN holder_session IS ?2 AND lease_until > ?5 THEN base_commit"
        " ELSE ?7 END,"
        " branch = CASE WHEN holder_session IS ?2 AND lease_until > ?5 THEN branch ELSE ?8 END,"
        " worktree = CASE WHEN holder_session IS ?2 AND lease_until > ?5 THEN worktree"
        " ELSE ?9 END,"
        " holder_agent = CASE WHEN holder_session IS ?2 AND lease_until > ?5 AND ?3 = ''"
        " THEN holder_agent ELSE ?3 END,"
        " holder_about = CASE WHEN holder_session IS ?2 AND lease_until > ?5 AND ?3 = ''"
        " THEN holder_about ELSE ?4 END,"
        " holder_session = ?2, lease_until = ?6"
        " WHERE id = ?1 AND status = 'active'"
        " AND (holder_session IS NULL OR holder_session = ?2 OR lease_until <= ?5)",
        (checkpoint_id, session, agent, about, stamp, lease_until, base, branch, tree),
    )
    return bool(conn.changes())


def claim_of(conn: Connection, checkpoint_id: str) -> tuple[Any, ...] | None:
    """CLAIM_COLUMNS of the checkpoint, or None when there is no such checkpoint."""
    row = conn.execute(
        f"SELECT {', '.join(CLAIM_COLUMNS)} FROM checkpoints WHERE id = ?", (checkpoint_id,)
    ).fetchone()
    return None if row is None else tuple(row)


def let_go(conn: Connection, checkpoint_id: str) -> None:
    """The task is open again (its holder released or finished it); where it started goes
    with the claim."""
    conn.execute(
        "UPDATE checkpoints SET holder_session = NULL, holder_agent = NULL, holder_about = NULL,"
        " claimed_at = NULL, lease_until = NULL, base_commit = NULL, branch = NULL,"
        " worktree = NULL WHERE id = ?",
        (checkpoint_id,),
    )


def renew(conn: Connection, session: str, stamp: str, lease_until: str, below: str) -> int:
    """Extend to `lease_until` the session's live claims whose lease ends before `below` (a
    lapsed one stays lapsed: another agent may have seen it open). How many were renewed."""
    conn.execute(
        "UPDATE checkpoints SET lease_until = ?3 WHERE holder_session = ?1 AND status = 'active'"
        " AND lease_until > ?2 AND lease_until < ?4",
        (session, stamp, lease_until, below),
    )
    return int(conn.changes())


def lease_ends(conn: Connection, session: str, stamp: str) -> str | None:
    """When the session's first live claim (at `stamp`) ends, or None when it holds none
    (read before a write is taken: most signs of work renew nothing)."""
    row = conn.execute(
        "SELECT min(lease_until) FROM checkpoints WHERE holder_session = ? AND status = 'active'"
        " AND lease_until > ?",
        (session, stamp),
    ).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def lapse(conn: Connection, session: str, stamp: str) -> list[str]:
    """The session ended: its claims' leases end now (the tasks keep their holder, to say
    who had them, and are claimable). The ids of the tasks it held."""
    held = [
        str(r[0])
        for r in conn.execute(
            "SELECT id FROM checkpoints WHERE holder_session = ? AND status = 'active'"
            " AND lease_until > ?",
            (session, stamp),
        )
    ]
    if held:
        conn.execute(
            "UPDATE checkpoints SET lease_until = ? WHERE holder_session = ? AND status = 'active'"
            " AND lease_until > ?",
            (stamp, session, stamp),
        )
    return held


def held_by(conn: Connection, project_id: str, session: str) -> list[str]:
    """The project's active tasks this session holds (lapsed or not), newest claim first."""
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT id FROM checkpoints WHERE holder_session = ? AND project_id = ?"
            " AND status = 'active' ORDER BY claimed_at DESC, id DESC",
            (session, project_id),
        )
    ]


def board(conn: Connection, project_id: str, limit: int) -> list[tuple[Any, ...]]:
    """The project's active tasks, each (id, updated_at, *CLAIM_COLUMNS), the most recently
    changed first."""
    return [
        tuple(r)
        for r in conn.execute(
            f"SELECT id, updated_at, {', '.join(CLAIM_COLUMNS)} FROM checkpoints"
            " WHERE project_id = ? AND status = 'active' ORDER BY updated_at DESC, id DESC"
            " LIMIT ?",
            (project_id, limit),
        )
    ]


def children(conn: Connection, parent_id: str) -> list[tuple[str, str]]:
    """(id, status) of the task's subtasks, oldest first."""
    return [
        (str(r[0]), str(r[1]))
        for r in conn.execute(
            "SELECT id, status FROM checkpoints WHERE parent_id = ? ORDER BY created_at, id",
            (parent_id,),
        )
    ]


def done_commands(conn: Connection, session: str) -> list[tuple[str, str]]:
    """(task id, current revision body as JSON text) of the active tasks the session holds
    whose definition of done names something: what a command it runs may satisfy."""
    return [
        (str(r[0]), str(r[1]))
        for r in conn.execute(
            "SELECT c.id, r.body FROM checkpoints c JOIN checkpoint_revisions r"
            " ON r.id = c.current_revision WHERE c.holder_session = ? AND c.status = 'active'"
            " AND r.body LIKE '%\"done_when\"%'",
            (session,),
        )
    ]


def put_check(
    conn: Connection, checkpoint_id: str, command: str, result: str, stamp: str, session: str
) -> None:
    """The latest run of one of the task's done commands."""
    conn.execute(
        "INSERT OR REPLACE INTO task_checks (checkpoint_id, command, result, at, session_id)"
        " VALUES (?, ?, ?, ?, ?)",
        (checkpoint_id, command, result, stamp, session),
    )


def checks(conn: Connection, checkpoint_id: str) -> dict[str, tuple[str, str, str | None]]:
    """{command: (result, at, session)} of the task's done commands that ran."""
    return {
        str(c): (str(r), str(a), None if s is None else str(s))
        for c, r, a, s in conn.execute(
            "SELECT command, result, at, session_id FROM task_checks WHERE checkpoint_id = ?",
            (checkpoint_id,),
        )
    }


def at_work(conn: Connection, project_id: str, stamp: str, limit: int) -> list[tuple[Any, ...]]:
    """The project's active tasks as packets show them, each (id, holder_session,
    holder_about, claimed_at, lease_until, branch, parent_id, current revision body as JSON
    text), those held (lease live at `stamp`) first, then the most recently changed."""
    return [
        tuple(r)
        for r in conn.execute(
            "SELECT c.id, c.holder_session, c.holder_about, c.claimed_at, c.lease_until,"
            " c.branch, c.parent_id, r.body FROM checkpoints c JOIN checkpoint_revisions r"
            " ON r.id = c.current_revision WHERE c.project_id = ? AND c.status = 'active'"
            " ORDER BY coalesce(c.lease_until > ?, 0) DESC, c.updated_at DESC, c.id DESC LIMIT ?",
            (project_id, stamp, limit),
        )
    ]


def edited_since(conn: Connection, session: str, paths: list[str], since: str) -> list[str]:
    """Which of `paths` the session edited at or after `since` (its ledger)."""
    if not paths:
        return []
    marks = ", ".join("?" * len(paths))
    return [
        str(r[0])
        for r in conn.execute(
            f"SELECT DISTINCT path FROM session_ledger WHERE session_id = ? AND kind = 'edit'"
            f" AND at >= ? AND path IN ({marks})",
            (session, since, *paths),
        )
    ]


# A task a lead's session holds for the next subagent of a type: `holder_agent` "type:NAME"
# until that subagent starts and takes it (its agent id).
RESERVED = "type:"


def bind(conn: Connection, session: str, agent_type: str, agent_id: str, about: str) -> str | None:
    """The oldest task the session holds for a subagent of `agent_type`, now this subagent's
    (one statement per task: two subagents of one type never take the same one)."""
    for (task_id,) in conn.execute(
        "SELECT id FROM checkpoints WHERE holder_session = ? AND holder_agent = ?"
        " AND status = 'active' ORDER BY created_at, id",
        (session, RESERVED + agent_type),
    ).fetchall():
        conn.execute(
            "UPDATE checkpoints SET holder_agent = ?, holder_about = ? WHERE id = ?"
            " AND holder_agent = ?",
            (agent_id, about, task_id, RESERVED + agent_type),
        )
        if conn.changes():
            return str(task_id)
    return None


def bound_to(conn: Connection, session: str, agent_id: str) -> list[tuple[str, str, str | None]]:
    """(id, current revision id, what the claim says of its holder) of the active tasks the
    session's subagent `agent_id` holds."""
    return [
        (str(r[0]), str(r[1]), None if r[2] is None else str(r[2]))
        for r in conn.execute(
            "SELECT id, current_revision, holder_about FROM checkpoints WHERE holder_session = ?"
            " AND holder_agent = ? AND status = 'active'",
            (session, agent_id),
        )
    ]


def back_to_lead(conn: Connection, checkpoint_id: str) -> None:
    """The subagent finished: its task is its lead session's again."""
    conn.execute(
        "UPDATE checkpoints SET holder_agent = '', holder_about = NULL WHERE id = ?",
        (checkpoint_id,),
    )


def put_report(conn: Connection, values: tuple[Any, ...]) -> None:
    """(id, session_id, agent_id, agent_type, checkpoint_id, revision_id, events as JSON
    text, at)."""
    conn.execute(
        "INSERT INTO task_reports (id, session_id, agent_id, agent_type, checkpoint_id,"
        " revision_id, events, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        values,
    )


def events_since(
    conn: Connection, project_id: str, checkpoint_id: str, since: str
) -> list[tuple[str, str]]:
    """(type, content) of the active memories recorded on the task (`record_event` with its
    checkpoint) since `since`, oldest first."""
    return [
        (str(t), str(c))
        for t, c in conn.execute(
            "SELECT type, content FROM memories WHERE project_id = ? AND status = 'active'"
            " AND created_at >= ? AND source_ref = ? ORDER BY created_at, id",
            (project_id, since, f"checkpoint:{checkpoint_id}"),
        )
    ]


def waiting_reports(conn: Connection, session: str) -> list[tuple[Any, ...]]:
    """The session's reports not shown yet, oldest first: (id, agent_type, checkpoint_id,
    revision status, revision body as JSON text, events as JSON text)."""
    return [
        tuple(r)
        for r in conn.execute(
            "SELECT t.id, t.agent_type, t.checkpoint_id, r.status, r.body, t.events"
            " FROM task_reports t"
            " JOIN checkpoint_revisions r ON r.id = t.revision_id"
            " WHERE t.session_id = ? AND t.shown_at IS NULL ORDER BY t.at, t.id",
            (session,),
        )
    ]


def reports_shown(conn: Connection, report_ids: list[str], stamp: str) -> None:
    conn.executemany(
        "UPDATE task_reports SET shown_at = ? WHERE id = ?", [(stamp, i) for i in report_ids]
    )


def project_of(conn: Connection, checkpoint_id: str) -> str | None:
    row = conn.execute(
        "SELECT project_id FROM checkpoints WHERE id = ?", (checkpoint_id,)
    ).fetchone()
    return None if row is None else str(row[0])
