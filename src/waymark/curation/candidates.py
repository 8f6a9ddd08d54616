"""The review queue: candidates Waymark proposes and a person or agent approves or rejects.

A candidate is a proposed change with the evidence it was inferred from: a memory to `add`,
memories to `supersede` by one merged memory, or memories to `archive`. Proposing is
idempotent by `fingerprint` (the same inference is one candidate, refreshed while it waits;
a rejected one is not proposed again). Approving runs the proposal through the same
validation and redaction as any write, in one transaction with its audit events: twice
returns the same memory, an exact active duplicate is reused, the evidence travels with it.
"""

from __future__ import annotations

from waymark.base import clock
from waymark.errors import Conflict, InvalidArgument, NotFound
from waymark.storage import candidates as rows
from waymark.storage import connection as db
from waymark.storage.events import log_event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection

PREFIX = "cand_"
# claim: two holders of a task across machines (`team.claims`); approving gives it up here
ACTIONS = ("add", "supersede", "archive", "share", "checkpoint", "claim")
# What proposes: a command's repeated failure and fix, an import from a client's own memory,
# a consolidation, feedback that a memory is stale or wrong, an opt-in session summary, an
# insight from a pattern of errors, an agent's own write in the confirm capture mode, a write
# whose text reads as an instruction to the agent (`memories.injection`), a team member's
# revision of a memory this machine revised too (`team.sync`).
KINDS = (
    "failure_fix", "import", "consolidation", "feedback", "summary", "insight", "agent",
    "flagged", "conflict", "share", "skill", "backfill",
)  # fmt: skip
STATUSES = rows.STATUSES
REASON_MAX = 500
NOTE_MAX = 500
# The memory fields a proposal may carry (what `make_draft` takes).
FIELDS = (
    "type", "content", "title", "scope", "target", "tags", "priority", "pinned", "evidence",
    "valid_until", "key", "source_ref", "git_branch", "event_time", "agent",
    "checkpoint",  # a `checkpoint` action's revision: {id, revision, status, body, tokens}
)  # fmt: skip


def propose(
    conn: Connection,
    project_id: str,
    *,
    kind: str,
    reason: str,
    fingerprint: str,
    fields: dict[str, Any] | None = None,
    action: str = "add",
    sources: Sequence[str] = (),
    evidence: Sequence[dict[str, Any]] = (),
    session_id: str | None = None,
) -> tuple[dict[str, Any], bool]:
    """Queue a candidate inside the caller's transaction; (its row, whether it is new).

    Every free-text value is redacted here, so callers may pass what they saw."""
    import hashlib

    from waymark.base import redact
    from waymark.base.text import mend

    if kind not in KINDS:
        raise InvalidArgument(f"unknown candidate kind {kind!r}; valid: {', '.join(KINDS)}")
    if action not in ACTIONS:
        raise InvalidArgument(f"unknown action {action!r}; valid: {', '.join(ACTIONS)}")
    fields = dict(fields or {})
    unknown = sorted(set(fields) - set(FIELDS))
    if unknown:
        raise InvalidArgument(f"a candidate cannot carry {', '.join(unknown)}")
    if action == "checkpoint" and not (fields.get("checkpoint") or {}).get("body"):
        raise InvalidArgument("a 'checkpoint' candidate carries the revision it puts on top")
    if action == "claim" and not (fields.get("checkpoint") or {}).get("holder"):
        raise InvalidArgument("a 'claim' candidate names the task and the holder it gives up")
    if action not in ("archive", "share", "checkpoint", "claim") and not (
        fields.get("type") and fields.get("content")
    ):
        raise InvalidArgument(f"an {action!r} candidate needs the memory's type and content")
    if action != "add" and not sources:
        raise InvalidArgument(f"a {action!r} candidate names the memories it changes")
    clean_fields, _ = redact.scrub_value(fields)
    clean_evidence, _ = redact.scrub_value(list(evidence))
    clean_reason = redact.scrub_cut(mend(reason).strip(), REASON_MAX)[0]
    assert isinstance(clean_fields, dict) and isinstance(clean_evidence, list)
    stamp = clock.now()
    fingerprint = hashlib.sha256(fingerprint.encode("utf-8", "replace")).hexdigest()
    found = rows.by_fingerprint(conn, project_id, fingerprint)
    if found is not None:
        if found["status"] == "pending":
            rows.refresh_candidate(
                conn, found["id"], clean_fields, clean_evidence, clean_reason, stamp
            )
            found = rows.get_candidate(conn, found["id"])
            assert found is not None
        return found, False
    row = {
        "id": PREFIX + clock.new_id(),
        "project_id": project_id,
        "kind": kind,
        "action": action,
        "fields": clean_fields,
        "sources": list(dict.fromkeys(sources)),
        "evidence": clean_evidence,
        "reason": clean_reason,
        "fingerprint": fingerprint,
        "status": "pending",
        "memory_id": None,
        "review_note": None,
        "reviewed_by": None,
        "reviewed_at": None,
        "session_id": session_id,
        "created_at": stamp,
        "updated_at": stamp,
    }
    rows.insert_candidate(conn, row)
    log_event(
        conn, "propose", project_id=project_id, session_id=session_id, candidate=row["id"],
        kind=kind, action=action,
    )  # fmt: skip
    return row, True


