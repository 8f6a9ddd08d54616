"""Commands that connect Waymark to the clients: install, uninstall."""

from __future__ import annotations

import argparse
from typing import Any

from waymark.cli.common import Context, add_command, emit

CLIENT_CHOICES = ("claude-code", "codex", "all")
STATUS_TEXT = {
    "created": "created",
    "updated": "updated",
    "unchanged": "already up to date",
    "deleted": "deleted (Waymark created it)",
    "restored": "restored byte for byte",
    "cleaned": "Waymark's entries removed (the file changed since; other changes kept)",
    "missing": "already gone",
}


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(
        commands,
        "install",
        common,
        handler=cmd_install,
        help="connect Waymark to Claude Code and Codex: hooks and the `waymark` MCP server",
        example="waymark install --client codex --dry-run",
    )
    p.add_argument(
        "--client",
        choices=CLIENT_CHOICES,
        help="which client (default: every client found on this machine)",
    )
    p.add_argument("--dry-run", action="store_true", help="show the diffs; change nothing")
    p = add_command(
        commands,
        "uninstall",
        common,
        handler=cmd_uninstall,
        help="remove exactly what `waymark install` added; memories are kept",
        example="waymark uninstall --client claude-code",
    )
    p.add_argument("--client", choices=CLIENT_CHOICES, help="which client (default: all)")
    p.add_argument("--dry-run", action="store_true", help="show the diffs; change nothing")
    p.add_argument(
        "--delete-data", action="store_true", help="also delete every memory (needs --yes)"
    )
    p.add_argument("--yes", action="store_true", help="confirm --delete-data")


def _clients(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return ["claude-code", "codex"] if value == "all" else [value]


def cmd_install(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.installers import install

    report = install(_clients(args.client), dry_run=args.dry_run)
    emit(report, ctx.as_json, render(report))
    return 0


def cmd_uninstall(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.installers import uninstall

    report = uninstall(
        _clients(args.client), dry_run=args.dry_run, delete_data=args.delete_data, yes=args.yes
    )
    emit(report, ctx.as_json, render(report))
    return 0


def render(report: dict[str, Any]) -> str:
    from waymark.installers.files import display

    lines = []
    names = {"claude-code": "Claude Code", "codex": "Codex"}
    for item in report["files"]:
        if report["dry_run"]:
            lines.append(item["diff"] or f"{display(item['path'])}: no change\n")
        else:
            lines.append(
                f"{names[item['client']]:<11} {item['what']:<22} {display(item['path'])}: "
                f"{STATUS_TEXT[item['status']]}"
            )
    if report["dry_run"]:
        lines.append("dry run: nothing was written")
    elif report["action"] == "uninstall" and not report["files"]:
        lines.append("nothing to remove: the install manifest lists no files")
    lines += [f"note: {n}" for n in report["notes"]]
    return "\n".join(lines)
