"""Write and read memory records: remember, supersede, archive, erase, show, history."""

from __future__ import annotations

from waymark.base import clock, redact
from waymark.base import jsonlite as json
from waymark.base.text import mend
from waymark.errors import Conflict, InvalidArgument, NotFound, TeamMemory
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage import memories as rows
from waymark.storage.events import last_event_of, log_event
from waymark.storage.match import match_expression
from waymark.storage.memories import Memory
from waymark.storage.observations import drop_observations

# The write path's names (`draft`: dataclasses, the injection scan) are imported where a
# write needs them: `waymark show`, `history` and the other reads no longer load them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.memories.draft import Draft, Saved
    from waymark.storage.connection import Connection

SIMILAR_CANDIDATES = 20
SIMILAR_THRESHOLD = 88


def shared_text(record: dict[str, Any]) -> str:
    """What of a memory would leave the machine (team sync, a repository's folder), as one
    text for the redactor: every field a revision carries but its ids, times and numbers."""
    content, title = record.get("content") or "", record.get("title") or ""
    if content.startswith(title.rstrip("…")):
        title = ""  # a title made from the content's start: checked with it
    return "\n".join([
        title, content, record.get("key") or "", record.get("source_ref") or "",
        record.get("scope_target") or record.get("target") or "",
        record.get("git_branch") or "", json.dumps(record.get("tags") or []),
        json.dumps(record.get("evidence") or []),
    ])  # fmt: skip


def remember(conn: Connection, project: Project, draft: Draft) -> Saved:
    """Store `draft`, or return the exact active duplicate that already holds it."""
    with db.write(conn):
        return remember_in(conn, project, draft)


def remember_in(conn: Connection, project: Project, draft: Draft) -> Saved:
    """`remember` inside the caller's transaction."""
    from waymark.memories.draft import Saved, content_hash

    project_id = None if draft.scope_type == "global" else project.id
    same = rows.find_duplicate(
        conn,
        project_id,
        content_hash(draft.content),
        draft.type,
        draft.scope_type,
        draft.scope_target,
        draft.agent,
    )
    if same is not None:
        more = _adds(same, draft)
        if more is None:
            return Saved(same, created=False, similar=[], redactions=draft.redactions)
        # The same text with new tags, a pin, a higher priority or more evidence: a revision
        # that keeps both, never a write that drops what was asked.
        memory = replace_active(conn, project, same.id, more)
        return Saved(memory, created=True, similar=[], redactions=draft.redactions)
    if draft.key is not None:
        _refuse_taken_key(conn, project_id, draft.key, draft.agent)
    similar = _similar(conn, project_id, draft.content, draft.agent)
    memory = insert(conn, project, draft)
    return Saved(memory, created=True, similar=similar, redactions=draft.redactions)


def _adds(same: Memory, draft: Draft) -> Draft | None:
    """`draft` as a revision of its exact duplicate `same` that keeps what each holds (tags,
    evidence, the pin, the higher priority), or None when it adds nothing."""
    from dataclasses import replace

    tags = [*same.tags, *(t for t in draft.tags if t not in same.tags)]
    evidence = [*same.evidence, *(e for e in draft.evidence if e not in same.evidence)]
    pinned, priority = same.pinned or draft.pinned, max(same.priority, draft.priority)
    if (len(tags), len(evidence), pinned, priority) == (
        len(same.tags),
        len(same.evidence),
        same.pinned,
        same.priority,
    ):
        return None
    return replace(draft, title=same.title, tags=tags, evidence=evidence, pinned=pinned,
                   priority=priority)  # fmt: skip