def withdraw_older(
    conn: Connection, project_id: str, kind: str, field: str, value: Any, *, keep: str
) -> int:
    """Inside the caller's transaction: waiting candidates of `kind` whose proposed `field`
    equals `value`, other than `keep`, are withdrawn (rejected by Waymark, naming `keep`):
    their source changed before anyone reviewed them. How many."""
    return _withdraw(
        conn, project_id, kind,
        lambda c: c["id"] != keep and c["fields"].get(field) == value,
        f"withdrawn: its source changed before review; see {keep}",
    )  # fmt: skip


def withdraw_settled(
    conn: Connection, project_id: str, *, source: str | None = None,
    checkpoint_body: dict[str, Any] | None = None, by: str,
) -> int:  # fmt: skip
    """Inside the caller's transaction: waiting team conflicts the team's line has settled
    (rejected by Waymark, naming `by`, the revision that settled them): those about memory
    `source`, now replaced on the line (approving one could no longer replace it), or a
    checkpoint revision whose body the line now has. How many."""

    def settled(c: dict[str, Any]) -> bool:
        if source is not None and c["action"] == "supersede" and c["sources"] == [source]:
            return True
        wanted = c["fields"].get("checkpoint") or {}
        return checkpoint_body is not None and wanted.get("body") == checkpoint_body

    return _withdraw(conn, project_id, "conflict", settled,
                     f"withdrawn: the team's line settled it ({by})")  # fmt: skip


def _withdraw(conn: Connection, project_id: str, kind: str, which: Any, note: str) -> int:
    withdrawn = 0
    stamp = clock.now()
    for other in rows.list_candidates(conn, project_id, kind=kind, limit=10_000):
        if which(other):
            rows.mark_reviewed(conn, other["id"], "rejected", memory_id=None, actor="waymark",
                               stamp=stamp, note=note)  # fmt: skip
            withdrawn += 1
    return withdrawn


def full_id(conn: Connection, given: str) -> str:
    """The candidate id `given` names: itself, or the one id it starts (the `cand_` prefix
    and case optional)."""
    wanted = given.strip()
    wanted = PREFIX + (wanted[len(PREFIX) :] if wanted.lower().startswith(PREFIX) else wanted)
    wanted = PREFIX + wanted[len(PREFIX) :].upper()
    if rows.get_candidate(conn, wanted) is not None:
        return wanted
    if len(wanted) - len(PREFIX) >= 4:
        found = rows.ids_starting(conn, wanted, 6)
        if len(found) == 1:
            return found[0]
        if found:
            raise InvalidArgument(
                f"{given!r} starts several candidate ids ({', '.join(found[:5])}); give more",
                id=given,
                candidates=found[:5],
            )
    raise NotFound(f"no candidate with id {given!r}", id=given)


def get(conn: Connection, project: Project, candidate_id: str) -> dict[str, Any]:
    found = rows.get_candidate(conn, full_id(conn, candidate_id))
    assert found is not None
    if found["project_id"] != project.id:
        raise NotFound(f"candidate {candidate_id} belongs to another project", id=candidate_id)
    return found


def exists(conn: Connection, project_id: str, fingerprint: str) -> bool:
    """Whether a candidate with this fingerprint was ever proposed (any status)."""
    import hashlib

    digest = hashlib.sha256(fingerprint.encode("utf-8", "replace")).hexdigest()
    return rows.by_fingerprint(conn, project_id, digest) is not None


def decide_all(
    conn: Connection, project: Project, kind: str, *, approve_them: bool, note: str | None = None
) -> list[dict[str, Any]]:
    """Approve (or reject) every pending candidate of `kind`, one decision each, as a
    person would one by one; the decisions."""
    done: list[dict[str, Any]] = []
    while True:
        batch = pending(conn, project, kind=kind, limit=100)
        if not batch:
            return done
        for c in batch:
            if approve_them:
                done.append(approve(conn, project, c["id"], actor="user", note=note))
            else:
                done.append(reject(conn, project, c["id"], actor="user", note=note))


