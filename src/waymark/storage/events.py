"""The audit trail: one `events` row per operation, ids and metadata only."""

from __future__ import annotations

from waymark.base import clock
from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    import apsw


def log_event(
    conn: apsw.Connection,
    op: str,
    *,
    project_id: str | None,
    memory_id: str | None = None,
    actor: str | None = None,
    session_id: str | None = None,
    **detail: Any,
) -> None:
    """Append to the audit trail. Ids and metadata only: never a payload erase must reach."""
    conn.execute(
        "INSERT INTO events (at, op, project_id, memory_id, actor, session_id, detail)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            clock.now(),
            op,
            project_id,
            memory_id,
            actor,
            session_id,
            json.dumps(detail, sort_keys=True),
        ),
    )


def count_use(conn: apsw.Connection, memory_ids: list[str], stamp: str) -> None:
    """Count a real use of each memory (put in front of the model, or opened), inside the
    caller's transaction. Retrieval alone never counts: ranking must not depend on reads."""
    for memory_id in dict.fromkeys(memory_ids):
        conn.execute(
            "INSERT INTO memory_use (memory_rowid, uses, last_used, shown) SELECT rowid, 1, ?, 1"
            " FROM memories WHERE id = ? ON CONFLICT (memory_rowid) DO UPDATE SET"
            " uses = uses + 1, shown = shown + 1, last_used = excluded.last_used",
            (stamp, memory_id),
        )


def query_events(
    conn: apsw.Connection,
    *,
    project_id: str | None,
    everywhere: bool,
    ops: Sequence[str],
    since: str | None,
    limit: int,
    after_seq: int | None = None,
) -> list[dict[str, Any]]:
    """Audit rows, newest first: one project's and the store-wide ones (no project), or
    `everywhere`; `ops` are exact names or prefixes ending in '.' ("checkpoint."); with
    `after_seq`, only those logged after that one."""
    where, params = [], []  # type: tuple[list[str], list[Any]]
    if after_seq is not None:
        where.append("seq > ?")
        params.append(after_seq)
    if not everywhere:
        where.append("(project_id = ? OR project_id IS NULL)")
        params.append(project_id)
    if ops:
        alts = []
        for op in ops:
            if op.endswith("."):
                alts.append("substr(op, 1, ?) = ?")
                params += [len(op), op]
            else:
                alts.append("op = ?")
                params.append(op)
        where.append("(" + " OR ".join(alts) + ")")
    if since:
        where.append("at >= ?")
        params.append(since)
    sql = (
        "SELECT seq, at, op, project_id, memory_id, actor, session_id, detail FROM events"
        + (f" WHERE {' AND '.join(where)}" if where else "")
        + " ORDER BY at DESC, seq DESC LIMIT ?"
    )
    keys = ("seq", "at", "op", "project_id", "memory_id", "actor", "session_id", "detail")
    out = []
    for row in conn.execute(sql, (*params, limit)):
        item = dict(zip(keys, row, strict=True))
        item["detail"] = json.loads(item["detail"]) if item["detail"] else {}
        out.append(item)
    return out


def last_event_of(
    conn: apsw.Connection, memory_id: str, op: str, *, oldest: bool = False
) -> tuple[str, str | None, dict[str, Any]] | None:
    """(at, actor, detail) of the newest `op` event of memory `memory_id` (the oldest, with
    `oldest`), or None."""
    order = "at, seq" if oldest else "at DESC, seq DESC"
    for at, actor, detail in conn.execute(
        "SELECT at, actor, detail FROM events WHERE memory_id = ? AND op = ?"
        f" ORDER BY {order} LIMIT 1",
        (memory_id, op),
    ):
        return at, actor, json.loads(detail) if detail else {}
    return None


MEMORY_OPS = ("remember", "supersede", "import", "edit", "retarget", "archive", "unarchive",
              "erase", "share")  # fmt: skip


# A checkpoint's revisions, each naming its checkpoint and revision in the event's detail.
CHECKPOINT_OPS = ("checkpoint.create", "checkpoint.revise", "checkpoint.record_lesson",
                  "checkpoint.complete", "checkpoint.abandon", "checkpoint.release",
                  "checkpoint.assign")  # fmt: skip


def events_after(conn: apsw.Connection, seq: int, limit: int) -> list[dict[str, Any]]:
    """The memory and checkpoint events after `seq`, oldest first (a sync's outbox): seq,
    at, op, project_id, memory_id, actor, detail."""
    keys = ("seq", "at", "op", "project_id", "memory_id", "actor", "detail")
    marks = ", ".join("?" * len(MEMORY_OPS))
    saves = ", ".join("?" * len(CHECKPOINT_OPS))
    out = []
    for row in conn.execute(
        "SELECT seq, at, op, project_id, memory_id, actor, detail FROM events WHERE seq > ?"
        f" AND ((memory_id IS NOT NULL AND op IN ({marks})) OR op IN ({saves}))"
        " ORDER BY seq LIMIT ?",
        (seq, *MEMORY_OPS, *CHECKPOINT_OPS, limit),
    ):
        item = dict(zip(keys, row, strict=True))
        item["detail"] = json.loads(item["detail"]) if item["detail"] else {}
        out.append(item)
    return out


