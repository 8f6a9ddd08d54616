"""SQL for claims on the team store (the sibling of `storage.tasks`): which client session of
which machine holds each shared task, since when and until when its lease runs (m004).

A claim is one statement: `INSERT ... ON CONFLICT DO UPDATE ... WHERE` open, the same
session, or a lease passed, `RETURNING` what it wrote; PostgreSQL lets one of two machines
racing for a task through, and the other's statement returns nothing.
"""

from __future__ import annotations

from typing import Any

# What `holders` returns of each claim.
HOLDER_COLUMNS = (
    "checkpoint_id", "holder_session", "holder_about", "machine", "claimed_at", "lease_until",
    "branch",
)  # fmt: skip


def take(
    conn: Any,
    checkpoint_id: str,
    session: str,
    agent: str,
    about: str,
    stamp: str,
    lease_until: str,
    where: tuple[str | None, str | None, str | None],
    project_key: str,
    machine: str,
) -> bool:
    """Claim the task for `session` of `machine` (`storage.tasks.take`'s rule: open, this
    session's already, or its lease passed at `stamp`); False when another holds it."""
    row = conn.execute(
        "INSERT INTO team_claims (checkpoint_id, project_key, holder_session, holder_about,"
        " machine, claimed_at, lease_until, branch) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (checkpoint_id) DO UPDATE SET"
        " claimed_at = CASE WHEN team_claims.holder_session = EXCLUDED.holder_session"
        " AND team_claims.lease_until > %s THEN team_claims.claimed_at"
        " ELSE EXCLUDED.claimed_at END,"
        " holder_session = EXCLUDED.holder_session, holder_about = EXCLUDED.holder_about,"
        " machine = EXCLUDED.machine, lease_until = EXCLUDED.lease_until,"
        " branch = EXCLUDED.branch"
        " WHERE team_claims.holder_session IS NULL"
        " OR team_claims.holder_session = EXCLUDED.holder_session"
        " OR team_claims.lease_until <= %s RETURNING checkpoint_id",
        (checkpoint_id, project_key, session, about, machine, stamp, lease_until, where[1],
         stamp, stamp),
    ).fetchone()  # fmt: skip
    return row is not None


def let_go(conn: Any, checkpoint_id: str, session: str) -> None:
    """`session` no longer holds the task (released, finished, or its session ended)."""
    conn.execute(
        "UPDATE team_claims SET holder_session = NULL, holder_about = NULL, machine = NULL,"
        " claimed_at = NULL, lease_until = NULL, branch = NULL"
        " WHERE checkpoint_id = %s AND holder_session = %s",
        (checkpoint_id, session),
    )


def holders(conn: Any, project_key: str) -> list[dict[str, Any]]:
    """The project's held claims (lapsed ones too), HOLDER_COLUMNS each."""
    rows = conn.execute(
        f"SELECT {', '.join(HOLDER_COLUMNS)} FROM team_claims WHERE project_key = %s"
        " AND holder_session IS NOT NULL",
        (project_key,),
    ).fetchall()
    return [dict(zip(HOLDER_COLUMNS, row, strict=True)) for row in rows]
