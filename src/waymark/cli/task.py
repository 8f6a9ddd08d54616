"""The task command: the board of tasks several agents work on at once, and a session's
claims (what the MCP `checkpoint` tool's claim, release, assign and split do)."""

from __future__ import annotations

from waymark import settings
from waymark.base import clock
from waymark.cli.common import Context, add_command, emit
from waymark.errors import InvalidArgument
from waymark.handoff import checkpoints, claims, tasks

TYPE_CHECKING = False  # typing costs a command ~3 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any

OPERATIONS = ("list", "claim", "release", "assign", "split", "done")


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(
        commands,
        "task",
        common,
        handler=cmd_task,
        help="the tasks agents work on at once: the board (open, held by whom, lease, "
        "definition of done), and claim, release, assign or split one",
        example="waymark task claim 01JD... --session 5f0c2a91-7d1e-4b7a-9a55-1c2d3e4f5a6b",
    )
    p.add_argument(
        "operation", choices=OPERATIONS, nargs="?", default="list",
        help="list (default): the board; done: a task's definition of done, item by item",
    )  # fmt: skip
    p.add_argument("task", nargs="?", help="the task's id, or the start of it")
    p.add_argument("--session", help="the client session that claims, releases or assigns")
    p.add_argument("--to", help="assign: the session that gets the task")
    p.add_argument("--expected-revision", help="the revision you build on (default: current)")
    p.add_argument("--next-action", help="release, assign: the handoff's next step")
    p.add_argument("--progress", action="append", metavar="TEXT",
                   help="release, assign: what is done (repeatable; the whole list)")  # fmt: skip
    p.add_argument("--objective", action="append", metavar="TEXT",
                   help="split: a subtask's objective (repeatable: one subtask each)")  # fmt: skip


def _origin(args: argparse.Namespace, project: Any) -> checkpoints.Origin:
    from waymark.projects.locate import git_branch

    branch = git_branch(project.files) if project.files else None
    if args.session:
        return checkpoints.Origin(actor="agent", client="cli", session_id=args.session.strip(),
                                  git_branch=branch)  # fmt: skip
    return checkpoints.Origin(actor="user", client="cli", git_branch=branch)


def cmd_task(args: argparse.Namespace, ctx: Context) -> int:
    project = ctx.project(create=False)
    conn = ctx.conn
    if args.operation == "list":
        board = tasks.board(conn, project)
        emit({"tasks": board}, ctx.as_json, "\n".join(map(_line, board)) or "no active tasks")
        return 0
    if not args.task:
        raise InvalidArgument(f"task {args.operation} needs the task's id")
    task = checkpoints.get(conn, project, args.task)
    origin = _origin(args, project)
    budget = settings.get(conn, "checkpoint.budget_tokens")
    expected = args.expected_revision or task.revision.id
    handoff = {k: v for k, v in (("next_action", args.next_action),
                                 ("progress", args.progress)) if v is not None}  # fmt: skip
    if args.operation == "done":
        state = tasks.done_state(conn, project, task)
        emit(state, ctx.as_json, _done_text(task.id, state))
        return 0
    if args.operation == "claim":  # through the team store when the project is shared
        from waymark.team import claims as team_claims

        saved = team_claims.claim(conn, project, task.id, origin)
        said = f"task {saved.id} is held by session {origin.session_id}"
    elif args.operation == "release":
        saved = tasks.release(conn, project, task.id, expected, handoff, origin, budget)
        said = f"task {saved.id} released with revision {saved.revision.id}: open for the taking"
    elif args.operation == "assign":
        if not args.to:
            raise InvalidArgument("task assign needs --to SESSION")
        saved = tasks.assign(conn, project, task.id, args.to, expected, handoff, origin, budget)
        said = f"task {saved.id} assigned to session {args.to} with revision {saved.revision.id}"
    else:
        parts = [{"objective": o} for o in args.objective or []]
        made = tasks.split(conn, project, task.id, parts, origin, budget)
        emit({"subtasks": [m.to_dict() for m in made]}, ctx.as_json,
             "\n".join(f"subtask {m.id}: {m.revision.body['objective']}" for m in made))  # fmt: skip
        return 0
    emit(saved.to_dict() | {"claim": tasks.claim_view(conn, saved.id)}, ctx.as_json, said)
    return 0


def _line(task: dict[str, Any]) -> str:
    """One task on the board: id, who holds it (and how long its lease has left), where,
    the objective and how much of its definition of done is met."""
    claim = task["claim"]
    if claim["state"] == "open":
        held = "open"
    else:
        left = _minutes_between(clock.now(), claim.get("lease_until") or "")
        lease = f"lease {left} min left" if claim["state"] == "held" else "lease lapsed"
        since = str(claim.get("since") or "")[11:16]
        held = f"{claim['state']} by {claims.who(claim)} since {since} ({lease})"
        if claim.get("branch"):
            held += f" on {claim['branch']}"
    items = task["done"]["items"]
    done = [i for i in items if i["state"] in ("passed", "present")]
    checked = f"; done {len(done)}/{len(items)}" if items else ""
    parent = f" (subtask of {claim['parent'][:10]})" if claim.get("parent") else ""
    return f"{task['id'][:10]}  {held}: {task['objective']}{parent}{checked}"


def _minutes_between(start: str, end: str) -> int:
    if not end:
        return 0
    return max(0, round((clock.epoch(end) - clock.epoch(start)) / 60))


def _done_text(task_id: str, state: dict[str, Any]) -> str:
    lines = [f"task {task_id}: {'done' if state['met'] else 'not done yet'}"]
    for item in state["items"]:
        what = item.get("command") or item.get("file") or item.get("behaviour")
        lines.append(f"  {item['state']:<10} {what}")
    lines += [f"  subtask    {s['id']} {s['status']}" for s in state["subtasks"]]
    return "\n".join(lines)
