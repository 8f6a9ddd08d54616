"""Tasks for agents working at once: a checkpoint that a session claims.

A task is an active checkpoint. A client session holds it (its subagents work for it; a
claim may name which one) on a lease its hooks renew while it works; the session that
creates a task, or revises one nobody else holds, holds it. Claiming is one conditional
write: of two sessions racing for a task one wins and the other is told who holds it and
since when. A lease that passes (the agent died, the session ended without a handoff) makes
the task anyone's again, its checkpoint intact. Handing a task on is explicit and leaves a
revision: `release` (with a handoff, to whoever takes it next) or `assign` (to a named
session). Finishing (complete, abandon) lets the claim go. A task may be split into
subtasks with claims of their own; completing it waits for its subtasks. Its definition of
done (`done_when`: commands that must pass, files, behaviour) is checked against the last
runs of those commands by its holder (`ledger.record_tool` keeps them).
"""

from __future__ import annotations

import os

from waymark.base import clock
from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.errors import Conflict, InvalidArgument
from waymark.handoff import checkpoints
from waymark.handoff.claims import (
    SUBAGENT,
    claim_view,
    claimed_event,
    plain_name,
    report_to_lead,
    take_for,
    taken,
)
from waymark.storage import connection as db
from waymark.storage import sessions
from waymark.storage import tasks as rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.handoff.checkpoints import Checkpoint, Origin
    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection

BOARD_LIMIT = 50


def claim(conn: Connection, project: Project, checkpoint_id: str, origin: Origin) -> Checkpoint:
    """Take the task for `origin`'s session: it is open, its lease passed, or it is this
    session's already; else a conflict naming who holds it and since when."""
    if not origin.session_id:
        raise InvalidArgument(
            "a claim is a session's: give the session id (`--session`), or claim through the "
            "agent's tools"
        )
    with db.write(conn):
        task = checkpoints.get(conn, project, checkpoint_id)
        if task.status != "active":
            raise Conflict(f"task {task.id} is {task.status}", id=task.id, status=task.status)
        before = rows.claim_of(conn, task.id)
        take_for(conn, project, task.id, origin, clock.now())
        if not before or before[0] != origin.session_id:
            claimed_event(conn, project, task.id, origin)
    return checkpoints.get(conn, project, task.id)


def release(
    conn: Connection,
    project: Project,
    checkpoint_id: str,
    expected_revision_id: str,
    fields: dict[str, Any],
    origin: Origin,
    budget: int = checkpoints.BUDGET_TOKENS,
) -> Checkpoint:
    """Hand the task on to whoever takes it next: a revision with the handoff (`fields`),
    and the claim let go. The session that holds it may leave `expected_revision_id` out:
    its claim is what keeps others off it."""
    if not expected_revision_id and origin.session_id:
        task = checkpoints.get(conn, project, checkpoint_id)
        if claim_view(conn, task.id).get("session") == origin.session_id:
            expected_revision_id = task.revision.id
    return checkpoints.revise(conn, project, checkpoint_id, expected_revision_id, fields,
                              origin, operation="release", budget=budget)  # fmt: skip


def assign(
    conn: Connection,
    project: Project,
    checkpoint_id: str,
    to_session: str,
    expected_revision_id: str,
    fields: dict[str, Any],
    origin: Origin,
    budget: int = checkpoints.BUDGET_TOKENS,
) -> Checkpoint:
    """Give the task to the session `to_session`: a revision with the handoff, and the claim
    that session's (the next packet it gets starts from it). Refused while a third session
    holds it."""
    to_session = to_session.strip()
    if not to_session:
        raise InvalidArgument("assign needs the session to give the task to")
    kind = to_session[len(SUBAGENT) :] if to_session.startswith(SUBAGENT) else None
    if kind is not None and not (origin.session_id and plain_name(kind)):
        raise InvalidArgument(
            "assign to `subagent:TYPE` gives the task to the next subagent of that type this "
            "session starts: it needs the session (the agent's tools) and a type named as an "
            "agent is (letters, digits and _ . : @ / -)"
        )
    view = claim_view(conn, checkpoints.get(conn, project, checkpoint_id).id)
    if view["state"] == "held" and view.get("session") not in (origin.session_id, to_session):
        raise taken(checkpoint_id, view)
    return checkpoints.revise(conn, project, checkpoint_id, expected_revision_id, fields,
                              origin, operation="assign", budget=budget,
                              to_session=to_session)  # fmt: skip


