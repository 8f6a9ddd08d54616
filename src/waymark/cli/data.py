"""Commands that keep data safe: backup, restore, export (import lives in admin)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from waymark.base import clock
from waymark.cli.common import Context, add_command, emit
from waymark.data import portable
from waymark.errors import InvalidArgument
from waymark.storage import backup


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(
        commands,
        "backup",
        common,
        handler=cmd_backup,
        help="copy the database (online, checked) to backups/ as "
        "waymark-s<schema>-<UTC time>-<sha256>.db, owner-only, never overwriting",
        example="waymark backup --to /mnt/usb/waymark",
    )
    p.add_argument("--to", metavar="DIR", help="folder for the backup (default: DATA_HOME/backups)")
    p = add_command(
        commands,
        "restore",
        common,
        handler=cmd_restore,
        help="replace the database with a verified backup; the current one is kept in "
        "backups/pre-restore-<time>.db",
        example="waymark restore ~/.local/share/waymark/backups/waymark-s6-20261130T041502Z-"
        "3f9a0c1d2e4b.db",
    )
    p.add_argument("file", help="a backup made by `waymark backup` (or any Waymark database)")
    p = add_command(
        commands,
        "export",
        common,
        handler=cmd_export,
        help="write every memory, link, checkpoint revision, setting and event to a portable "
        "file (JSON lines with a digest, re-loadable with `waymark import`) or to Markdown to read",
        example="waymark export --all --out waymark.jsonl",
    )
    p.add_argument(
        "--format",
        choices=("jsonl", "markdown"),
        default="jsonl",
        help="jsonl: every row, re-loadable (default); markdown: a folder to read, export-only",
    )
    p.add_argument(
        "--out",
        metavar="PATH",
        help="file (jsonl; - for stdout) or folder (markdown) to create; never replaced "
        "(default: waymark-export-<UTC time>.jsonl or a folder of that name here)",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="every project (the default unless --project names one)",
    )


def cmd_backup(args: argparse.Namespace, ctx: Context) -> int:
    info = backup.backup(to_dir=args.to)
    emit(
        info.to_dict(),
        ctx.as_json,
        f"backed up to {info.path}\n  size    {info.size:,} bytes\n  sha256  {info.sha256}",
    )
    return 0


def cmd_restore(args: argparse.Namespace, ctx: Context) -> int:
    # Never opens ctx.conn: the database must be closed to be swapped.
    data = backup.restore(args.file)
    lines = [
        f"restored {data['restored_from']} (schema {data['schema_version']}, "
        f"sha256 {data['sha256']})"
    ]
    if data["kept_aside"]:
        lines.append(f"  the previous database is kept at {data['kept_aside']}")
    if data["migrates_on_open"]:
        lines.append("  its older schema is migrated when Waymark next opens it")
    emit(data, ctx.as_json, "\n".join(lines))
    return 0


def cmd_export(args: argparse.Namespace, ctx: Context) -> int:
    if args.all and ctx.project_spec:
        raise InvalidArgument("give either --all or --project, not both")
    project_id = ctx.project(create=False).id if ctx.project_spec else None
    out = args.out or f"waymark-export-{clock.compact()}" + (
        ".jsonl" if args.format == "jsonl" else ""
    )
    if args.format == "markdown":
        if out == "-":
            raise InvalidArgument("a Markdown export is a folder; give --out DIR")
        data = portable.export_markdown(ctx.conn, out, project_id)
        text = f"wrote {data['memories']} memories and {data['checkpoints']} checkpoints to {data['path']}"
        emit(data, ctx.as_json, text)
        return 0
    if out == "-":
        if ctx.as_json:
            raise InvalidArgument("--out - writes the export to stdout; drop --json")
        portable.export_jsonl(ctx.conn, sys.stdout, project_id)
        return 0
    data = portable.write_export(ctx.conn, out, project_id)
    rows = sum(data["rows"].values())
    emit(
        data,
        ctx.as_json,
        f"exported {rows} rows to {data['path']}\n  digest  {data['digest']}",
    )
    return 0
