"""Checkpoints: the handoff from one session to the next.

A checkpoint is one task in one project with a stable id, a status (active, completed,
abandoned) and immutable revisions. Every change names the revision it builds on
(`expected_revision_id`); a stale one is a conflict naming the current revision, so two
clients never overwrite each other. A save that writes a revision hands off its own
session's work, and that of any session whose files it names, clearing their "handoff
needed" markers in the same transaction.
"""

from __future__ import annotations

from waymark.base import clock, tokens
from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.base.record import record
from waymark.errors import Conflict, InvalidArgument, NotFound
from waymark.handoff import revision as handoff
from waymark.handoff.origin import Origin
from waymark.memories import evidence
from waymark.projects.resolve import Project
from waymark.storage import checkpoints as rows
from waymark.storage import connection as db
from waymark.storage import sessions
from waymark.storage.events import log_event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.storage.connection import Connection

BUDGET_TOKENS = 600
STATUSES = ("active", "completed", "abandoned")


# Namedtuples, not dataclasses: the SessionStart hook reads checkpoints and cannot afford
# the `dataclasses` import.
class Revision(
    record(
        "_Revision",
        "id checkpoint_id seq operation status body tokens actor client session_id created_at"
        " git_branch",
        defaults=(None,),
    )
):
    """One immutable revision; `body` holds the fields (see `handoff`)."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


class Checkpoint(record("_Checkpoint", "id project_id status revision created_at updated_at")):
    """A task's checkpoint with its current revision."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        return self._asdict() | {"revision": self.revision.to_dict()}

    def render(self) -> str:
        return handoff.render(self.revision.body, status=self.status)


AGENT = Origin()


def create(
    conn: Connection,
    project: Project,
    fields: dict[str, Any],
    origin: Origin = AGENT,
    budget: int = BUDGET_TOKENS,
    *,
    parent_id: str | None = None,
    open_task: bool = False,
) -> Checkpoint:
    """A new task, held by the saving session (when there is one) unless `open_task`; a
    subtask of `parent_id`. A session already working on an active task (its own, or one no
    other session holds) revises or finishes that one first: a second would hide it."""
    body, _ = _prepare(project, fields, {})
    if not body.get("objective"):
        raise InvalidArgument("a new checkpoint needs an objective")
    checkpoint_id = clock.new_id()
    with db.write(conn):
        stamp = clock.now()
        if parent_id is not None:
            parent_id = get(conn, project, parent_id).id
            _refuse_finished(get(conn, project, parent_id))
        elif not open_task:
            _refuse_second(conn, project, origin, stamp)
        rows.insert_checkpoint(conn, checkpoint_id, project.id, stamp, parent_id)
        named = body.get("relevant_files", [])
        _write(conn, project, checkpoint_id, 1, "create", "active", body, origin, budget, named)
        if origin.session_id and not open_task:
            from waymark.handoff import claims

            claims.take_for(conn, project, checkpoint_id, origin, stamp)
    return get(conn, project, checkpoint_id)


def _refuse_second(conn: Connection, project: Project, origin: Origin, stamp: str) -> None:
    current = rows.active_checkpoint_id(conn, project.id, origin.session_id, stamp)
    if current is not None:  # a second create would hide it from every packet
        active_now = get(conn, project, current)
        raise Conflict(
            f"checkpoint {current} is active ({active_now.revision.body.get('objective')!r}, "
            f"revision {active_now.revision.id}): revise it, or complete or abandon it "
            "before creating another",
            id=current,
            current_revision=active_now.revision.id,
        )


def _refuse_finished(parent: Checkpoint) -> None:
    if parent.status != "active":
        raise Conflict(
            f"checkpoint {parent.id} is {parent.status}: a subtask needs an active task",
            id=parent.id,
            status=parent.status,
        )


