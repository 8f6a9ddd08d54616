"""The claim on a task (`handoff.tasks`), as each save and claim keeps it: who holds it and
where, what a save by another session is told, and what finishing, releasing and assigning do
to it. Called inside the save's own transaction (`handoff.checkpoints`); no verb of its own.
"""

from __future__ import annotations

import os

from waymark.base import clock
from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.errors import Conflict
from waymark.storage import sessions
from waymark.storage import tasks as rows
from waymark.storage.events import log_event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.handoff.origin import Origin
    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection

SUBAGENT = "subagent:"  # assign's `to`: the next subagent of a type this session starts


def lease_until(conn: Connection) -> str:
    from waymark.handoff.ledger import lease_seconds

    return clock.later(lease_seconds(conn))


def about(conn: Connection, origin: Origin) -> str:
    """What a claim says of its holder: client (the session's own, as its hooks said, else
    the door the claim came through), agent id and type, machine (JSON text)."""
    kind = origin.agent_type if origin.agent_type and plain_name(origin.agent_type) else None
    client = sessions.client_of(conn, origin.session_id) if origin.session_id else None
    said = {"client": client or origin.client, "agent": origin.agent, "agent_type": kind,
            "machine": os.uname().nodename if hasattr(os, "uname") else None}  # fmt: skip
    return json.dumps({k: v for k, v in said.items() if v}, sort_keys=True)


def plain_name(name: str) -> bool:
    """Whether `name` is an agent's name as Waymark stores one (`memories.scope.check_agent`):
    nothing else is kept of an agent's type."""
    from waymark.errors import InvalidScope
    from waymark.memories.scope import check_agent

    try:
        return check_agent(name) is not None
    except InvalidScope:
        return False


def where(project: Project) -> tuple[str | None, str | None, str | None]:
    """Where work on the project starts from here: the base commit, branch, working tree."""
    if not project.files:
        return None, None, None
    from waymark.handoff.ledger import stored_name
    from waymark.projects.locate import git_branch, git_head

    branch = git_branch(project.files)  # as every stored name: redacted when it reads as one
    return git_head(project.files), stored_name(branch) if branch else None, project.files


def claim_view(conn: Connection, checkpoint_id: str, stamp: str | None = None) -> dict[str, Any]:
    """The task's claim: {state: open|held|lapsed, session, agent, client, agent_type,
    machine, since, lease_until, base_commit, branch, worktree, parent}."""
    found = rows.claim_of(conn, checkpoint_id)
    if found is None:
        return {"state": "open"}
    session, agent, said, since, until, base, branch, tree, parent = found
    view: dict[str, Any] = {"parent": parent} if parent else {}
    if session is None:
        return {"state": "open", **view}
    now = stamp or clock.now()
    view |= {"state": "held" if until and until > now else "lapsed", "session": session,
             "since": since, "lease_until": until, "base_commit": base, "branch": branch,
             "worktree": tree}  # fmt: skip
    view |= {"agent": agent} if agent else {}
    view |= json.loads(said) if said else {}
    return view


def who(view: dict[str, Any]) -> str:
    """A claim's holder in a few words: `claude-code session 1a2b3c4d (reviewer)`."""
    said = f"session {str(view.get('session'))[:8]}"
    said = f"{view['client']} {said}" if view.get("client") else said
    said += f" ({view['agent_type']})" if view.get("agent_type") else ""
    by = view.get("assigned_by")
    return said + (f", given by {str(by)[:8]}" if by else "")


def _held_elsewhere(view: dict[str, Any], session: str | None) -> bool:
    return view["state"] == "held" and view.get("session") != session


def taken(checkpoint_id: str, view: dict[str, Any]) -> Conflict:
    return Conflict(
        f"task {checkpoint_id} is held by {who(view)} since {view.get('since')} (lease until "
        f"{view.get('lease_until')}); pick another task, or wait for its handoff",
        id=checkpoint_id,
        holder=view.get("session"),
        since=view.get("since"),
        lease_until=view.get("lease_until"),
    )


def take_for(
    conn: Connection, project: Project, checkpoint_id: str, origin: Origin, stamp: str
) -> None:
    """Inside the caller's transaction: the task is `origin`'s session's (claimed, or its
    lease renewed), or a conflict naming who holds it."""
    assert origin.session_id
    held = rows.take(conn, checkpoint_id, origin.session_id, origin.agent or "", about(conn, origin),
                     stamp, lease_until(conn), where(project))  # fmt: skip
    if not held:
        raise taken(checkpoint_id, claim_view(conn, checkpoint_id, stamp))


