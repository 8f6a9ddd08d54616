"""Write and read memory records: remember, supersede, archive, erase, show, history."""

from __future__ import annotations

import json

import apsw

from waymark.base import clock
from waymark.errors import Conflict, InvalidArgument, NotFound
from waymark.memories.draft import Draft, Saved, content_hash
from waymark.memories.record import COLUMNS, Memory, from_row
from waymark.projects.resolve import Project
from waymark.recall import lexical as fts
from waymark.storage import connection as db
from waymark.storage.events import log_event

SIMILAR_CANDIDATES = 20
SIMILAR_THRESHOLD = 88


def remember(conn: apsw.Connection, project: Project, draft: Draft) -> Saved:
    """Store `draft`, or return the exact active duplicate that already holds it."""
    project_id = None if draft.scope_type == "global" else project.id
    with db.write(conn):
        row = conn.execute(
            f"SELECT {COLUMNS} FROM memories WHERE project_id IS ? AND status = 'active'"
            " AND content_hash = ? AND type = ? AND scope_type = ? AND scope_target IS ?",
            (
                project_id,
                content_hash(draft.content),
                draft.type,
                draft.scope_type,
                draft.scope_target,
            ),
        ).fetchone()
        if row is not None:
            return Saved(from_row(row), created=False, similar=[], redactions=draft.redactions)
        if draft.key is not None:
            _refuse_taken_key(conn, project_id, draft.key)
        similar = _similar(conn, project_id, draft.content)
        memory = insert(conn, project, draft)
    return Saved(memory, created=True, similar=similar, redactions=draft.redactions)


def insert(
    conn: apsw.Connection, project: Project, draft: Draft, *, supersedes: str | None = None
) -> Memory:
    """Write `draft` as a new active record inside the caller's transaction."""
    project_id = None if draft.scope_type == "global" else project.id
    memory_id = clock.new_id()
    stamp = clock.now()
    conn.execute(
        f"INSERT INTO memories ({COLUMNS}) VALUES ({', '.join('?' * 26)})",
        (
            memory_id,
            project_id,
            draft.type,
            draft.title,
            draft.content,
            draft.scope_type,
            draft.scope_target,
            json.dumps(draft.tags),
            draft.priority,
            int(draft.pinned),
            "active",
            draft.actor,
            draft.client,
            draft.session_id,
            draft.source_ref,
            json.dumps(draft.evidence),
            draft.git_branch,
            draft.valid_until,
            draft.event_time or stamp,
            stamp,
            stamp,
            content_hash(draft.content),
            draft.key,
            supersedes,
            None,
            None,
        ),
    )
    log_event(
        conn,
        "supersede" if supersedes else draft.actor if draft.actor == "import" else "remember",
        project_id=project_id,
        memory_id=memory_id,
        actor=draft.actor,
        session_id=draft.session_id,
        supersedes=supersedes,
        redactions=draft.redactions,
    )
    return get(conn, memory_id)


def _refuse_taken_key(conn: apsw.Connection, project_id: str | None, key: str) -> None:
    row = conn.execute(
        "SELECT id FROM memories WHERE project_id IS ? AND key = ? AND status = 'active'",
        (project_id, key),
    ).fetchone()
    if row is not None:
        raise Conflict(
            f"key {key!r} already belongs to active memory {row[0]}; supersede it instead",
            key=key,
            current=row[0],
        )


def _similar(conn: apsw.Connection, project_id: str | None, content: str) -> list[str]:
    from rapidfuzz import fuzz  # only writes pay for it, never a hook

    expr = fts.match_expression(content)
    if expr is None:
        return []
    rows = conn.execute(
        "SELECT m.id, m.content FROM memories_fts f JOIN memories m ON m.rowid = f.rowid"
        " WHERE memories_fts MATCH ? AND m.project_id IS ? AND m.status = 'active'"
        " ORDER BY f.rank LIMIT ?",
        (expr, project_id, SIMILAR_CANDIDATES),
    ).fetchall()
    mine = " ".join(content.split()).casefold()
    return [
        str(memory_id)
        for memory_id, other in rows
        if isinstance(other, str)
        if fuzz.token_sort_ratio(mine, " ".join(other.split()).casefold()) >= SIMILAR_THRESHOLD
    ]