def revise(
    conn: Connection,
    project: Project,
    checkpoint_id: str,
    expected_revision_id: str,
    fields: dict[str, Any],
    origin: Origin = AGENT,
    *,
    operation: str = "revise",
    budget: int = BUDGET_TOKENS,
    to_session: str | None = None,
) -> Checkpoint:
    """A new revision from the current one: given fields replace, absent ones carry over.
    `assign` gives the task to `to_session` (`tasks.assign`)."""
    status = OPERATIONS[operation]
    with db.write(conn):
        current = _current(conn, project, checkpoint_id, expected_revision_id)
        checkpoint_id = current.id  # the full id, when a prefix was given
        from waymark.handoff import claims

        claims.check_holder(conn, current.id, origin, operation)
        if operation == "record_lesson":
            lessons = fields.get("lessons")
            if not lessons or set(fields) - {"lessons"}:
                raise InvalidArgument("record_lesson takes one lesson and nothing else")
            lesson, _ = _prepare(project, {"lessons": lessons}, {})
            fields = {"lessons": current.revision.body.get("lessons", []) + lesson["lessons"]}
        body, _ = _prepare(project, fields, current.revision.body)
        if operation == "revise" and body == current.revision.body:
            claims.after_save(conn, project, checkpoint_id, origin, operation)  # still its
            return current  # nothing changed: no revision, and no handoff either
        named = body.get("relevant_files", []) if "relevant_files" in fields else []
        _write(
            conn,
            project,
            checkpoint_id,
            current.revision.seq + 1,
            operation,
            status,
            body,
            origin,
            budget,
            named,
        )
        rows.set_checkpoint_status(conn, checkpoint_id, status)
        claims.after_save(conn, project, checkpoint_id, origin, operation, to_session)
    return get(conn, project, checkpoint_id)


# What each operation leaves the checkpoint as. `release` and `assign` hand a task to
# whoever takes it next, or to a named session (`tasks`).
OPERATIONS = {
    "revise": "active", "record_lesson": "active", "release": "active", "assign": "active",
    "complete": "completed", "abandon": "abandoned",
}  # fmt: skip


def _prepare(
    project: Project, fields: dict[str, Any], base: dict[str, Any]
) -> tuple[dict[str, Any], int]:
    clean, redactions = handoff.normalise(fields)
    if "evidence" in clean:
        clean["evidence"] = evidence.hash_links(project.files, clean["evidence"])
    if "relevant_files" in clean and project.files:
        from waymark.memories.scope import project_relative

        clean["relevant_files"] = [
            project_relative(p, project.files) for p in clean["relevant_files"]
        ]
    return {**base, **clean}, redactions


def _current(
    conn: Connection, project: Project, checkpoint_id: str, expected_revision_id: str | None
) -> Checkpoint:
    current = get(conn, project, checkpoint_id)
    if not expected_revision_id:
        raise InvalidArgument(
            "expected_revision_id is required to change a checkpoint; the current revision is "
            f"{current.revision.id}",
            current_revision_id=current.revision.id,
        )
    if expected_revision_id != current.revision.id:
        raise Conflict(
            f"checkpoint {checkpoint_id} has moved on: the current revision is "
            f"{current.revision.id}, not {expected_revision_id}; read it and retry",
            current_revision_id=current.revision.id,
            expected_revision_id=expected_revision_id,
        )
    if current.status != "active":
        raise Conflict(
            f"checkpoint {checkpoint_id} is {current.status}; start a new one",
            status=current.status,
            current_revision_id=current.revision.id,
        )
    return current


def _write(
    conn: Connection,
    project: Project,
    checkpoint_id: str,
    seq: int,
    operation: str,
    status: str,
    body: dict[str, Any],
    origin: Origin,
    budget: int,
    named: list[str],
) -> str:
    """Write the revision. A handoff (`handoff.HANDOFFS`) hands off the saving session's
    work and that of each session that edited a file it names (`named`: the relevant files
    this save gave), and clears their markers and those its session was shown at start;
    a save from no session that names none of a session's files hands off nothing."""
    size = tokens.estimate(handoff.render(body, status=status))
    if size > budget:
        raise InvalidArgument(
            f"this revision renders to about {size} tokens; the budget is {budget}. Shorten it "
            "(summarise progress, keep only decisions that still matter); nothing was saved",
            tokens=size,
            budget=budget,
        )
    revision_id = clock.new_id()
    stamp = clock.now()
    rows.insert_revision(
        conn,
        (
            revision_id,
            checkpoint_id,
            seq,
            operation,
            status,
            json.dumps(body, sort_keys=True),
            size,
            origin.actor,
            origin.client,
            origin.session_id,
            stamp,
            _branch(origin.git_branch),
        ),
    )
    if operation in handoff.HANDOFFS:  # a lesson alone hands nothing off
        covered = sessions.hand_off(conn, project.id, stamp, origin.session_id, named)
        saver = sessions.get_session(conn, origin.session_id) if origin.session_id else None
        shown = str(saver["started_at"]) if saver else None
        own = [origin.session_id] if origin.session_id else []
        cleared = rows.clear_markers(conn, project.id, stamp, revision_id, own + covered, shown)
        if covered:
            log_event(
                conn,
                "handoff.saved",
                project_id=project.id,
                actor=origin.actor,
                session_id=origin.session_id,
                sessions=covered,
                revision=revision_id,
            )
        if cleared:
            log_event(
                conn,
                "handoff.cleared",
                project_id=project.id,
                actor=origin.actor,
                session_id=origin.session_id,
                markers=cleared,
                revision=revision_id,
            )
    log_event(
        conn,
        f"checkpoint.{operation}",
        project_id=project.id,
        actor=origin.actor,
        session_id=origin.session_id,
        checkpoint=checkpoint_id,
        revision=revision_id,
    )
    return revision_id