def check_holder(conn: Connection, task_id: str, origin: Origin, operation: str) -> None:
    """Before a revision of the task: complete waits for the subtasks; another session's
    live claim refuses a save, and only the holder releases."""
    if operation == "complete":
        left = [c for c, status in rows.children(conn, task_id) if status == "active"]
        if left:
            raise Conflict(
                f"task {task_id} has {len(left)} subtask(s) still active ({', '.join(left)}): "
                "complete or abandon them first",
                id=task_id,
                subtasks=left,
            )
    if not origin.session_id or operation == "assign":
        return  # a person at the command line; an assignment checks for itself
    view = claim_view(conn, task_id)
    if _held_elsewhere(view, origin.session_id):
        raise taken(task_id, view)
    if operation == "release" and view.get("session") != origin.session_id:
        raise Conflict(
            f"task {task_id} is not held by this session: there is nothing to release",
            id=task_id,
        )


def after_save(
    conn: Connection,
    project: Project,
    checkpoint_id: str,
    origin: Origin,
    operation: str,
    to_session: str | None = None,
) -> None:
    """After a revision: finishing or releasing lets the claim go; assigning gives it to
    `to_session`; saving holds it (claimed, or renewed)."""
    stamp = clock.now()
    if operation in ("complete", "abandon", "release"):
        held = rows.claim_of(conn, checkpoint_id)
        if held and held[0] and _is_subagent(held[1]):  # its lead hears of it
            report_to_lead(conn, held[0], held[1], held[2], checkpoint_id, stamp)
        rows.let_go(conn, checkpoint_id)
        if held and held[0]:
            log_event(conn, "task.released", project_id=project.id, actor=origin.actor,
                      session_id=origin.session_id, checkpoint=checkpoint_id,
                      holder=held[0], why=operation)  # fmt: skip
    elif operation == "assign" and to_session and to_session.startswith(SUBAGENT):
        kind = to_session[len(SUBAGENT) :]
        rows.let_go(conn, checkpoint_id)  # the lead's session holds it for that subagent
        rows.take(conn, checkpoint_id, str(origin.session_id), rows.RESERVED + kind, "{}", stamp,
                  lease_until(conn), where(project))  # fmt: skip
        log_event(conn, "task.assigned", project_id=project.id, actor=origin.actor,
                  session_id=origin.session_id, checkpoint=checkpoint_id, to=to_session)  # fmt: skip
    elif operation == "assign" and to_session:
        rows.let_go(conn, checkpoint_id)
        found = sessions.get_session(conn, to_session)
        tree = found.get("tree") if found else None
        rows.take(conn, checkpoint_id, to_session, "", json.dumps({"assigned_by": origin.session_id
                  or origin.actor}), stamp, lease_until(conn), (None, None, tree))  # fmt: skip
        log_event(conn, "task.assigned", project_id=project.id, actor=origin.actor,
                  session_id=origin.session_id, checkpoint=checkpoint_id, to=to_session)  # fmt: skip
    elif origin.session_id and operation in ("revise", "record_lesson"):
        before = rows.claim_of(conn, checkpoint_id)
        take_for(conn, project, checkpoint_id, origin, stamp)
        if not before or before[0] != origin.session_id:
            claimed_event(conn, project, checkpoint_id, origin)


def claimed_event(conn: Connection, project: Project, checkpoint_id: str, origin: Origin) -> None:
    log_event(conn, "task.claimed", project_id=project.id, actor=origin.actor,
              session_id=origin.session_id, checkpoint=checkpoint_id)  # fmt: skip


def _is_subagent(agent: str | None) -> bool:
    return bool(agent) and not str(agent).startswith(rows.RESERVED)


def report_to_lead(
    conn: Connection, session: str, agent_id: str, about: str | None, task_id: str, stamp: str
) -> None:
    """What the subagent saved to its task since it took it, for its lead's next packet: its
    revisions (the current one) and the events it recorded on the task (`record_event`
    with the task's id). Nothing when it saved neither."""
    said = json.loads(about) if about else {}
    bound = str(said.get("bound_at") or "")
    from waymark.storage.checkpoints import current_revision_of

    head = current_revision_of(conn, task_id)
    project_id = rows.project_of(conn, task_id)
    events = rows.events_since(conn, project_id, task_id, bound) if project_id else []
    if head is None or (head[1] < bound and not events):
        return
    rows.put_report(conn, (clock.new_id(), session, agent_id, said.get("agent_type"), task_id,
                           head[0], json.dumps([list(e) for e in events]), stamp))  # fmt: skip
