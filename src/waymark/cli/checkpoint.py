"""The checkpoint command: show or save the handoff of the current task."""

from __future__ import annotations

import sys

from waymark import settings
from waymark.base import jsonlite as json  # `import json` costs a command ~2 ms
from waymark.cli.common import Context, add_command, emit
from waymark.errors import InvalidArgument, NotFound, UsageError
from waymark.handoff import checkpoints

TYPE_CHECKING = False  # typing costs a command ~3 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(
        commands,
        "checkpoint",
        common,
        handler=cmd_checkpoint,
        help="show or save the handoff of the current task (what the MCP tool does)",
        example='waymark checkpoint create --objective "Add retry to payments" '
        '--next-action "wire backoff into charge()"',
    )
    p.add_argument(
        "operation", choices=OPERATIONS, nargs="?", default="show",
        help="show (default); revise keeps each field you do not give and replaces each list "
        "you do (progress, decisions, tests, ...): give the full list",
    )  # fmt: skip
    p.add_argument("--id", dest="checkpoint_id", help="the checkpoint (default: the active one)")
    p.add_argument("--expected-revision", help="the revision you build on (default: current)")
    p.add_argument("--objective")
    p.add_argument("--next-action")
    for flag, dest in (
        ("--progress", "progress"),
        ("--decision", "decisions"),
        ("--failed", "failed_approaches"),
        ("--blocker", "blockers"),
        ("--test", "tests"),
        ("--evidence", "evidence"),
        ("--file", "relevant_files"),
        ("--lesson", "lessons"),
    ):
        meta = {"--test": "CMD=pass|fail|not_run", "--evidence": "PATH", "--file": "PATH"}
        p.add_argument(flag, dest=dest, action="append", metavar=meta.get(flag, "TEXT"),
                       help="repeatable; on revise, the whole list: give every item to keep"
                       + (" (e.g. --test 'pytest -q=pass')" if flag == "--test" else ""))  # fmt: skip
    for flag, key, what in (("--done-cmd", "command", "a command that must pass"),
                            ("--done-file", "file", "a file that must be in place"),
                            ("--done", "behaviour", "behaviour that must hold")):  # fmt: skip
        p.add_argument(flag, dest=f"done_{key}", action="append", metavar="TEXT",
                       help=f"the definition of done: {what} (repeatable; on revise, with the "
                       "other --done flags, the whole list)")  # fmt: skip
    p.add_argument("--open", action="store_true",
                   help="create: a task open for any agent to take, beside the active one")  # fmt: skip
    p.add_argument("--parent", help="create: a subtask of this task")
    p.add_argument("--session", help="the client session saving: it holds the task it saves")
    p.add_argument("--fields", help="a JSON object of fields (or - for stdin), merged with flags")
    p.add_argument("--kind", choices=tuple(checkpoints.EVENT_TYPES), help="record_event")
    p.add_argument("--summary", help="record_event")
    p.add_argument("--source-key", help="record_event: same key = same fact")


OPERATIONS = ("show", "create", "revise", "complete", "abandon", "record_lesson", "record_event")


def _fields(args: argparse.Namespace) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if args.fields:
        raw = sys.stdin.read() if args.fields == "-" else args.fields
        try:
            fields = json.loads(raw)
        except ValueError as exc:
            raise InvalidArgument(f"--fields is not valid JSON: {exc}") from None
        if not isinstance(fields, dict):
            raise InvalidArgument("--fields must be a JSON object")
    for name in (
        "objective",
        "next_action",
        "progress",
        "decisions",
        "failed_approaches",
        "blockers",
        "evidence",
        "relevant_files",
        "lessons",
    ):
        if getattr(args, name) is not None:
            fields[name] = getattr(args, name)
            if isinstance(fields[name], list):
                fields[name] = [_item(name, value) for value in fields[name]]
    if args.tests:
        fields["tests"] = [_test(t) for t in args.tests]
    done = [{key: value} for key in ("command", "file", "behaviour")
            for value in getattr(args, f"done_{key}") or []]  # fmt: skip
    if done:
        fields["done_when"] = done
    return fields


