"""Commands that keep and move data: backup, restore, export, import."""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Iterable

from waymark import home
from waymark.cli.common import Context, add_command, emit, open_input, progress_bar
from waymark.data import importer, portable
from waymark.errors import InvalidArgument, UsageError
from waymark.storage import backup

TYPE_CHECKING = False  # typing costs a command ~3 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    _register_import_backup(commands, common)
    _register_file(commands, common)


def _register_import_backup(commands: Any, common: argparse.ArgumentParser) -> None:
    """import, backup."""
    p = add_command(
        commands,
        "import",
        common,
        handler=cmd_import,
        help="bulk-load memories from JSON lines (re-runs skip unchanged keys), or load a "
        "`waymark export` file with every id kept (all or nothing; twice is a no-op), or read "
        "Claude Code's or Codex's own memory (never written to)",
        example="waymark import --from claude-memory",
    )
    p.add_argument(
        "file",
        nargs="?",
        help='JSON lines: {"key", "text"|"content", "title"?, "type"?, "tags"?, '
        '"timestamp"?, "session"?, "source"?} (lines of one session: turns of one '
        "conversation, each embedded with its neighbours), or a `waymark export` file; - for "
        "stdin",
    )
    p.add_argument(
        "--from",
        dest="source",
        choices=("claude-memory", "codex-memories"),
        help="Claude Code's auto memory of this project, or Codex's memories, read-only: each "
        "file or section proposed as a candidate with its source (`waymark candidates`); "
        "re-runs propose only what changed",
    )
    p.add_argument(
        "--approve",
        action="store_true",
        help="with --from: approve every proposal at once instead of reviewing each",
    )
    p = add_command(
        commands,
        "backup",
        common,
        handler=cmd_backup,
        help="copy the database (online, checked) to backups/ as "
        "waymark-s<schema>-<UTC time>-<sha256>.db, owner-only, never overwriting",
        example="waymark backup --to ~/waymark-backups",
    )
    p.add_argument("--to", metavar="DIR", help="folder for the backup (default: DATA_HOME/backups)")


def _register_file(commands: Any, common: argparse.ArgumentParser) -> None:
    """compact, restore, export."""
    add_command(
        commands,
        "compact",
        common,
        handler=cmd_compact,
        help="give the space of deleted rows back to the disk (VACUUM); `project remove` "
        "does it by itself",
        example="waymark compact",
    )
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
        help="write this project's (or with --all every project's) memories, links, "
        "checkpoint revisions, settings and events to a portable "
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
        "(default: <data home>/exports/waymark-export-<project>-<UTC time>.jsonl, owner-only)",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="every project (default: this directory's project, or the one --project names)",
    )
    p.add_argument(
        "--to",
        choices=("codex-memories",),
        help="codex-memories: the projects' rules and decisions into Codex's own memories "
        "(its memories/extensions/waymark folder; needs `waymark config "
        "codex.memories_extension true` and Codex's memories on)",
    )


def cmd_import(args: argparse.Namespace, ctx: Context) -> int:
    if args.source is not None:
        return _import_native(args, ctx)
    if args.file is None:
        raise UsageError("give a FILE (JSON lines or a Waymark export), or --from SOURCE")
    stream = open_input(args.file)
    try:
        first = stream.readline()
        if portable.is_export_header(first):
            return _import_export(ctx, itertools.chain([first], stream))
        total = _count_lines(args.file) if args.file != "-" else 0
        progress = (
            progress_bar(total, "importing") if sys.stderr.isatty() and not ctx.as_json else None
        )
        started = time.perf_counter()
        lines = itertools.chain([first], stream)
        report = importer.import_lines(ctx.conn, ctx.project(), lines, progress)
        elapsed = time.perf_counter() - started
    finally:
        if stream is not sys.stdin:
            stream.close()
    data = report.to_dict() | {"seconds": round(elapsed, 3)}
    rate = report.read / elapsed if elapsed else 0
    emit(
        data,
        ctx.as_json,
        f"read {report.read}: {report.created} new, {report.superseded} updated, "
        f"{report.unchanged} unchanged, {report.removed} left removed, "
        f"{report.redactions} redactions ({rate:,.0f} rows/s)"
        + (
            f"\n{report.held} held for review: they read as instructions to the agent "
            "(`waymark candidates`)"
            if report.held
            else ""
        ),
    )
    return 0


