"""The agent's writes in the `confirm` capture mode: each one a candidate in the review queue
(kind `agent`), decided by `waymark review` like any other, never applied by itself.

A new memory is an `add`, one that replaces another (or an edit of it, applied to its text
now) a `supersede`, a forget an `archive`. The same write twice is one candidate.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from waymark.curation import candidates
from waymark.memories import edit, store
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage.connection import Connection


def queue(
    conn: Connection,
    project: Project,
    fields: dict[str, Any],
    *,
    supersedes: str | None = None,
    action: str | None = None,
    session_id: str | None = None,
) -> tuple[dict[str, Any], bool]:
    """Propose the write; (its candidate, whether it is new)."""
    action = action or ("supersede" if supersedes else "add")
    if supersedes:
        store.get(conn, supersedes)  # NotFound now, not at review
    fields = {k: v for k, v in fields.items() if v not in (None, [], "")}
    seed = json.dumps([action, supersedes, fields], sort_keys=True, default=str)
    with db.write(conn):
        return candidates.propose(
            conn,
            project.id,
            kind="agent",
            action=action,
            fields=fields if action != "archive" else {},
            sources=[supersedes] if supersedes else [],
            reason=f"the agent's {action} in capture mode confirm"
            + (f" (session {session_id})" if session_id else ""),
            fingerprint="agent:" + hashlib.sha256(seed.encode()).hexdigest(),
            session_id=session_id,
        )


def queue_edit(
    conn: Connection, project: Project, target: str, ops: Any, *, session_id: str | None = None
) -> tuple[dict[str, Any], bool]:
    """An edit of memory `target`: its edited text proposed to supersede it."""
    current = store.get(conn, target)
    fields = {
        "type": current.type, "content": edit.apply_ops(current.content, edit.parse_ops(ops)),
        "title": current.title, "scope": current.scope_type, "target": current.scope_target,
        "tags": current.tags, "priority": current.priority, "pinned": current.pinned,
        "key": current.key,
    }  # fmt: skip
    return queue(conn, project, fields, supersedes=target, session_id=session_id)
