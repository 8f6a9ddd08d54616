"""The MCP `checkpoint` tool: every checkpoint operation behind one well-typed door."""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from mcp.server.mcpserver import Context
from pydantic import Field

from waymark.errors import InvalidArgument
from waymark.handoff import checkpoints
from waymark.handoff.revision import FIELDS
from waymark.server.results import CheckpointSaved
from waymark.server.state import WRITES, ProjectArg, state_of, tool_errors

Items = str | dict[str, Any] | list[str | dict[str, Any]] | None
Operation = Literal["create", "revise", "complete", "abandon", "record_lesson", "record_event"]
EventKind = Literal["decision", "failure", "tool_outcome"]


@tool_errors
def checkpoint(
    ctx: Context,
    operation: Annotated[
        Operation,
        Field(
            description="create a checkpoint for the task; revise it as work moves; "
            "complete or abandon it at the end; record_lesson adds one lesson; "
            "record_event stores one decision, failure or tool_outcome."
        ),
    ],
    checkpoint_id: Annotated[
        str | None, Field(description="The checkpoint to change (all operations but create).")
    ] = None,
    expected_revision_id: Annotated[
        str | None,
        Field(
            description="The revision you last saw; a stale one is a conflict naming the "
            "current revision."
        ),
    ] = None,
    objective: Annotated[str | None, Field(description="The task, in one sentence.")] = None,
    progress: Annotated[str | list[str] | None, Field(description="What is done.")] = None,
    decisions: Annotated[Items, Field(description="[{decision, why}]")] = None,
    failed_approaches: Annotated[Items, Field(description="[{approach, why_failed}]")] = None,
    blockers: str | list[str] | None = None,
    tests: Annotated[
        Items, Field(description="[{command, result: pass|fail|not_run, note?}]")
    ] = None,
    evidence: Annotated[
        Items,
        Field(
            description="Project files that prove progress: [{path, note?}], at most 10; "
            "Waymark hashes them to notice later changes."
        ),
    ] = None,
    next_action: Annotated[
        str | None, Field(description="The exact next step for whoever continues.")
    ] = None,
    relevant_files: str | list[str] | None = None,
    lessons: Annotated[
        Items,
        Field(description="[{trigger, mistaken_assumption, correction, prevention, evidence?}]"),
    ] = None,
    kind: Annotated[
        EventKind | None,
        Field(description="record_event only."),
    ] = None,
    summary: Annotated[str | None, Field(description="record_event only.")] = None,
    source_key: Annotated[
        str | None, Field(description="record_event only: same key = same fact (idempotent).")
    ] = None,
    project: ProjectArg = None,
) -> CheckpointSaved:
    """Save the handoff for the next session: what the task is, what is done, which
    decisions won and why, what failed, what was verified, and the exact next action.

    Create one when you start a multi-step task; revise it when something important
    changes and before you stop (the Stop hook asks for it when files changed). Every
    change after create needs `checkpoint_id` and `expected_revision_id`. A revision must
    fit in about 600 tokens: summarise, never paste logs. Secrets are redacted.
    """
    values = locals()
    fields = {name: values[name] for name in FIELDS if values[name] is not None}
    state = state_of(ctx)
    with state.conn() as conn:
        proj = state.project(conn, project)
        origin = checkpoints.Origin(actor="agent", client="mcp")
        if operation == "record_event":
            if kind is None or summary is None or source_key is None:
                raise InvalidArgument("record_event needs kind, summary and source_key")
            ev = evidence if isinstance(evidence, list) else [evidence] if evidence else []
            event = checkpoints.record_event(
                conn,
                proj,
                kind=kind,
                summary=summary,
                source_key=source_key,
                evidence_items=ev,
                checkpoint_id=checkpoint_id,
                origin=origin,
            )
            return cast(CheckpointSaved, event)
        if operation == "create":
            saved = checkpoints.create(conn, proj, fields, origin)
        else:
            if not checkpoint_id:
                raise InvalidArgument(f"{operation} needs checkpoint_id")
            saved = checkpoints.revise(
                conn,
                proj,
                checkpoint_id,
                expected_revision_id or "",
                fields,
                origin,
                operation=operation,
            )
        return cast(
            CheckpointSaved,
            {
                "checkpoint": saved.to_dict(),
                "saved_revision_id": saved.revision.id,
                "tokens": saved.revision.tokens,
            },
        )


# (function, tool name, hints): what `app.build_server` registers.
TOOLS = [
    (checkpoint, "checkpoint", WRITES),
]
