"""Commands about the store itself: project, status, import (simple lines or an export)."""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Iterable
from typing import Any

from waymark.cli.common import Context, add_command, emit, open_input
from waymark.data import importer, portable
from waymark.errors import InvalidArgument
from waymark.health import status


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
    add_command(
        commands,
        "doctor",
        common,
        handler=cmd_doctor,
        help="check the environment, database, client registrations, model and hooks",
        example="waymark doctor --json",
    )
    p = add_command(
        commands,
        "import",
        common,
        handler=cmd_import,
        help="bulk-load memories from JSON lines (re-runs skip unchanged keys), or load a "
        "`waymark export` file with every id kept (all or nothing; twice is a no-op)",
        example="waymark import notes.jsonl --project team-notes",
    )
    p.add_argument(
        "file",
        help='JSON lines: {"key", "text"|"content", "title"?, "type"?, '
        '"tags"?, "timestamp"?}, or a `waymark export` file; - for stdin',
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


def cmd_doctor(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.health import doctor
    from waymark.installers.checks import client_checks

    findings = doctor.run_all(client_checks)
    healthy = not any(f["status"] == doctor.FAIL for f in findings)
    lines = []
    for f in findings:
        lines.append(f"{f['status'].upper():5} {f['check']}: {f['detail']}")
        if f["fix"] and f["status"] in (doctor.FAIL, doctor.WARN):
            lines.append(f"      fix: {f['fix']}")
    lines.append("healthy" if healthy else "not healthy: fix the FAIL lines above")
    emit({"healthy": healthy, "findings": findings}, ctx.as_json, "\n".join(lines))
    return 0 if healthy else 1


def cmd_import(args: argparse.Namespace, ctx: Context) -> int:
    stream = open_input(args.file)
    try:
        first = stream.readline()
        if portable.is_export_header(first):
            return _import_export(ctx, itertools.chain([first], stream))
        total = _count_lines(args.file) if args.file != "-" else 0
        progress = _progress_bar(total) if sys.stderr.isatty() and not ctx.as_json else None
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
        f"{report.redactions} redactions ({rate:,.0f} rows/s)",
    )
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


def _progress_bar(total: int) -> Any:
    def show(done: int) -> None:
        if total:
            filled = int(30 * min(done, total) / total)
            bar = "#" * filled + "-" * (30 - filled)
            sys.stderr.write(f"\rimporting [{bar}] {done}/{total}")
        else:
            sys.stderr.write(f"\rimporting {done}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show