def team_hold(project: Project, saved: Checkpoint) -> dict[str, Any] | None:
    """When the project is shared with a team and the revision holds what the redactor
    flagged (which never leaves this machine, `team.sync`): the fields that hold it and what
    to do, for the save's answer; else None. A handoff is never held back in silence."""
    from waymark.projects.sharing import is_shared

    if not is_shared(project.files):
        return None
    from waymark.base import redact

    held = [
        name
        for name, value in saved.revision.body.items()
        if "[REDACTED:" in (text := json.dumps(value)) or redact.scrub(text)[1]
    ]
    if not held:
        return None
    fields = ", ".join(held)
    return {
        "held_back": held,
        "said": f"this revision stays on this machine: {fields} hold what the redactor "
        "flagged, and nothing flagged reaches the team. Revise it with "
        f"{fields} written without the secret, and the team gets that revision",
    }


def _branch(name: str | None) -> str | None:
    """A branch as stored: redacted, like every text Waymark keeps."""
    if not name:
        return None
    from waymark.base import redact
    from waymark.base.text import mend

    return redact.scrub(mend(name))[0][:200]


def _revision(row: tuple[Any, ...]) -> Revision:
    values = list(row)
    values[5] = json.loads(values[5])
    return Revision(*values)


def get(conn: Connection, project: Project, checkpoint_id: str) -> Checkpoint:
    """The project's checkpoint with this id, or the one it is a unique prefix of (any
    case)."""
    found = rows.get_checkpoint(conn, project.id, checkpoint_id)
    if found is None:
        wanted = checkpoint_id.strip().upper()
        starts = rows.checkpoint_ids_starting(conn, project.id, wanted) if len(wanted) >= 4 else []
        if len(starts) > 1:
            raise InvalidArgument(
                f"{checkpoint_id!r} starts several checkpoint ids ({', '.join(starts)}); "
                "give more of it",
                candidates=starts,
            )
        found = rows.get_checkpoint(conn, project.id, starts[0]) if starts else None
    if found is None:
        raise NotFound(f"no checkpoint {checkpoint_id!r} in this project", id=checkpoint_id)
    row, rev = found
    return Checkpoint(row[0], row[1], row[2], _revision(rev), row[4], row[5])


def active(conn: Connection, project: Project, session_id: str | None = None) -> Checkpoint | None:
    """The active checkpoint `session_id` works on: one it holds, else the most recently
    updated one no other session holds (`storage.checkpoints.active_checkpoint_id`); without
    a session, the most recently updated active checkpoint."""
    checkpoint_id = rows.active_checkpoint_id(conn, project.id, session_id, clock.now())
    return get(conn, project, checkpoint_id) if checkpoint_id else None


def listing(conn: Connection, project: Project, *, limit: int = 50) -> list[Checkpoint]:
    """The project's checkpoints, open, completed and abandoned, the most recently changed
    first."""
    return [get(conn, project, c) for c in rows.checkpoint_ids(conn, project.id, limit)]


def revisions(conn: Connection, checkpoint_id: str) -> list[Revision]:
    return [_revision(r) for r in rows.revisions(conn, checkpoint_id)]


def lessons(conn: Connection, checkpoint: Checkpoint) -> list[dict[str, Any]]:
    """Current lessons, then historical ones a later revision left out (active only)."""
    current = checkpoint.revision.body.get("lessons", [])
    out = [dict(lesson, historical=False) for lesson in current]
    if checkpoint.status != "active":
        return out
    seen = {json.dumps(lesson, sort_keys=True) for lesson in current}
    for rev in reversed(revisions(conn, checkpoint.id)[:-1]):
        for lesson in rev.body.get("lessons", []):
            key = json.dumps(lesson, sort_keys=True)
            if key not in seen:
                seen.add(key)
                out.append(dict(lesson, historical=True))
    return out


