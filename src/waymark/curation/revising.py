"""A new revision of a memory from the fields a person changed: the one verb behind `waymark
supersede` (and `remember --supersedes`) and the dashboard's edit. Each field left out
carries the base memory's value; the result is checked and saved as every write is
(`make_draft`, then `agent_writes.save`: held for review when its text reads as an
instruction).

    revise(conn, project, base_id, changes, actor=..., client=...) -> Saved | Held
"""

from __future__ import annotations

from waymark.curation.agent_writes import Held, save
from waymark.memories import store
from waymark.memories.draft import Saved, make_draft, title_from
from waymark.memories.scope import scope_of
from waymark.projects.resolve import Project
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

# The fields `changes` may hold; any other is a mistake in the face that sent it.
FIELDS = ("type", "content", "title", "scope", "target", "tags", "priority", "pinned",
          "evidence", "valid_until", "key", "agent", "personal")  # fmt: skip


def revise(
    conn: Connection,
    project: Project,
    base_id: str,
    changes: dict[str, Any],
    *,
    actor: str = "user",
    client: str | None = None,
    base_dir: str | None = None,
    git_branch: str | None = None,
    session_id: str | None = None,
) -> Saved | Held:
    """`base_id` replaced by a revision with `changes`. `title` None: made from the text;
    left out: the base's, unless it was only the base's first line and the text changed.
    `scope` and `target` both left out: the base's (a target alone takes the scope it
    names, read against `base_dir`, else the project's root); a target typed now must be
    real now. `valid_until` given and new must be still to come."""
    from waymark.codemap.facts import declarations_of

    unknown = sorted(set(changes) - set(FIELDS))
    if unknown:
        raise ValueError(f"revise: unknown fields {unknown}")
    base = store.get(conn, base_id)
    given = changes.get("content")
    content = base.content if given is None else given
    if "title" in changes:
        title = changes["title"]
    else:  # the base's, unless it was only the base text's first line
        title = base.title if given is None or base.title != title_from(base.content) else None
    scope, target, where = _scope(changes, base, project.files, base_dir)
    until = changes.get("valid_until", base.valid_until)
    draft = make_draft(
        project,
        type=changes.get("type") or base.type,
        content=content,
        title=title,
        scope=scope,
        target=target,
        tags=changes.get("tags", base.tags),
        priority=changes.get("priority", base.priority),
        pinned=changes.get("pinned", base.pinned),
        evidence=changes.get("evidence", base.evidence),
        valid_until=until,
        key=changes.get("key", base.key),
        agent=changes.get("agent", base.agent),
        actor=actor,
        client=client,
        session_id=session_id,
        git_branch=git_branch,
        base_dir=where,
        check_symbol="target" in changes and changes["target"] != base.scope_target,
        mapped=declarations_of(conn, project.id) if project.files else None,
        personal=bool(changes.get("personal", False)),
        expiry_given="valid_until" in changes
        and (until or "")[:10] != (base.valid_until or "")[:10],
    )
    return save(conn, project, draft, supersedes=base.id)


def _scope(
    changes: dict[str, Any], base: Any, files: str | None, base_dir: str | None
) -> tuple[str, str | None, str | None]:
    """(scope, target, the directory a relative target is read against)."""
    scope, target = changes.get("scope"), changes.get("target")
    if "scope" not in changes and "target" not in changes:
        return base.scope_type, base.scope_target, files  # stored relative to the tree
    if scope == "global":
        return "global", None, None
    if scope is None and target is not None:
        scope = scope_of(target, files, base_dir)
    return scope or "project", target, base_dir or files