# How long a proposal has waited, as the review page filters it (and the overview draws
# it): name -> (at least, under) days.
AGES = {"day": (0, 1), "week": (1, 7), "month": (7, 28), "older": (28, None)}


def pending(
    conn: Connection,
    project: Project,
    *,
    statuses: Sequence[str] = ("pending",),
    kind: str | None = None,
    age: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """The project's candidates (waiting ones by default; of one kind, of one AGES bucket),
    newest first, as views."""
    found = rows.list_candidates(
        conn, project.id, **_filters(statuses, kind, age), limit=limit, offset=offset
    )
    return [view(c) for c in found]


def count(
    conn: Connection,
    project: Project,
    *,
    statuses: Sequence[str] = ("pending",),
    kind: str | None = None,
    age: str | None = None,
) -> int:
    """How many candidates `pending` pages through with the same filters."""
    return rows.count_listed(conn, project.id, **_filters(statuses, kind, age))


def _filters(statuses: Sequence[str], kind: str | None, age: str | None) -> dict[str, Any]:
    bad = sorted(set(statuses) - set(STATUSES))
    if bad:
        raise InvalidArgument(f"unknown status {bad[0]!r}; valid: {', '.join(STATUSES)}")
    if kind is not None and kind not in KINDS:
        raise InvalidArgument(f"unknown candidate kind {kind!r}; valid: {', '.join(KINDS)}")
    if age is not None and age not in AGES:
        raise InvalidArgument(f"unknown age {age!r}; valid: {', '.join(AGES)}")
    since = until = None
    if age is not None:
        low, high = AGES[age]
        until = clock.ago(low) if low else None
        since = clock.ago(high) if high is not None else None
    return {"statuses": tuple(statuses), "kind": kind, "since": since, "until": until}


def waiting_since(conn: Connection, project: Project, limit: int = 10_000) -> list[str]:
    """When each waiting candidate was proposed: how old the review queue is."""
    return rows.pending_since(conn, project.id, limit)


def count_waiting(conn: Connection, project_id: str) -> int:
    return rows.count_candidates(conn, project_id, "pending")


def counts(conn: Connection, project_id: str) -> dict[str, int]:
    found = rows.candidate_counts(conn, project_id)
    return {status: found.get(status, 0) for status in STATUSES}


def title_of(candidate: dict[str, Any]) -> str:
    fields = candidate["fields"]
    if fields.get("title"):
        return str(fields["title"])
    if fields.get("content"):
        from waymark.memories.draft import title_from

        return title_from(str(fields["content"]))
    return f"{candidate['action']} {', '.join(candidate['sources'])}"


def view(candidate: dict[str, Any]) -> dict[str, Any]:
    """What people and agents are shown of a candidate (no fingerprint: it is bookkeeping)."""
    keep = (
        "id", "kind", "action", "status", "reason", "sources", "evidence", "fields",
        "memory_id", "review_note", "reviewed_by", "reviewed_at", "created_at", "updated_at",
    )  # fmt: skip
    return {"title": title_of(candidate), **{k: candidate[k] for k in keep}}


def stale(conn: Connection, waiting: list[dict[str, Any]]) -> dict[str, str]:
    """candidate id -> why it cannot be carried out as it is: a proposal (as `pending`
    views it) to replace or archive a memory that is no longer active (archived, replaced,
    erased meanwhile)."""
    from waymark.storage.memories import get_memories

    acting = [c for c in waiting if c.get("action") in ("supersede", "archive")]
    named = sorted({s for c in acting for s in c.get("sources") or ()})
    held = get_memories(conn, named) if named else {}
    out = {}
    for c in acting:
        gone = [held[s] for s in c.get("sources") or () if s in held and held[s].status != "active"]
        if gone:
            out[c["id"]] = f"stale: {gone[0].title!r} is {gone[0].status} now"
    return out


def sources(conn: Connection, waiting: list[dict[str, Any]]) -> dict[str, Any]:
    """memory id -> the Memory each proposal names (what it would replace, archive or
    share), so a reviewer reads their text, not their ids."""
    from waymark.storage.memories import get_memories

    named = sorted({s for c in waiting for s in c.get("sources") or ()
                    if c.get("action") != "checkpoint"})  # fmt: skip
    return dict(get_memories(conn, named)) if named else {}


UNDONE = ("add", "archive")  # an approval of these can be undone; any rejection can


def undo(
    conn: Connection, project: Project, candidate_id: str, *, actor: str = "user"
) -> dict[str, Any]:
    """A decision taken back, the candidate waiting again: a rejection simply; an approved
    addition by archiving the memory it added (when the approval added one and it is still
    active); an approved archive by making its memories active again. Other approvals
    (a replacement, a share, a checkpoint revision) are not undone here: Conflict, saying
    how. {candidate, archived (ids), unarchived (ids)}."""
    from waymark.memories import store

    with db.write(conn):
        found = get(conn, project, candidate_id)
        if found["status"] == "pending":
            raise Conflict(f"candidate {found['id']} waits for review: nothing to undo",
                           id=found["id"], status="pending")  # fmt: skip
        archived: list[str] = []
        unarchived: list[str] = []
        if found["status"] == "approved":
            if found["action"] not in UNDONE:
                raise Conflict(
                    f"an approved {found['action']} is not undone from the review queue: "
                    "edit the memory back (its history keeps every revision)",
                    id=found["id"], action=found["action"],
                )  # fmt: skip
            if found["action"] == "add" and found["memory_id"]:
                made = store.get(conn, found["memory_id"])
                if _added_by(conn, made, found) and made.status == "active":
                    store.archive_in(conn, project, made.id, actor=actor, team=True,
                                     reason=f"undo of the approval of {found['id']}")  # fmt: skip
                    archived.append(made.id)
            if found["action"] == "archive":
                for source in found["sources"]:
                    if store.get(conn, source).status == "archived":
                        store.unarchive(conn, project, source, actor=actor)
                        unarchived.append(source)
        rows.reopen(conn, found["id"], clock.now())
        log_event(conn, "reopen", project_id=project.id, actor=actor, candidate=found["id"],
                  kind=found["kind"], undid=found["status"],
                  changed=[*archived, *unarchived])  # fmt: skip
        after = rows.get_candidate(conn, found["id"])
    assert after is not None
    return {"candidate": view(after), "archived": archived, "unarchived": unarchived}


def _added_by(conn: Connection, memory: Any, candidate: dict[str, Any]) -> bool:
    """Whether approving `candidate` added `memory` (not an exact duplicate it kept), as
    its approval's event says (before it said, the memory naming it as its source)."""
    from waymark.storage.events import last_event_of

    last = last_event_of(conn, memory.id, "approve")
    if last is not None and last[2].get("candidate") == candidate["id"] and "created" in last[2]:
        return bool(last[2]["created"])
    return bool(memory.source_ref == f"candidate:{candidate['id']}")


def approve(
    conn: Connection,
    project: Project,
    candidate_id: str,
    *,
    actor: str = "user",
    note: str | None = None,
    client: str | None = None,
    session_id: str | None = None,
) -> dict[str, Any]:
    """Carry out a candidate: {candidate, memory (the one added or kept, or None for an
    archive), created, changed (the ids superseded or archived)}. All or nothing."""
    from waymark.memories import store

    with db.write(conn):
        found = get(conn, project, candidate_id)
        if found["status"] == "approved":
            memory = store.get(conn, found["memory_id"]) if found["memory_id"] else None
            return {
                "candidate": view(found),
                "memory": memory.to_dict() if memory else None,
                "created": False,
                "changed": [],
            }
        memory, created, changed = _carry_out(conn, project, found, actor, client, session_id)
        if found["kind"] == "insight" and memory is not None:
            from waymark.curation.learning import note_approved

            note_approved(conn, memory.id)
        stamp = clock.now()
        rows.mark_reviewed(
            conn,
            found["id"],
            "approved",
            memory_id=memory.id if memory else None,
            note=_note(note),
            actor=actor,
            stamp=stamp,
        )
        log_event(
            conn, "approve", project_id=project.id, memory_id=memory.id if memory else None,
            actor=actor, session_id=session_id, candidate=found["id"], kind=found["kind"],
            changed=changed, created=created,
        )  # fmt: skip
        after = rows.get_candidate(conn, found["id"])
    assert after is not None
    return {
        "candidate": view(after),
        "memory": memory.to_dict() if memory else None,
        "created": created,
        "changed": changed,
    }


def _carry_out(
    conn: Connection,
    project: Project,
    candidate: dict[str, Any],
    actor: str,
    client: str | None,
    session_id: str | None,
) -> tuple[Any, bool, list[str]]:
    from waymark.memories import store

    action, sources = candidate["action"], list(candidate["sources"])
    if action == "share":  # a personal memory becomes the team's
        for source in sources:
            store.share_in(conn, project, source, actor=actor)
        return store.get(conn, sources[0]), False, sources
    if action == "checkpoint":  # a team member's revision, put on top of ours
        return None, False, [_take_revision(conn, project, candidate, actor, client, session_id)]
    if action == "claim":  # the team's holder keeps the task: this machine's session lets go
        from waymark.storage import tasks as claims

        given = candidate["fields"].get("checkpoint") or {}
        held = claims.claim_of(conn, str(given.get("id")))
        if held is not None and held[0] == given.get("holder"):
            claims.let_go(conn, str(given["id"]))
        return None, False, [str(given.get("id"))]
    if action == "archive":
        reason = f"approved candidate {candidate['id']}: {candidate['reason']}"
        for source in sources:
            # approving in review is the person's say-so, for the team's memories too
            store.archive_in(conn, project, source, actor=actor, reason=reason, team=True)
        return None, False, sources
    draft = _draft(project, candidate, actor, client, session_id)
    if action == "add":
        saved = store.remember_in(conn, project, draft)
        return saved.memory, saved.created, []
    memory = store.replace_active(conn, project, sources[0], draft)
    for source in sources[1:]:  # the merged memory replaces every one it names
        store.also_superseded(conn, project, source, memory.id, actor=actor)
    return memory, True, sources


def _draft(
    project: Project, candidate: dict[str, Any], actor: str, client: str | None, session: str | None
) -> Any:
    """The proposal as a validated, redacted Draft, its evidence joined by the candidate's."""
    from waymark.memories.draft import MAX_EVIDENCE, make_draft

    fields = dict(candidate["fields"])
    evidence = [*fields.pop("evidence", []), *candidate["evidence"]]
    unique = list({repr(sorted(e.items())): e for e in evidence}.values())[:MAX_EVIDENCE]
    fields.setdefault("source_ref", f"candidate:{candidate['id']}")
    return make_draft(
        project,
        **fields,
        evidence=unique,
        actor=actor,
        client=client,
        session_id=session,
        check_evidence=False,
    )


def _take_revision(
    conn: Connection,
    project: Project,
    candidate: dict[str, Any],
    actor: str,
    client: str | None,
    session_id: str | None,
) -> str:
    """A new revision of the checkpoint on top of its current one, with the body the
    candidate carries (written, redacted and budgeted where it was made): the next sync
    sends it as the team's line. Its id."""
    import json

    from waymark.storage import checkpoints as saves

    wanted = candidate["fields"]["checkpoint"]
    head = saves.checkpoint_head(conn, wanted["id"])
    if head is None or head[0] != project.id:
        raise NotFound(f"checkpoint {wanted['id']} is not in this project", id=wanted["id"])
    _, _, seq = head
    revision_id, stamp = clock.new_id(), clock.now()
    saves.insert_revision(
        conn,
        (revision_id, wanted["id"], seq + 1, "revise", wanted["status"],
         json.dumps(wanted["body"], sort_keys=True), int(wanted.get("tokens") or 0), actor,
         client, session_id, stamp, wanted.get("git_branch")),
    )  # fmt: skip
    saves.set_checkpoint_status(conn, wanted["id"], wanted["status"])
    log_event(
        conn, "checkpoint.revise", project_id=project.id, actor=actor, session_id=session_id,
        checkpoint=wanted["id"], revision=revision_id, candidate=candidate["id"],
    )  # fmt: skip
    return revision_id


def reject(
    conn: Connection,
    project: Project,
    candidate_id: str,
    *,
    actor: str = "user",
    note: str | None = None,
    session_id: str | None = None,
) -> dict[str, Any]:
    """Decline a candidate: it stays, rejected, so the same inference is not proposed again.
    An approved candidate cannot be rejected (forget the memory it made instead)."""
    with db.write(conn):
        found = get(conn, project, candidate_id)
        if found["status"] == "approved":
            raise Conflict(
                f"candidate {found['id']} was approved into memory {found['memory_id']};"
                " forget that memory instead",
                id=found["id"],
                memory_id=found["memory_id"],
            )
        rows.mark_reviewed(
            conn, found["id"], "rejected", memory_id=None, note=_note(note), actor=actor,
            stamp=clock.now(),
        )  # fmt: skip
        log_event(
            conn, "reject", project_id=project.id, actor=actor, session_id=session_id,
            candidate=found["id"], kind=found["kind"],
        )  # fmt: skip
        after = rows.get_candidate(conn, found["id"])
    assert after is not None
    return {"candidate": view(after)}


def _note(note: str | None) -> str | None:
    if not note or not note.strip():
        return None
    from waymark.base import redact
    from waymark.base.text import mend

    return redact.scrub_cut(mend(note).strip(), NOTE_MAX)[0]
