"""SQL for `team_memories`: the team's shared memory revisions (the sibling of
`storage.memories`)."""

from __future__ import annotations

import json
from typing import Any


def insert_memory(
    conn: Any,
    memory: dict[str, Any],
    project_key: str,
    machine: str,
    embedding: list[float] | None = None,
) -> None:
    """Add a revision, or bring its status up to date (a revision's text never changes; its
    status does: superseded, archived, erased). The author is the role that sends it;
    `embedding` is the machine's vector of its text, for team recall."""
    conn.execute(
        "INSERT INTO team_memories (id, project_key, type, title, content, status, supersedes,"
        " superseded_by, content_hash, record, updated_at, machine, embedding)"
        " VALUES (%(id)s, %(key)s, %(type)s, %(title)s, %(content)s, %(status)s,"
        " %(supersedes)s, %(superseded_by)s, %(content_hash)s, %(record)s, %(updated_at)s,"
        " %(machine)s, %(embedding)s::vector)"
        " ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status,"
        " superseded_by = EXCLUDED.superseded_by, record = EXCLUDED.record,"
        " updated_at = EXCLUDED.updated_at, title = EXCLUDED.title,"
        " content = EXCLUDED.content, content_hash = EXCLUDED.content_hash,"
        " embedding = coalesce(EXCLUDED.embedding, team_memories.embedding)"
        " WHERE team_memories.updated_at <= EXCLUDED.updated_at",
        {
            **{k: memory[k] for k in ("id", "type", "title", "content", "status", "supersedes",
                                      "superseded_by", "content_hash", "updated_at")},
            "key": project_key,
            "record": json.dumps(memory),
            "machine": machine,
            "embedding": None if embedding is None else "[" + ",".join(map(repr, embedding)) + "]",
        },
    )  # fmt: skip


def get_memory(conn: Any, memory_id: str) -> dict[str, Any] | None:
    """The revision as its machine stored it, with who sent it (author, machine)."""
    row = conn.execute(
        "SELECT record, author, machine, project_key FROM team_memories WHERE id = %s",
        (memory_id,),
    ).fetchone()
    if row is None:
        return None
    record = row[0] if isinstance(row[0], dict) else json.loads(row[0])
    return {**record, "_author": row[1], "_machine": row[2], "_project_key": row[3]}