def insert(
    conn: Connection,
    project: Project,
    draft: Draft,
    *,
    supersedes: str | None = None,
    audit: dict[str, Any] | None = None,
) -> Memory:
    """Write `draft` as a new active record inside the caller's transaction; `audit` names
    the event (`op`) and adds to its detail."""
    from waymark.memories.draft import content_hash

    project_id = None if draft.scope_type == "global" else project.id
    memory_id = clock.new_id()
    stamp = clock.now()
    memory = Memory(
        memory_id,
        project_id,
        draft.type,
        draft.title,
        draft.content,
        draft.scope_type,
        draft.scope_target,
        list(draft.tags),
        draft.priority,
        bool(draft.pinned),
        "active",
        draft.actor,
        draft.client,
        draft.session_id,
        draft.source_ref,
        list(draft.evidence),
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
        draft.agent,
    )
    rows.insert_memory(conn, memory, redact.clearance(shared_text(memory.to_dict())))
    if draft.personal or (supersedes and rows.is_personal(conn, supersedes)):
        rows.mark_personal(conn, memory_id, stamp)  # a personal memory's revision stays so
    # What the event adds to its own columns; nothing said when there is nothing to say (a
    # million imports' `"supersedes": null, "redactions": 0` were 35 bytes a record).
    detail = dict(audit or {})
    if draft.agent:
        detail["agent"] = draft.agent
    if supersedes:
        detail["supersedes"] = supersedes
    if draft.redactions:
        detail["redactions"] = draft.redactions
    op = detail.pop("op", None) or (
        "supersede" if supersedes else draft.actor if draft.actor == "import" else "remember"
    )
    log_event(
        conn,
        op,
        project_id=project_id,
        memory_id=memory_id,
        actor=draft.actor,
        session_id=draft.session_id,
        **detail,
    )
    return memory


def _refuse_taken_key(
    conn: Connection, project_id: str | None, key: str, agent: str | None = None
) -> None:
    """A key names one active memory per tier (project or global, and agent)."""
    holder = rows.active_id_by_key(conn, project_id, key, agent)
    if holder is not None:
        raise Conflict(
            f"key {key!r} already belongs to active memory {holder}; supersede it instead",
            key=key,
            current=holder,
        )


def _similar(
    conn: Connection, project_id: str | None, content: str, agent: str | None
) -> list[str]:
    from rapidfuzz import fuzz  # only writes pay for it, never a hook

    expr = match_expression(content)
    if expr is None:
        return []
    mine = " ".join(content.split()).casefold()
    return [
        memory_id
        for memory_id, other in rows.similar_candidates(
            conn, project_id, expr, SIMILAR_CANDIDATES, agent
        )
        if fuzz.token_sort_ratio(mine, " ".join(other.split()).casefold()) >= SIMILAR_THRESHOLD
    ]


def supersede(conn: Connection, project: Project, old_id: str, draft: Draft) -> Saved:
    """Atomically replace active record `old_id` with `draft`; the old one links forward.

    Two callers racing on one record queue on BEGIN IMMEDIATE; the second finds it
    superseded and gets a conflict naming the winner.
    """
    from waymark.memories.draft import Saved

    with db.write(conn):
        memory = replace_active(conn, project, old_id, draft)
    return Saved(memory, created=True, similar=[], redactions=draft.redactions)


def replace_active(
    conn: Connection,
    project: Project,
    old_id: str,
    draft: Draft,
    *,
    audit: dict[str, Any] | None = None,
) -> Memory:
    """The supersede itself, inside the caller's transaction. A revision of an agent's
    memory stays that agent's unless the draft names another."""
    old = active_in(conn, project, old_id, "superseded")
    old_id = old.id
    if draft.agent is None and old.agent is not None:
        from dataclasses import replace

        draft = replace(draft, agent=old.agent)
    project_id = None if draft.scope_type == "global" else project.id
    moved = (project_id, draft.agent) != (old.project_id, old.agent)
    if draft.key is not None and (draft.key != old.key or moved):
        _refuse_taken_key(conn, project_id, draft.key, draft.agent)
    memory = insert(conn, project, draft, supersedes=old_id, audit=audit)
    rows.mark_superseded(conn, old_id, memory.id, clock.now())
    return memory


def also_superseded(
    conn: Connection, project: Project, memory_id: str, by: str, *, actor: str = "user"
) -> None:
    """Inside the caller's transaction: one more active memory that `by` replaces (a merge of
    several into one; `by.supersedes` names the first)."""
    memory = active_in(conn, project, memory_id, "merged")
    memory_id = memory.id
    rows.mark_superseded(conn, memory_id, by, clock.now())
    log_event(
        conn, "supersede", project_id=memory.project_id, memory_id=by, actor=actor,
        supersedes=memory_id,
    )  # fmt: skip


def archive(
    conn: Connection,
    project: Project,
    memory_id: str,
    *,
    actor: str = "user",
    reason: str | None = None,
    team: bool = False,
) -> Memory:
    """Retire an active memory; it stays readable and can be listed with include_inactive.
    A memory the team shares is retired on every machine, so only with `team`."""
    with db.write(conn):
        return archive_in(conn, project, memory_id, actor=actor, reason=reason, team=team)


