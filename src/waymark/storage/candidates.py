"""The review queue's rows: candidates Waymark inferred, waiting for approval.

Plain functions over a connection, inside the caller's transaction where they write. The
JSON columns (`fields`, `sources`, `evidence`) are read back as Python values.
"""

from __future__ import annotations

from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.storage.connection import Connection

COLUMNS = (
    "id", "project_id", "kind", "action", "fields", "sources", "evidence", "reason",
    "fingerprint", "status", "memory_id", "review_note", "reviewed_by", "reviewed_at",
    "session_id", "created_at", "updated_at",
)  # fmt: skip
_JSON = ("fields", "sources", "evidence")
STATUSES = ("pending", "approved", "rejected")  # waiting, and the two a review decides


def _row(values: Any) -> dict[str, Any]:
    row = dict(zip(COLUMNS, values, strict=True))
    for name in _JSON:
        row[name] = json.loads(row[name])
    return row


def by_fingerprint(conn: Connection, project_id: str, fingerprint: str) -> dict[str, Any] | None:
    found = conn.execute(
        f"SELECT {', '.join(COLUMNS)} FROM candidates WHERE project_id = ? AND fingerprint = ?",
        (project_id, fingerprint),
    ).fetchone()
    return None if found is None else _row(found)


def get_candidate(conn: Connection, candidate_id: str) -> dict[str, Any] | None:
    found = conn.execute(
        f"SELECT {', '.join(COLUMNS)} FROM candidates WHERE id = ?", (candidate_id,)
    ).fetchone()
    return None if found is None else _row(found)


def ids_starting(conn: Connection, prefix: str, limit: int = 3) -> list[str]:
    """Candidate ids beginning with `prefix` (for short ids), at most `limit`."""
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT id FROM candidates WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
            (prefix, prefix + "\U0010ffff", limit),
        )
    ]


def insert_candidate(conn: Connection, row: dict[str, Any]) -> None:
    values = [json.dumps(row[c]) if c in _JSON else row[c] for c in COLUMNS]
    conn.execute(
        f"INSERT INTO candidates ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
        values,
    )


def refresh_candidate(
    conn: Connection, candidate_id: str, fields: dict, evidence: list, reason: str, stamp: str
) -> None:
    """A pending candidate's proposal, brought up to date (the same inference seen again)."""
    conn.execute(
        "UPDATE candidates SET fields = ?, evidence = ?, reason = ?, updated_at = ?"
        " WHERE id = ? AND status = 'pending'",
        (json.dumps(fields), json.dumps(evidence), reason, stamp, candidate_id),
    )


def mark_reviewed(
    conn: Connection,
    candidate_id: str,
    status: str,
    *,
    memory_id: str | None,
    note: str | None,
    actor: str,
    stamp: str,
) -> None:
    conn.execute(
        "UPDATE candidates SET status = ?, memory_id = ?, review_note = ?, reviewed_by = ?,"
        " reviewed_at = ?, updated_at = ? WHERE id = ?",
        (status, memory_id, note, actor, stamp, stamp, candidate_id),
    )


def list_candidates(
    conn: Connection,
    project_id: str,
    *,
    statuses: tuple[str, ...] = ("pending",),
    kind: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """The project's candidates of those statuses (of one kind, proposed from `since` and
    before `until`), most recently proposed or seen first."""
    where, params = _listed(project_id, statuses, kind, since, until)
    rows = conn.execute(
        f"SELECT {', '.join(COLUMNS)} FROM candidates WHERE {where}"
        " ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?",
        (*params, limit, offset),
    ).fetchall()
    return [_row(r) for r in rows]


def count_listed(
    conn: Connection,
    project_id: str,
    *,
    statuses: tuple[str, ...] = ("pending",),
    kind: str | None = None,
    since: str | None = None,
    until: str | None = None,
) -> int:
    """How many candidates `list_candidates` pages through with the same filters."""
    where, params = _listed(project_id, statuses, kind, since, until)
    row: Any = conn.execute(f"SELECT count(*) FROM candidates WHERE {where}", params).fetchone()
    return int(row[0])


def _listed(
    project_id: str,
    statuses: tuple[str, ...],
    kind: str | None,
    since: str | None,
    until: str | None,
) -> tuple[str, list[Any]]:
    where = f"project_id = ? AND status IN ({', '.join('?' * len(statuses))})"
    params: list[Any] = [project_id, *statuses]
    for clause, value in (("kind = ?", kind), ("created_at >= ?", since),
                          ("created_at < ?", until)):  # fmt: skip
        if value is not None:
            where += f" AND {clause}"
            params.append(value)
    return where, params


def reopen(conn: Connection, candidate_id: str, stamp: str) -> None:
    """A decided candidate waits for review again (its decision undone)."""
    conn.execute(
        "UPDATE candidates SET status = 'pending', memory_id = NULL, review_note = NULL,"
        " reviewed_by = NULL, reviewed_at = NULL, updated_at = ? WHERE id = ?",
        (stamp, candidate_id),
    )


def count_candidates(conn: Connection, project_id: str, status: str = "pending") -> int:
    """How many candidates of the project have `status` (one index lookup: hooks ask)."""
    row: Any = conn.execute(
        "SELECT count(*) FROM candidates WHERE project_id = ? AND status = ?",
        (project_id, status),
    ).fetchone()
    return int(row[0])


def candidate_counts(conn: Connection, project_id: str) -> dict[str, int]:
    """{status: n} for the project."""
    return {
        str(status): int(n)
        for status, n in conn.execute(
            "SELECT status, count(*) FROM candidates WHERE project_id = ? GROUP BY status",
            (project_id,),
        )
    }


def pending_since(conn: Connection, project_id: str, limit: int) -> list[str]:
    """When each of the project's waiting candidates was proposed (at most `limit`)."""
    return [str(at) for (at,) in conn.execute(
        "SELECT created_at FROM candidates WHERE project_id = ? AND status = 'pending' LIMIT ?",
        (project_id, limit),
    )]  # fmt: skip
