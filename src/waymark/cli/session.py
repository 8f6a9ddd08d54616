"""Commands around sessions: checkpoint, mcp, enable, disable, config."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from waymark import settings
from waymark.cli.common import Context, add_command, emit
from waymark.errors import InvalidArgument
from waymark.handoff import checkpoints
from waymark.projects import capture, instructions

OPERATIONS = ("show", "create", "revise", "complete", "abandon", "record_lesson", "record_event")


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
    p.add_argument("operation", choices=OPERATIONS, nargs="?", default="show")
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
        p.add_argument(flag, dest=dest, action="append", help="repeatable")
    p.add_argument("--fields", help="a JSON object of fields (or - for stdin), merged with flags")
    p.add_argument("--kind", choices=tuple(checkpoints.EVENT_TYPES), help="record_event")
    p.add_argument("--summary", help="record_event")
    p.add_argument("--source-key", help="record_event: same key = same fact")

    add_command(
        commands,
        "mcp",
        common,
        handler=cmd_mcp,
        help="run the MCP stdio server (started by Claude Code or Codex)",
        example="waymark mcp",
    )
    for name, handler, verb in (
        ("enable", cmd_enable, "let the hooks capture in"),
        ("disable", cmd_disable, "keep the hooks silent in"),
    ):
        p = add_command(
            commands,
            name,
            common,
            handler=handler,
            help=f"{verb} this project",
            example=f"waymark {name} --instructions",
        )
        p.add_argument(
            "--instructions",
            action="store_true",
            help=("insert (or update) " if name == "enable" else "remove ")
            + "Waymark's block in the project's CLAUDE.md and AGENTS.md",
        )
    p = add_command(
        commands,
        "config",
        common,
        handler=cmd_config,
        help="show or change a setting",
        example="waymark config recall.half_life_days 30",
    )
    p.add_argument("key", nargs="?")
    p.add_argument("value", nargs="?", help="a JSON value (true, 30, ...)")


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
    if args.tests:
        fields["tests"] = [_test(t) for t in args.tests]
    return fields


def _test(text: str) -> dict[str, str]:
    command, sep, result = text.rpartition("=")
    if sep and result in ("pass", "fail", "not_run"):
        return {"command": command, "result": result}
    return {"command": text, "result": "not_run"}


def cmd_checkpoint(args: argparse.Namespace, ctx: Context) -> int:
    project = ctx.project()
    conn = ctx.conn
    origin = checkpoints.Origin(actor="user", client="cli")
    budget = settings.get(conn, "checkpoint.budget_tokens")
    if args.operation == "record_event":
        if not (args.kind and args.summary and args.source_key):
            raise InvalidArgument("record_event needs --kind, --summary and --source-key")
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
        emit(
            result,
            ctx.as_json,
            f"event {'stored' if result['created'] else 'already stored'}:"
            f" {result['memory']['id']}",
        )
        return 0
    if args.operation == "create":
        saved = checkpoints.create(conn, project, _fields(args), origin, budget)
    else:
        current = (
            checkpoints.get(conn, project, args.checkpoint_id)
            if args.checkpoint_id
            else checkpoints.active(conn, project)
        )
        if current is None:
            raise InvalidArgument("no active checkpoint here; create one first")
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
    emit(
        saved.to_dict(),
        ctx.as_json,
        f"saved revision {saved.revision.seq} ({saved.revision.id}, {saved.revision.tokens}"
        f" tokens) of checkpoint {saved.id} [{saved.status}]",
    )
    return 0


def cmd_mcp(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.server.front import main

    ctx.close()
    return main()


def cmd_enable(args: argparse.Namespace, ctx: Context) -> int:
    return _set_capture(args, ctx, True)


def cmd_disable(args: argparse.Namespace, ctx: Context) -> int:
    return _set_capture(args, ctx, False)


def _set_capture(args: argparse.Namespace, ctx: Context, enabled: bool) -> int:
    project = ctx.project()
    files: dict[str, str] = {}
    if args.instructions:
        if not project.files:
            raise InvalidArgument("--instructions needs a project directory")
        files = {
            name: instructions.apply(os.path.join(project.files, name), remove=not enabled)
            for name in instructions.FILES
        }
    capture.set_enabled(ctx.conn, project, enabled)
    where = project.name or project.root
    lines = [f"Waymark hooks {'now capture' if enabled else 'stay silent'} in {where}"]
    lines += [f"{name}: {verb}" for name, verb in files.items()]
    emit(capture.policy(ctx.conn, project) | {"instructions": files}, ctx.as_json, "\n".join(lines))
    return 0


def cmd_config(args: argparse.Namespace, ctx: Context) -> int:
    conn = ctx.conn
    if args.key is None:
        values = settings.all_values(conn)
        emit(values, ctx.as_json, "\n".join(f"{k} = {json.dumps(v)}" for k, v in values.items()))
        return 0
    if args.value is None:
        value = settings.get(conn, args.key)
    else:
        try:
            parsed = json.loads(args.value)
        except ValueError:
            parsed = args.value
        value = settings.set_value(conn, args.key, parsed)
    emit({args.key: value}, ctx.as_json, f"{args.key} = {json.dumps(value)}")
    return 0
