"""Writes that wait for a person: the agent's in the `confirm` capture mode (kind `agent`),
and any whose text reads as an instruction to the agent (kind `flagged`, `hold`). Each is a
candidate in the review queue, decided by `waymark review` like any other, never applied by
itself, and never in a packet until approved.

A new memory is an `add`, one that replaces another (or an edit of it, applied to its text
now) a `supersede`, a forget an `archive`. The same write twice is one candidate.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from waymark.curation import candidates
from waymark.memories import edit, store
from waymark.memories.draft import Draft, Saved
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any


def queue(
    conn: Connection,
    project: Project,
    fields: dict[str, Any],
    *,
    supersedes: str | None = None,
    action: str | None = None,
    session_id: str | None = None,
    kind: str = "agent",
    reason: str | None = None,
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
            kind=kind,
            action=action,
            fields=fields if action != "archive" else {},
            sources=[supersedes] if supersedes else [],
            reason=(reason or f"the agent's {action} in capture mode confirm")
            + (f" (session {session_id})" if session_id else ""),
            fingerprint=f"{kind}:" + hashlib.sha256(seed.encode()).hexdigest(),
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


def hold(
    conn: Connection,
    project: Project,
    draft: Draft,
    *,
    supersedes: str | None = None,
    session_id: str | None = None,
) -> tuple[dict[str, Any], bool]:
    """A write whose text reads as an instruction to the agent (`draft.flags`) as a candidate
    (kind `flagged`): the memory exists only once a person approves it."""
    why = "; ".join(draft.flags)
    return queue(
        conn, project, _fields_of(draft), supersedes=supersedes, session_id=session_id,
        kind="flagged",
        reason=f"reads as an instruction to the agent ({why}); kept out of packets until approved",
    )  # fmt: skip


def _fields_of(draft: Draft) -> dict[str, Any]:
    """The candidate's fields of a validated, redacted draft: what approving it writes."""
    return {
        "type": draft.type, "content": draft.content, "title": draft.title,
        "scope": draft.scope_type, "target": draft.scope_target, "tags": draft.tags,
        "priority": draft.priority, "pinned": draft.pinned, "evidence": draft.evidence,
        "valid_until": draft.valid_until, "key": draft.key, "agent": draft.agent,
        "git_branch": draft.git_branch, "source_ref": draft.source_ref,
    }  # fmt: skip


@dataclass(frozen=True)
class Held:
    """A write held for review: its candidate, whether that is new, and why it was held."""

    candidate: dict[str, Any]
    created: bool
    flags: list[str]

    def to_dict(self) -> dict[str, Any]:
        queued = {k: self.candidate[k] for k in ("id", "action", "status")}
        flags = {"flags": self.flags} if self.flags else {}
        return {"queued": queued, "created": self.created, **flags, "similar": [],
                "redactions": 0}  # fmt: skip


def save(
    conn: Connection,
    project: Project,
    draft: Draft,
    *,
    supersedes: str | None = None,
    session_id: str | None = None,
    confirm: bool = False,
) -> Saved | Held:
    """The write as a memory; or held for review: when its text reads as an instruction to
    the agent (kind `flagged`), or with `confirm` (the agent's write in the capture mode
    `confirm`, kind `agent`). What every face that writes a memory calls."""
    if draft.redactions and not draft.personal and draft.scope_type != "global":
        from waymark.projects.sharing import is_shared

        if is_shared(project.files):
            from waymark.errors import SecretRefused

            raise SecretRefused(
                f"this project's memories go to the team, and this one held {draft.redactions} "
                "secret(s): nothing was saved. Leave the secret out, or keep it on this "
                "machine as a personal memory (`--personal`)",
                redactions=draft.redactions,
            )
    if draft.flags:
        if supersedes:
            store.get(conn, supersedes)  # NotFound now, not at review
        row, new = hold(conn, project, draft, supersedes=supersedes, session_id=session_id)
        return Held(row, new, draft.flags)
    if confirm:
        row, new = queue(conn, project, _fields_of(draft), supersedes=supersedes,
                         session_id=session_id)  # fmt: skip
        return Held(row, new, [])
    if supersedes:
        return store.supersede(conn, project, supersedes, draft)
    return store.remember(conn, project, draft)


def share(
    conn: Connection, project: Project, memory_id: str, *, session_id: str | None = None
) -> dict[str, Any]:
    """A personal memory of a shared project made the team's: through the review queue
    (a `share` candidate), or at once where the project says `[team] promote = "direct"`."""
    from waymark.errors import InvalidArgument
    from waymark.projects.sharing import is_shared, promotes_directly
    from waymark.storage.memories import is_personal

    memory = store.get(conn, memory_id)
    if not is_shared(project.files):
        raise InvalidArgument("this project is not shared: `[team] share = true` first")
    if not is_personal(conn, memory.id):
        raise InvalidArgument(f"{memory.id} is the team's already (only personal ones are shared)")
    if promotes_directly(project.files):
        with db.write(conn):
            store.share_in(conn, project, memory.id)
        return {"shared": memory.id, "queued": None}
    with db.write(conn):
        row, new = candidates.propose(
            conn, project.id, kind="share", action="share", sources=[memory.id],
            reason=f"share the personal memory {memory.id} with the team",
            fingerprint=f"share:{memory.id}", session_id=session_id,
        )  # fmt: skip
    return {"shared": None, "queued": {k: row[k] for k in ("id", "action", "status")},
            "created": new}  # fmt: skip