def supersede(conn: apsw.Connection, project: Project, old_id: str, draft: Draft) -> Saved:
    """Atomically replace active record `old_id` with `draft`; the old one links forward.

    Two callers racing on one record queue on BEGIN IMMEDIATE; the second finds it
    superseded and gets a conflict naming the winner.
    """
    with db.write(conn):
        memory = replace_active(conn, project, old_id, draft)
    return Saved(memory, created=True, similar=[], redactions=draft.redactions)


def replace_active(conn: apsw.Connection, project: Project, old_id: str, draft: Draft) -> Memory:
    """The supersede itself, inside the caller's transaction."""
    old = _get_in(conn, project, old_id)
    if old.status != "active":
        raise Conflict(
            f"memory {old_id} is {old.status}"
            + (f" (by {old.superseded_by})" if old.superseded_by else "")
            + "; only an active memory can be superseded",
            id=old_id,
            status=old.status,
            current=old.superseded_by,
        )
    if draft.key is not None and draft.key != old.key:
        _refuse_taken_key(conn, old.project_id, draft.key)
    memory = insert(conn, project, draft, supersedes=old_id)
    conn.execute(
        "UPDATE memories SET status = 'superseded', superseded_by = ?, updated_at = ? WHERE id = ?",
        (memory.id, clock.now(), old_id),
    )
    return memory


def archive(
    conn: apsw.Connection,
    project: Project,
    memory_id: str,
    *,
    actor: str = "user",
    reason: str | None = None,
) -> Memory:
    """Retire an active memory; it stays readable and can be listed with include_inactive."""
    with db.write(conn):
        memory = _get_in(conn, project, memory_id)
        if memory.status != "active":
            raise Conflict(
                f"memory {memory_id} is {memory.status}, not active",
                id=memory_id,
                status=memory.status,
            )
        conn.execute(
            "UPDATE memories SET status = 'archived', updated_at = ? WHERE id = ?",
            (clock.now(), memory_id),
        )
        log_event(
            conn,
            "archive",
            project_id=memory.project_id,
            memory_id=memory_id,
            actor=actor,
            reason=reason,
        )
    return get(conn, memory_id)


def erase(
    conn: apsw.Connection, project: Project, memory_id: str, *, reason: str, actor: str = "user"
) -> Memory:
    """Drop the payload for good; keep a tombstone with id, time and reason."""
    if not reason or not reason.strip():
        raise InvalidArgument("erase needs a reason (it is kept on the tombstone)")
    with db.write(conn):
        memory = _get_in(conn, project, memory_id)
        if memory.status == "erased":
            raise Conflict(f"memory {memory_id} is already erased", id=memory_id, status="erased")
        conn.execute(
            "UPDATE memories SET status = 'erased', title = '', content = '', tags = '[]',"
            " evidence = '[]', source_ref = NULL, content_hash = '', erased_reason = ?,"
            " updated_at = ? WHERE id = ?",
            (reason.strip()[:500], clock.now(), memory_id),
        )
        log_event(conn, "erase", project_id=memory.project_id, memory_id=memory_id, actor=actor)
    # Push the old pages out of the WAL too; secure_delete already zeroed them in the file.
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return get(conn, memory_id)


def get(conn: apsw.Connection, memory_id: str) -> Memory:
    row = conn.execute(f"SELECT {COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
    if row is None:
        raise NotFound(f"no memory with id {memory_id!r}", id=memory_id)
    return from_row(row)


def _get_in(conn: apsw.Connection, project: Project, memory_id: str) -> Memory:
    memory = get(conn, memory_id)
    if memory.project_id not in (project.id, None):
        raise NotFound(f"memory {memory_id} belongs to another project", id=memory_id)
    return memory


def history(conn: apsw.Connection, memory_id: str) -> list[Memory]:
    """The whole supersession chain through `memory_id`, oldest first."""
    first = get(conn, memory_id)
    seen = {first.id}
    while first.supersedes and first.supersedes not in seen:
        first = get(conn, first.supersedes)
        seen.add(first.id)
    chain = [first]
    while chain[-1].superseded_by and chain[-1].superseded_by not in {m.id for m in chain}:
        chain.append(get(conn, chain[-1].superseded_by))
    return chain