def archive_in(
    conn: Connection,
    project: Project,
    memory_id: str,
    *,
    actor: str = "user",
    reason: str | None = None,
    team: bool = False,
) -> Memory:
    """`archive` inside the caller's transaction."""
    memory = active_in(conn, project, memory_id, "archived")
    memory_id = memory.id
    shared = _team_only(conn, project, memory, "archiving", "archive", team)
    rows.mark_archived(conn, memory_id, clock.now())
    log_event(
        conn,
        "archive",
        project_id=memory.project_id,
        memory_id=memory_id,
        actor=actor,
        reason=redact.scrub(mend(reason))[0] if reason else None,
        **({"team": "yes"} if shared else {}),
    )
    return get(conn, memory_id)


def is_team_memory(conn: Connection, project: Project, memory: Memory) -> bool:
    """Whether `memory` is the team's: in a shared project (`[team] share = true`) and not
    personal. What happens to it happens on every machine at their next sync."""
    from waymark.projects.sharing import is_shared

    return (
        memory.project_id is not None
        and memory.project_id == project.id
        and is_shared(project.files)
        and not rows.is_personal(conn, memory.id)
    )


def sharing_of(conn: Connection, project: Project, memories: list[Memory]) -> dict[str, str]:
    """memory id -> `team` or `personal` for those of a shared project (none in a project
    that is not shared): which a sync sends to every machine, and which stay here."""
    from waymark.projects.sharing import is_shared

    if not is_shared(project.files):
        return {}
    mine = [m.id for m in memories if m.project_id == project.id]
    personal = rows.personal_among(conn, mine)
    return {i: "personal" if i in personal else "team" for i in mine}


def _team_only(
    conn: Connection, project: Project, memory: Memory, doing: str, verb: str, team: bool
) -> bool:
    """Refuse to archive or erase the team's memory without `team`; whether it is the team's."""
    if not is_team_memory(conn, project, memory):
        return False
    if not team:
        raise TeamMemory(
            f"memory {memory.id} is the team's (this project is shared): {doing} it does so "
            f"on every machine at the next sync; say so with `waymark {verb} "
            f"{memory.id} --team`",
            id=memory.id,
        )
    return True


def authorship(conn: Connection, memory_id: str) -> dict[str, Any] | None:
    """Who wrote a memory that came from the team: {author, machine, client, at} as the
    server stamped them when this machine pulled it, or None (written here)."""
    found = last_event_of(conn, memory_id, "team.pull", oldest=True)
    if found is None:
        return None
    at, _, detail = found
    return {"author": detail.get("author"), "machine": detail.get("machine"),
            "client": detail.get("client"), "at": at}  # fmt: skip


def share_in(conn: Connection, project: Project, memory_id: str, *, actor: str = "user") -> bool:
    """Inside the caller's transaction: a personal memory becomes the team's (the next sync
    sends it); False when it was not personal."""
    memory = active_in(conn, project, memory_id, "shared")
    if not rows.unmark_personal(conn, memory.id):
        return False
    log_event(conn, "share", project_id=memory.project_id, memory_id=memory.id, actor=actor)
    return True


def archived_why(conn: Connection, memory_id: str) -> dict[str, Any] | None:
    """When, by whom and why memory `memory_id` was archived (its newest archive, here or
    by a teammate: then `actor` is who, and `team` the machine), or None."""
    here = last_event_of(conn, memory_id, "archive")
    pulled = last_event_of(conn, memory_id, "team.pull")
    theirs = pulled is not None and pulled[2].get("team_op") == "archive"
    if pulled is not None and theirs and (here is None or pulled[0] >= here[0]):
        detail = pulled[2]
        return {"at": pulled[0], "actor": detail.get("author"),
                "reason": detail.get("reason"), "team": detail.get("machine")}  # fmt: skip
    if here is None:
        return None
    at, actor, detail = here
    return {"at": at, "actor": actor, "reason": detail.get("reason")}