def _item(name: str, value: Any) -> Any:
    """A repeatable flag's value: text, or a JSON object for a field of that shape
    (`--lesson '{"trigger": ..., "correction": ...}'`), never the object's text kept raw."""
    if not isinstance(value, str) or not value.lstrip().startswith("{"):
        return value
    try:
        parsed = json.loads(value)
    except ValueError as exc:
        flag = {"relevant_files": "file", "failed_approaches": "failed"}.get(name, name[:-1])
        raise InvalidArgument(
            f"--{flag.replace('_', '-')} {value!r} is not valid JSON: {exc}"
        ) from None
    return parsed


RESULT_SPELLINGS = {
    "pass": ("pass", "passed", "passes", "passing", "ok", "success", "succeeded", "green"),
    "fail": ("fail", "failed", "fails", "failing", "failure", "error", "errored", "red"),
    "not_run": ("not_run", "not-run", "not run", "notrun", "skip", "skipped", "pending"),
}
_RESULTS = {spelling: result for result, all_ in RESULT_SPELLINGS.items() for spelling in all_}


def _test(text: str) -> dict[str, str]:
    """`--test "COMMAND=RESULT"`: pass, fail or not_run, in any of their usual spellings
    and any case. Anything else is refused: a result silently read as "not run" would lie."""
    command, sep, result = text.rpartition("=")
    found = _RESULTS.get(result.strip().lower()) if sep else None
    if found is None or not command.strip():
        raise InvalidArgument(
            f"--test {text!r}: give COMMAND=RESULT with RESULT pass, fail or not_run "
            "(also passed/ok, failed/error, skipped; any case)",
            test=text,
        )
    return {"command": command.strip(), "result": found}


def cmd_checkpoint(args: argparse.Namespace, ctx: Context) -> int:
    project = ctx.project(create=args.operation != "show")
    conn = ctx.conn
    from waymark.projects.locate import git_branch

    branch = git_branch(project.files) if project.files else None
    origin = checkpoints.Origin(actor="agent" if args.session else "user", client="cli",
                                session_id=args.session, git_branch=branch)  # fmt: skip
    budget = settings.get(conn, "checkpoint.budget_tokens")
    if args.operation == "record_event":
        if not (args.kind and args.summary and args.source_key):
            raise UsageError("record_event needs --kind, --summary and --source-key")
        result = checkpoints.record_event(
            conn,
            project,
            kind=args.kind,
            summary=args.summary,
            source_key=args.source_key,
            evidence_items=args.evidence,
            checkpoint_id=args.checkpoint_id,
            origin=origin,
        )
        if "queued" in result:  # the summary reads as an instruction to the agent: held
            said = (
                f"event held for review as {result['queued']['id']}: {'; '.join(result['flags'])}"
            )
        else:
            verb = "stored" if result["created"] else "already stored"
            said = f"event {verb}: {result['memory']['id']}"
        emit(result, ctx.as_json, said)
        return 0
    if args.operation == "create":
        saved = checkpoints.create(conn, project, _fields(args), origin, budget,
                                   parent_id=args.parent, open_task=args.open)  # fmt: skip
    else:
        current = (
            checkpoints.get(conn, project, args.checkpoint_id)
            if args.checkpoint_id
            else checkpoints.active(conn, project, args.session)
        )
        if current is None:
            raise NotFound("no active checkpoint here; create one first (or give --id)")
        if args.operation == "show":
            fresh = checkpoints.freshness(current, project.files)
            emit(
                current.to_dict() | {"evidence_state": fresh["state"]},
                ctx.as_json,
                f"checkpoint {current.id} (revision {current.revision.seq}, {current.status},"
                f" evidence {fresh['state']})\n{current.render()}",
            )
            return 0
        saved = checkpoints.revise(
            conn,
            project,
            current.id,
            args.expected_revision or current.revision.id,
            _fields(args),
            origin,
            operation=args.operation,
            budget=budget,
        )
    from waymark.codemap.freshness import freshen

    said = freshen(conn, project, "save")  # an existing code map follows the save
    if said.startswith("failed"):
        print(f"waymark: the code map was not refreshed: {said}", file=sys.stderr)
    held = checkpoints.team_hold(project, saved)
    emit(
        saved.to_dict() | ({"team": held} if held else {}),
        ctx.as_json,
        f"saved revision {saved.revision.seq} ({saved.revision.id}, {saved.revision.tokens}"
        f" tokens) of checkpoint {saved.id} [{saved.status}]"
        + (f"\nteam: {held['said']}" if held else ""),
    )
    return 0
