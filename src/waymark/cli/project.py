"""Commands about this project: which it is, its status, and whether hooks capture here."""

from __future__ import annotations

import argparse
import os
from typing import Any

from waymark.cli.common import Context, add_command, emit
from waymark.errors import InvalidArgument
from waymark.health import status
from waymark.projects import capture, instructions


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    add_command(
        commands,
        "project",
        common,
        handler=cmd_project,
        help="show which project this directory is, its id, and how it was chosen",
        example="waymark project --json",
    )
    add_command(
        commands,
        "status",
        common,
        handler=cmd_status,
        help="the data home, schema, and this project's memory counts",
        example="waymark status",
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


def cmd_project(args: argparse.Namespace, ctx: Context) -> int:
    project = ctx.project()
    text = f"{project.name or project.root}\n  id:  {project.id}\n  how: {project.how}"
    emit(project.to_dict(), ctx.as_json, text)
    return 0


def cmd_status(args: argparse.Namespace, ctx: Context) -> int:
    project = ctx.project()
    data = status.report(ctx.conn, project)
    active = data["memories"].get("active", {})
    sem = data["semantic"]
    pending = data["handoff"]["pending"]
    lines = [
        f"project     {project.name or project.root} ({project.id})",
        f"database    {data['database']} (schema {data['schema_version']},"
        f" {data['database_bytes']:,} bytes)",
        f"memories    {sum(active.values())} active"
        + (f": {', '.join(f'{n} {t}' for t, n in active.items())}" if active else ""),
        f"global      {data['global_memories']} active",
        f"semantic    {'on' if sem['available'] else 'off'}: {sem['model']}"
        f" ({sem['embedded']} embedded)",
        *([f"queries     {sem['queries']}"] if sem["queries"] else []),
        f"capture     {'on' if data['capture']['enabled'] else 'off'}: {data['capture']['why']}",
        f"handoff     {len(pending)} pending" if pending else "handoff     none pending",
    ]
    emit(data, ctx.as_json, "\n".join(lines))
    return 0


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
