"""The MCP `checkpoint` tool: every checkpoint operation behind one well-typed door."""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from mcp.server.mcpserver import Context
from pydantic import Field

from waymark.errors import InvalidArgument
from waymark.handoff import checkpoints
from waymark.handoff.revision import FIELDS
from waymark.server.results import CheckpointSaved
from waymark.server.state import WRITES, ProjectArg, log, state_of, tool_errors

Items = str | dict[str, Any] | list[str | dict[str, Any]] | None
Operation = Literal[
    "create",
    "revise",
    "complete",
    "abandon",
    "record_lesson",
    "record_event",
    "claim",
    "release",
    "assign",
    "subtask",
]
EventKind = Literal["decision", "failure", "tool_outcome"]


@tool_errors
def checkpoint(
    ctx: Context,
    operation: Operation,  # record_event (kind, summary, source_key): not advertised
    checkpoint_id: str | None = None,  # every operation but create
    expected_revision_id: str | None = None,  # the revision last seen (stale: a conflict)
    objective: str | None = None,
    progress: str | list[str] | None = None,
    decisions: Annotated[Items, Field(description="[{decision, why}]")] = None,
    failed_approaches: Annotated[Items, Field(description="[{approach, why_failed}]")] = None,
    blockers: str | list[str] | None = None,
    tests: Annotated[Items, Field(description="[{command, result: pass|fail|not_run}]")] = None,
    evidence: Annotated[Items, Field(description="[{path, note?}]")] = None,
    next_action: Annotated[str | None, Field(description="Exact next step.")] = None,
    relevant_files: str | list[str] | None = None,
    lessons: Annotated[
        Items,
        Field(description="[{trigger, mistaken_assumption, correction, prevention}]"),
    ] = None,
    done_when: Annotated[Items, Field(description="[{command|file|behaviour}]")] = None,
    to: str | None = None,  # assign, subtask: a session, or "subagent:TYPE" (its next one)
    # claim, release (with a handoff), assign and subtask (a new one under checkpoint_id):
    # tasks of agents at once (`handoff.tasks`), in the enum only: the definitions' budget
    kind: EventKind | None = None,
    summary: str | None = None,
    source_key: str | None = None,
    project: ProjectArg = None,
) -> CheckpointSaved:
    """The task's handoff: create at a multi-step task's start, revise as work moves and
    before stopping. Summarise, never paste logs."""
    values = locals()
    fields = {name: values[name] for name in FIELDS if values[name] is not None}
    state = state_of(ctx)
    with state.conn() as conn:
        proj = state.project(conn, project)
        # Read-only and off refuse; confirm lets the handoff through (it is the session's
        # own state, which Stop asks for, not a memory).
        state.queues_writes(conn, proj)
        where = state.origin(conn, proj)
        origin = checkpoints.Origin(actor="agent", client="mcp", session_id=where["session_id"],
                                    git_branch=where["git_branch"])  # fmt: skip
        if operation == "record_event":
            if kind is None or summary is None or source_key is None:
                raise InvalidArgument("record_event needs kind, summary and source_key")
            ev = evidence if isinstance(evidence, list) else [evidence] if evidence else []
            return cast(CheckpointSaved, checkpoints.record_event(
                conn, proj, kind=kind, summary=summary, source_key=source_key,
                evidence_items=ev, checkpoint_id=checkpoint_id, origin=origin,
            ))  # fmt: skip
        if operation == "create":
            saved = checkpoints.create(conn, proj, fields, origin)
        elif not checkpoint_id:
            raise InvalidArgument(f"{operation} needs checkpoint_id")
        else:
            saved = _on_task(conn, proj, operation, checkpoint_id, expected_revision_id or "",
                             fields, origin, to)  # fmt: skip
        _refresh_map(conn, proj)
        held = checkpoints.team_hold(proj, saved)
        told = {"checkpoint": saved.to_dict(), "saved_revision_id": saved.revision.id,
                "tokens": saved.revision.tokens}  # fmt: skip
        return cast(CheckpointSaved, told | ({"team": held} if held else {}))


def _on_task(
    conn: Any, proj: Any, operation: str, checkpoint_id: str, expected: str,
    fields: dict[str, Any], origin: checkpoints.Origin, to: str | None,
) -> checkpoints.Checkpoint:  # fmt: skip
    """Every operation on an existing checkpoint: a revision, or a claim's change."""
    from waymark.handoff import tasks

    if operation == "claim":  # through the team store when the project is shared
        from waymark.team import claims

        return claims.claim(conn, proj, checkpoint_id, origin)
    if operation == "release":
        return tasks.release(conn, proj, checkpoint_id, expected, fields, origin)
    if operation == "assign":
        return tasks.assign(conn, proj, checkpoint_id, to or "", expected, fields, origin)
    if operation == "subtask":  # with `to`, given at once (e.g. "subagent:reviewer")
        made = tasks.split(conn, proj, checkpoint_id, [fields], origin)[0]
        if not to:
            return made
        return tasks.assign(conn, proj, made.id, to, made.revision.id, {}, origin)
    return checkpoints.revise(conn, proj, checkpoint_id, expected, fields, origin,
                              operation=operation)  # fmt: skip


def _refresh_map(conn: Any, proj: Any) -> None:
    """An existing code map is brought up to date after a save (`codemap.freshness`)."""
    from waymark.codemap.freshness import freshen

    said = freshen(conn, proj, "save")
    if said.startswith("failed"):
        log.warning("code map refresh after a checkpoint %s", said)


# (function, tool name, hints): what `app.build_server` registers.
TOOLS = [
    (checkpoint, "checkpoint", WRITES),
]