PAST_CHECKPOINTS = 3  # completed checkpoints whose lessons the next task still sees
PAST_LESSONS = 4


def past_lessons(
    conn: Connection,
    project: Project,
    exclude: set[str] | None = None,
    *,
    branch: str | None = None,
) -> list[dict[str, Any]]:
    """Lessons of the latest completed checkpoints, newest first and at most PAST_LESSONS,
    each marked historical and citing its checkpoint: a finished task's lessons outlive it.
    Lessons in `exclude` (as JSON) are the current task's own and are not repeated. With
    `branch` (the one checked out), checkpoints finished on it among the last nine come
    first."""
    seen = set(exclude or ())
    out: list[dict[str, Any]] = []
    wider = PAST_CHECKPOINTS * (3 if branch else 1)
    finished = [
        get(conn, project, checkpoint_id)
        for checkpoint_id in rows.finished_checkpoint_ids(conn, project.id, wider)
    ]
    if branch:  # the branch's own first (stable: newest first within), still three in all
        finished.sort(key=lambda done: done.revision.git_branch != branch)
    finished = finished[:PAST_CHECKPOINTS]
    for done in finished:
        checkpoint_id = done.id
        for lesson in done.revision.body.get("lessons", []):
            key = json.dumps(lesson, sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
            out.append(
                dict(lesson, historical=True, source=checkpoint_id, finished=done.updated_at)
            )
            if len(out) == PAST_LESSONS:
                return out
    return out


def freshness(checkpoint: Checkpoint, root: str | None) -> dict[str, Any]:
    links, recheck = evidence.freshness(root, checkpoint.revision.body.get("evidence", []))
    return {"evidence": links, "state": "RECHECK_REQUIRED" if recheck else "FRESH"}


EVENT_TYPES = {"decision": "decision", "failure": "incident", "tool_outcome": "note"}


def record_event(
    conn: Connection,
    project: Project,
    *,
    kind: str,
    summary: str,
    source_key: str,
    evidence_items: list[Any] | None = None,
    checkpoint_id: str | None = None,
    origin: Origin = AGENT,
) -> dict[str, Any]:
    """One small episodic fact, stored as a memory keyed by `source_key` (idempotent)."""
    from waymark.curation import agent_writes
    from waymark.memories import store
    from waymark.memories.draft import content_hash, make_draft
    from waymark.storage.memories import first_id_by_key

    if kind not in EVENT_TYPES:
        raise InvalidArgument(f"event kind is one of {', '.join(EVENT_TYPES)} (got {kind!r})")
    if not source_key or not isinstance(source_key, str):
        raise InvalidArgument("record_event needs a source_key (same key = same fact)")
    if checkpoint_id:
        get(conn, project, checkpoint_id)
    items = (
        evidence_items
        if isinstance(evidence_items, list)
        else ([evidence_items] if evidence_items else [])
    )
    draft = make_draft(
        project,
        type=EVENT_TYPES[kind],
        content=summary,
        tags=["event", kind],
        key=f"event:{source_key}",
        evidence=[{"path": e} if isinstance(e, str) else e for e in items],
        actor=origin.actor,
        client=origin.client,
        session_id=origin.session_id,
        source_ref=f"checkpoint:{checkpoint_id}" if checkpoint_id else None,
    )
    assert draft.key is not None
    existing = first_id_by_key(conn, project.id, draft.key)  # the key as stored: redacted
    if existing is not None:
        memory = store.get(conn, existing)
        if memory.status != "erased" and memory.content_hash != content_hash(draft.content):
            raise Conflict(
                f"event {source_key!r} was recorded with another summary (memory "
                f"{memory.id}); record a new event under a new source_key",
                id=memory.id,
                source_key=source_key,
            )
        return {"memory": memory.to_dict(), "created": False}
    saved = agent_writes.save(conn, project, draft, session_id=origin.session_id)
    if isinstance(saved, agent_writes.Held):  # reads as an instruction: waits for review
        return saved.to_dict()
    return {"memory": saved.memory.to_dict(), "created": saved.created}