def last_seq(conn: apsw.Connection) -> int:
    """The newest audit event's seq (0: none yet)."""
    for (seq,) in conn.execute("SELECT max(seq) FROM events"):
        return int(seq or 0)
    return 0


def event_with(conn: apsw.Connection, op: str, key: str, value: str) -> str | None:
    """The memory of the newest `op` event whose detail has `key` equal to `value`."""
    row: Any = conn.execute(
        "SELECT memory_id FROM events WHERE op = ? AND json_extract(detail, '$.' || ?) = ?"
        " ORDER BY seq DESC LIMIT 1",
        (op, key, value),
    ).fetchone()
    return None if row is None else row[0]


def last_event_at(conn: apsw.Connection, op: str, project_id: str | None) -> str | None:
    """When the newest `op` event of the project happened."""
    row: Any = conn.execute(
        "SELECT max(at) FROM events WHERE op = ? AND project_id IS ?", (op, project_id)
    ).fetchone()
    return None if row is None else row[0]


def add_feedback(
    conn: apsw.Connection,
    memory_id: str,
    verdict: str,
    terms: list[str],
    stamp: str,
    actor: str | None,
    session_id: str | None,
) -> bool:
    """One verdict on a memory, with the recall's words; False when no memory has that id."""
    conn.execute(
        "INSERT INTO memory_feedback (memory_rowid, verdict, terms, actor, session_id, at)"
        " SELECT rowid, ?, ?, ?, ?, ? FROM memories WHERE id = ?",
        (verdict, json.dumps(terms), actor, session_id, stamp, memory_id),
    )
    return bool(conn.changes())


def feedback_counts(conn: apsw.Connection, memory_id: str) -> dict[str, int]:
    counts = dict.fromkeys(("helpful", "not_helpful", "stale", "wrong"), 0)
    for verdict, n in conn.execute(
        "SELECT f.verdict, count(*) FROM memory_feedback f JOIN memories m"
        " ON m.rowid = f.memory_rowid WHERE m.id = ? GROUP BY f.verdict",
        (memory_id,),
    ):
        counts[str(verdict)] = int(n)
    return counts


def ranking_feedback(conn: apsw.Connection, rowids: Sequence[int]) -> dict[int, list]:
    """rowid -> [(+1 helpful | -1 not helpful, the recall's words)] of those memories."""
    out: dict[int, list] = {}
    for rowid, verdict, terms in conn.execute(
        "SELECT memory_rowid, verdict, terms FROM memory_feedback WHERE memory_rowid IN"
        " (SELECT value FROM json_each(?)) AND verdict IN ('helpful', 'not_helpful')"
        " AND terms != '[]'",
        (json.dumps(list(rowids)),),
    ):
        out.setdefault(int(rowid), []).append(
            (1 if verdict == "helpful" else -1, json.loads(terms))
        )
    return out


def session_events(conn: apsw.Connection, session_id: str, limit: int) -> list[dict[str, Any]]:
    """A session's own audit events, oldest first: seq, at, op, memory_id, actor, detail."""
    keys = ("seq", "at", "op", "memory_id", "actor", "detail")
    out = []
    for row in conn.execute(
        "SELECT seq, at, op, memory_id, actor, detail FROM events WHERE session_id = ?"
        " ORDER BY seq LIMIT ?",
        (session_id, limit),
    ):
        item = dict(zip(keys, row, strict=True))
        item["detail"] = json.loads(item["detail"]) if item["detail"] else {}
        out.append(item)
    return out


def named_in_session(
    conn: apsw.Connection, session_id: str, memory_ids: Sequence[str]
) -> dict[str, str]:
    """memory id -> how the session's agent named it: an audited change it made (`tool`)
    or feedback it gave (`feedback`), among `memory_ids`."""
    if not memory_ids:
        return {}
    marks = ", ".join("?" * len(memory_ids))
    out: dict[str, str] = {}
    for (memory_id,) in conn.execute(
        f"SELECT DISTINCT memory_id FROM events WHERE session_id = ? AND memory_id IN ({marks})"
        " AND actor = 'agent'",
        (session_id, *memory_ids),
    ):
        out[str(memory_id)] = "tool"
    for (memory_id,) in conn.execute(
        "SELECT DISTINCT m.id FROM memory_feedback f JOIN memories m ON m.rowid = f.memory_rowid"
        f" WHERE f.session_id = ? AND m.id IN ({marks})",
        (session_id, *memory_ids),
    ):
        out[str(memory_id)] = "feedback"
    return out


def logged_ops(conn: apsw.Connection) -> list[str]:
    """Every op name the store has logged, sorted (a scan of the log: for a command that
    found nothing, never a hook)."""
    return [str(r[0]) for r in conn.execute("SELECT DISTINCT op FROM events ORDER BY op")]
