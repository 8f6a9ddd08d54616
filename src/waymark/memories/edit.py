"""Atomic edits: change one memory by a list of operations, all or nothing.

Each operation works on the content as the ones before it left it: `add` appends text on a
line of its own, `remove` deletes an exact text, `replace` swaps an exact text for another.
An old text that is missing or occurs more than once, a result that is empty, would hold a
secret (the redactor would change it) or is over the size limit, rejects the whole batch
with the failing operation named. The result is one new revision that supersedes the memory
(one audit event, `edit`, with the payload's digest), so a retry of the same payload finds
that event and reports `already_applied` instead of applying it twice.
"""

from __future__ import annotations

import hashlib
import json

from waymark.errors import InvalidArgument
from waymark.memories import store
from waymark.memories.draft import MAX_CONTENT, revision_of
from waymark.memories.injection import instruction_like
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage.connection import Connection
from waymark.storage.events import event_with

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

OPS = ("add", "remove", "replace")
MAX_OPS = 50


def parse_ops(ops: Any) -> list[dict[str, str]]:
    """Validated operations: [{op: add, text}, {op: remove, old}, {op: replace, old, text}]."""
    if not isinstance(ops, list) or not ops:
        raise InvalidArgument("an edit needs a list of operations")
    if len(ops) > MAX_OPS:
        raise InvalidArgument(f"{len(ops)} operations; at most {MAX_OPS} in one edit")
    out = []
    for i, op in enumerate(ops):
        kind = op.get("op") if isinstance(op, dict) else None
        if kind not in OPS:
            raise InvalidArgument(
                f"operation {i + 1}: op must be one of {', '.join(OPS)}", index=i, valid=list(OPS)
            )
        need = {"add": ("text",), "remove": ("old",), "replace": ("old", "text")}[kind]
        extra = sorted(set(op) - {"op", *need})
        if extra:
            raise InvalidArgument(
                f"operation {i + 1} ({kind}) takes no {', '.join(extra)}", index=i
            )
        for name in need:
            if not isinstance(op.get(name), str) or (name == "old" and not op[name]):
                raise InvalidArgument(f"operation {i + 1} ({kind}) needs {name} as text", index=i)
        out.append({"op": kind, **{name: op[name] for name in need}})
    return out


def apply_ops(content: str, ops: list[dict[str, str]]) -> str:
    """`content` after every operation in order; InvalidArgument naming the first that
    cannot apply (its old text missing or not unique)."""
    for i, op in enumerate(ops):
        if op["op"] == "add":
            content = content.rstrip("\n") + "\n" + op["text"] if content.strip() else op["text"]
            continue
        found = content.count(op["old"])
        if found != 1:
            why = "is not in the content" if found == 0 else f"occurs {found} times"
            raise InvalidArgument(
                f"operation {i + 1} ({op['op']}): the old text {why}; nothing was changed",
                index=i,
                reason="missing" if found == 0 else "ambiguous",
            )
        content = content.replace(op["old"], op.get("text", ""), 1)
    return content


def digest(memory_id: str, ops: list[dict[str, str]]) -> str:
    canonical = json.dumps([memory_id, ops], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8", "replace")).hexdigest()


def edit(
    conn: Connection,
    project: Project,
    memory_id: str,
    ops: Any,
    *,
    actor: str = "user",
    client: str | None = None,
    session_id: str | None = None,
) -> dict[str, Any]:
    """Apply `ops` to active memory `memory_id` as one new revision: {status: applied |
    already_applied, memory, supersedes}."""
    parsed = parse_ops(ops)
    memory_id = store.full_id(conn, memory_id)
    payload = digest(memory_id, parsed)
    with db.write(conn):
        done = event_with(conn, "edit", "payload", payload)
        if done is not None:
            return {
                "status": "already_applied",
                "memory": store.get(conn, done).to_dict(),
                "supersedes": memory_id,
            }
        old = store.active_in(conn, project, memory_id, "edited")
        content = apply_ops(old.content, parsed)
        if not content.strip():
            raise InvalidArgument("the edit leaves the memory empty; nothing was changed")
        if len(content) > MAX_CONTENT:
            raise InvalidArgument(
                f"the edited content is {len(content)} characters; the limit is {MAX_CONTENT}",
                size=len(content),
                limit=MAX_CONTENT,
            )
        if content == old.content:
            raise InvalidArgument("the operations leave the content as it is; nothing to save")
        draft = revision_of(
            project, old, content=content, actor=actor, client=client, session_id=session_id
        )
        if draft.redactions or draft.content != content:
            raise InvalidArgument(
                "the edited content would hold a secret or a <private> span, which Waymark "
                "never stores; nothing was changed",
                redactions=draft.redactions,
            )
        added = set(draft.flags) - set(instruction_like(old.title, old.content))
        if added:
            raise InvalidArgument(
                f"the edited content {'; '.join(sorted(added))}: an edit never lets that into "
                "packets; save it with remember (it waits for review) or change the text",
                flags=sorted(added),
            )
        new = store.replace_active(
            conn, project, memory_id, draft, audit={"op": "edit", "payload": payload,
                                                    "ops": len(parsed)}
        )  # fmt: skip
    return {"status": "applied", "memory": new.to_dict(), "supersedes": memory_id}