def _import_native(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.data import client_memory

    if args.file is not None:
        raise UsageError("--from reads the client's own memory: give no FILE")
    project = ctx.project()
    report = client_memory.propose(ctx.conn, project, args.source, approve=args.approve)
    where = client_memory.source_folder(args.source, project)
    data = report | {"source": args.source, "folder": where}
    text = (
        f"{args.source} ({where}): read {report['read']}: {report['proposed']} proposed,"
        f" {report['waiting']} already waiting, {report['unchanged']} unchanged,"
        f" {report['removed']} left removed, {report['rejected_before']} rejected before"
    )
    if args.approve:
        text += f"; approved {report['approved']}"
        if report["held"]:
            text += (
                f"; {report['held']} left waiting: they read as instructions to the agent"
                " (`waymark candidates --kind import`)"
            )
    elif report["proposed"] or report["waiting"]:
        text += "; review them: `waymark candidates --kind import`"
    emit(data, ctx.as_json, text)
    return 0


def _import_export(ctx: Context, lines: Iterable[str]) -> int:
    """A `waymark export` file: every row with its id, all or nothing."""
    if ctx.project_spec:
        raise InvalidArgument("a Waymark export carries its own projects; drop --project")
    data = portable.import_export(ctx.conn, lines)
    emit(
        data,
        ctx.as_json,
        f"imported a Waymark export (schema {data['schema_version']}): "
        f"{data['total_inserted']} rows new, {data['total_unchanged']} already here; "
        "run `waymark index` to rebuild semantic vectors",
    )
    return 0


def _count_lines(path: str) -> int:
    with open(path, "rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


def cmd_backup(args: argparse.Namespace, ctx: Context) -> int:
    info = backup.backup(to_dir=args.to)
    emit(
        info.to_dict(),
        ctx.as_json,
        f"backed up to {info.path}\n  size    {info.size:,} bytes\n  sha256  {info.sha256}",
    )
    return 0


def cmd_compact(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.storage.connection import compact

    before, after = compact(ctx.conn, home.db_path())
    done = {"bytes_before": before, "bytes_after": after, "freed": max(0, before - after)}
    text = f"compacted: {before:,} -> {after:,} bytes"
    emit(done, ctx.as_json, text)
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


def _to_codex(args: argparse.Namespace, ctx: Context) -> int:
    from waymark import settings
    from waymark.errors import InvalidArgument
    from waymark.packets import codex_memories as codex
    from waymark.projects.manage import every_project

    if args.out or args.format != "jsonl":
        raise UsageError("--to codex-memories writes Codex's folder: no --out or --format")
    if not settings.get(ctx.conn, codex.SETTING):
        raise InvalidArgument(
            f"the Codex memories extension is off: `waymark config {codex.SETTING} true` "
            "turns it on (each session's end then keeps it current)"
        )
    if not codex.memories_on():
        raise InvalidArgument(
            "Codex's memories are off: `[features] memories = true` in its config.toml "
            "turns them on; nothing was written"
        )
    projects = every_project(ctx.conn) if args.all else [ctx.project(create=False)]
    data = codex.sync(ctx.conn, projects)
    emit(data, ctx.as_json, f"Codex memories extension {data['folder']}: "
         f"{len(data['written'])} written, {data['unchanged']} unchanged, "
         f"{len(data['removed'])} removed")  # fmt: skip
    return 0


def cmd_export(args: argparse.Namespace, ctx: Context) -> int:
    if args.all and ctx.project_spec:
        raise UsageError("give either --all or --project, not both")
    if args.to == "codex-memories":
        return _to_codex(args, ctx)
    project = None if args.all else ctx.project(create=False)
    project_id = project.id if project else None
    out = args.out or portable.default_path(project, args.format)
    if args.format == "markdown":
        if out == "-":
            raise UsageError("a Markdown export is a folder; give --out DIR")
        data = portable.export_markdown(ctx.conn, out, project_id)
        text = f"wrote {data['memories']} memories and {data['checkpoints']} checkpoints to {data['path']}"
        emit(data, ctx.as_json, text)
        return 0
    if out == "-":
        if ctx.as_json:
            raise UsageError("--out - writes the export to stdout; drop --json")
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