def split(
    conn: Connection,
    project: Project,
    parent_id: str,
    parts: list[dict[str, Any]],
    origin: Origin,
    budget: int = checkpoints.BUDGET_TOKENS,
) -> list[Checkpoint]:
    """Subtasks of the task, open for the taking (each with its own claim later); the task
    completes only after them."""
    if not parts:
        raise InvalidArgument("split needs at least one subtask (each with an objective)")
    return [checkpoints.create(conn, project, part, origin, budget, parent_id=parent_id,
                               open_task=True) for part in parts]  # fmt: skip


def done_state(conn: Connection, project: Project, task: Checkpoint) -> dict[str, Any]:
    """The task's definition of done, item by item: a command passed since its holder's last
    edit (`passed`), failed, ran only before that edit (`stale`) or never (`not_run`); a file
    present or missing; behaviour stated (`to_confirm`); and each subtask's status. `met`
    when every command passed, every file is present and every subtask is finished."""
    view = claim_view(conn, task.id)
    holder = view.get("session")
    session = sessions.get_session(conn, holder) if holder else None
    last_edit = str(session.get("last_change_at") or "") if session else ""
    ran = rows.checks(conn, task.id)
    root = view.get("worktree") or project.files
    items: list[dict[str, Any]] = []
    for item in task.revision.body.get("done_when", []):
        if item.get("command"):
            result = ran.get(item["command"])
            state = ("not_run" if result is None else "failed" if result[0] == "fail"
                     else "stale" if result[1] < last_edit else "passed")  # fmt: skip
            items.append({"command": item["command"], "state": state,
                          "at": result[1] if result else None})  # fmt: skip
        if item.get("file"):
            present = bool(root) and os.path.exists(os.path.join(str(root), item["file"]))
            items.append({"file": item["file"], "state": "present" if present else "missing"})
        if item.get("behaviour"):
            items.append({"behaviour": item["behaviour"], "state": "to_confirm"})
    subtasks = [{"id": c, "status": s} for c, s in rows.children(conn, task.id)]
    met = all(i["state"] in ("passed", "present", "to_confirm") for i in items) and all(
        s["status"] != "active" for s in subtasks
    )
    return {"items": items, "subtasks": subtasks, "met": met}


def unmet_commands(state: dict[str, Any]) -> list[str]:
    """The done commands that have not passed since the last edit."""
    return [i["command"] for i in state["items"] if i.get("command") and i["state"] != "passed"]


def board(conn: Connection, project: Project) -> list[dict[str, Any]]:
    """The project's active tasks, the most recently changed first: id, objective, next
    action, parent, the claim (`claim_view`) and its lease's age, the definition of done's
    state."""
    stamp = clock.now()
    out = []
    for row in rows.board(conn, project.id, BOARD_LIMIT):
        task = checkpoints.get(conn, project, str(row[0]))
        view = claim_view(conn, task.id, stamp)
        body = task.revision.body
        out.append({
            "id": task.id, "objective": body.get("objective"),
            "next_action": body.get("next_action"), "revision": task.revision.id,
            "updated_at": task.updated_at, "claim": view,
            "relevant_files": body.get("relevant_files", []),
            "done": done_state(conn, project, task),
        })  # fmt: skip
    return out


def at_once(board: list[dict[str, Any]]) -> bool:
    """Whether a board shows agents at once: more than one task, or one that is held (one
    agent alone has one task, held by nobody)."""
    return len(board) > 1 or any(t["claim"]["state"] != "open" for t in board)


def subagent_started(
    conn: Connection, project: Project, session_id: str, agent_id: str, agent_type: str | None
) -> Checkpoint | None:
    """A subagent starts: the oldest task its lead's session holds for its type is now its
    own (`assign` to `subagent:TYPE`), or None."""
    if not agent_type or not plain_name(agent_type):
        return None
    stamp = clock.now()
    about = json.dumps({"agent_type": agent_type, "bound_at": stamp}, sort_keys=True)
    with db.write(conn):
        task_id = rows.bind(conn, session_id, agent_type, agent_id, about)
    return checkpoints.get(conn, project, task_id) if task_id else None


def subagent_stopped(conn: Connection, project: Project, session_id: str, agent_id: str) -> int:
    """A subagent finished: what it saved to its task waits for its lead's next packet, and
    the task is its lead's again. How many reports were made."""
    stamp = clock.now()
    made = 0
    with db.write(conn):
        for task_id, _, about in rows.bound_to(conn, session_id, agent_id):
            before = len(rows.waiting_reports(conn, session_id))
            report_to_lead(conn, session_id, agent_id, about, task_id, stamp)
            made += len(rows.waiting_reports(conn, session_id)) - before
            rows.back_to_lead(conn, task_id)
    return made


def reports_shown(conn: Connection, report_ids: list[str]) -> None:
    with db.write(conn):
        rows.reports_shown(conn, report_ids, clock.now())