def erase(
    conn: Connection,
    project: Project,
    memory_id: str,
    *,
    reason: str,
    actor: str = "user",
    team: bool = False,
) -> Memory:
    """Drop the payload for good; keep a tombstone with id, time and reason. A memory the
    team shares is erased on every machine, so only with `team`."""
    with db.write(conn):
        memory_id = erase_in(conn, project, memory_id, reason=reason, actor=actor, team=team)
    # Push the old pages out of the WAL too; secure_delete already zeroed them in the file.
    db.checkpoint_wal(conn)
    return get(conn, memory_id)


def erase_in(
    conn: Connection,
    project: Project,
    memory_id: str,
    *,
    reason: str,
    actor: str = "user",
    team: bool = False,
) -> str:
    """`erase` inside the caller's transaction (who then checkpoints the WAL); the full id."""
    if not reason or not reason.strip():
        raise InvalidArgument("erase needs a reason (it is kept on the tombstone)")
    memory_id = full_id(conn, memory_id)
    memory = _get_in(conn, project, memory_id)
    if memory.status == "erased":
        raise Conflict(f"memory {memory_id} is already erased", id=memory_id, status="erased")
    shared = _team_only(conn, project, memory, "erasing", "erase", team)
    kept, _ = redact.scrub_cut(mend(reason.strip()), 500)  # the tombstone outlives the rest
    rows.erase_payload(conn, memory_id, kept, clock.now())
    dropped = drop_observations(conn, memory_id)  # their notes and links are payload too
    detail: dict[str, Any] = {"observations": dropped} if dropped else {}
    if shared:
        detail["team"] = "yes"
    log_event(
        conn, "erase", project_id=memory.project_id, memory_id=memory_id, actor=actor, **detail
    )
    return memory_id


def unarchive(conn: Connection, project: Project, memory_id: str, *, actor: str = "user") -> Memory:
    """Bring an archived memory back to active (what archiving, and a sweep, can undo)."""
    memory_id = full_id(conn, memory_id)
    with db.write(conn):
        memory = _get_in(conn, project, memory_id)
        if memory.status != "archived":
            raise Conflict(
                f"memory {memory_id} is {memory.status}, not archived",
                id=memory_id,
                status=memory.status,
            )
        if memory.key is not None:
            _refuse_taken_key(conn, memory.project_id, memory.key, memory.agent)
        rows.mark_active(conn, memory_id, clock.now())
        log_event(conn, "unarchive", project_id=memory.project_id, memory_id=memory_id, actor=actor)
    return get(conn, memory_id)


ID_PREFIX_MIN = 4


def get(conn: Connection, memory_id: str) -> Memory:
    """The memory with this id, or with the one id it is a unique prefix of (any case)."""
    memory = rows.get_memory(conn, memory_id)
    if memory is None:
        memory = rows.get_memory(conn, full_id(conn, memory_id))
    assert memory is not None
    return memory


def full_id(conn: Connection, given: str) -> str:
    """The id `given` names: itself, or the one id it starts (case does not matter)."""
    wanted = given.strip().upper()
    if rows.get_memory(conn, wanted) is not None:
        return wanted
    if len(wanted) >= ID_PREFIX_MIN:
        found = rows.ids_starting(conn, wanted, 6)
        if len(found) == 1:
            return found[0]
        if found:
            shown = ", ".join(found[:5]) + (", ..." if len(found) > 5 else "")
            raise InvalidArgument(
                f"{given!r} starts several memory ids ({shown}); give more of it",
                id=given,
                candidates=found[:5],
            )
    raise NotFound(f"no memory with id {given!r}", id=given)


def active_in(conn: Connection, project: Project, memory_id: str, doing: str) -> Memory:
    """The project's active memory `memory_id` (or a unique start of it); a Conflict naming
    its status (and successor) when it is not active, for an operation that is `doing` it."""
    memory = _get_in(conn, project, full_id(conn, memory_id))
    if memory.status != "active":
        raise Conflict(
            f"memory {memory.id} is {memory.status}"
            + (f" (by {memory.superseded_by})" if memory.superseded_by else "")
            + f"; only an active memory can be {doing}",
            id=memory.id,
            status=memory.status,
            current=memory.superseded_by,
        )
    return memory


def _get_in(conn: Connection, project: Project, memory_id: str) -> Memory:
    memory = get(conn, memory_id)
    if memory.project_id not in (project.id, None):
        raise NotFound(f"memory {memory_id} belongs to another project", id=memory_id)
    return memory


def history(conn: Connection, memory_id: str) -> list[Memory]:
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
