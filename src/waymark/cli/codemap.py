"""The code map from the command line: waymark map refresh | status | changes; and the
repository's notes: waymark notes list | refresh | show."""

from __future__ import annotations

import os

from waymark.cli.common import Context, add_command, bounded, emit
from waymark.codemap import changes, questions, snapshot
from waymark.errors import UsageError

TYPE_CHECKING = False  # typing costs a command ~3 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(
        commands,
        "map",
        common,
        handler=cmd_map,
        help="the repository's code map: refresh it (incremental), list its snapshots, show the "
        "files added, removed, modified and renamed between two, or the declarations, imports "
        "and calls parsed from its source files (ten languages, and dbt models), what depends on "
        "a file or declaration, or "
        "the names a few words find",
        example="waymark map refresh && waymark map changes --path src/",
    )
    p.add_argument("action", choices=("refresh", "status", "changes", "symbols", "impact", "find"))
    p.add_argument(
        "target", nargs="?", help="impact: a file, or path::Qualified.name; find: a few words"
    )
    p.add_argument("--depth", type=bounded(1, questions.DEPTH_MAX), default=2,
                   help="impact: steps of dependents to follow (default 2)")  # fmt: skip
    p.add_argument("--from", dest="since", metavar="SNAPSHOT", help="changes: the older one")
    p.add_argument("--to", dest="until", metavar="SNAPSHOT", help="changes: the newer one")
    p.add_argument("--path", help="changes: only this file or directory; symbols: this file")
    p.add_argument(
        "--yes",
        action="store_true",
        help="refresh: map a folder that is no git repository (every file below it)",
    )
    p.add_argument("--quiet", action="store_true",
                   help="refresh: print nothing (what hooks start in the background)")  # fmt: skip
    register_notes(commands, common)


def register_notes(commands: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(
        commands,
        "notes",
        common,
        handler=cmd_notes,
        help="the repository's Markdown notes as cited knowledge (`[knowledge] paths`, default "
        "docs/**/*.md, adr/**, *.md at the root): list them, refresh the index, show a section",
        example="waymark notes show docs/adr/0003-queues.md#Decision",
    )
    p.add_argument("action", nargs="?", choices=("list", "refresh", "show", "add", "remove"),
                   default="list")  # fmt: skip
    p.add_argument("target", nargs="?",
                   help="show: PATH or PATH#HEADING; add, remove: a folder of Markdown outside "
                   "the repository (an Obsidian vault), read-only")  # fmt: skip


def cmd_notes(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.knowledge import notes

    project = ctx.project(create=False)
    if args.action == "refresh":
        done = notes.refresh(ctx.conn, project)
        emit(done, ctx.as_json, (
            f"{done['files']} files, {done['sections']} sections: {done['added']} added,"
            f" {done['changed']} changed, {done['removed']} removed, {done['unchanged']}"
            f" unchanged ({done['seconds']:.2f} s)"))  # fmt: skip
        return 0
    if args.action in ("add", "remove"):
        if not args.target:
            raise UsageError(f"notes {args.action} needs a folder")
        change = notes.add_folder if args.action == "add" else notes.remove_folder
        real = change(ctx.conn, project, args.target)
        said = "added: `waymark notes refresh` reads it" if args.action == "add" else "removed"
        emit({"folder": real, "action": args.action}, ctx.as_json, f"{real}: {said}")
        return 0
    if args.action == "show":
        if not args.target:
            raise UsageError("notes show needs PATH or PATH#HEADING")
        found = notes.show(ctx.conn, project, args.target)
        text = "\n\n".join(f"{s['cite']}  [{s['state']}]\n{s['text']}" for s in found)
        emit({"sections": found}, ctx.as_json, text)
        return 0
    data = notes.listing(ctx.conn, project)
    lines = [f"{f['path']}  {f['kind']}, {f['sections']} sections  [{f['state']}]"
             for f in data["files"]] + [f"folder: {p}" for p in data["folders"]]  # fmt: skip
    lines = lines or ["no notes indexed: `waymark notes refresh` reads "
                      + ", ".join(data["configured"])]  # fmt: skip
    emit(data, ctx.as_json, "\n".join(lines))
    return 0


def cmd_map(args: argparse.Namespace, ctx: Context) -> int:
    if args.action == "refresh":
        done = snapshot.refresh(ctx.conn, ctx.project(), confirmed=args.yes)
        snap = done["snapshot"]
        verb = "new snapshot" if done["created"] else "unchanged since"
        lines = [
            f"{verb} {snap['id']}: {done['files']:,} files ({done['hashed']:,} hashed, "
            f"{done['reused']:,} unchanged) in {done['seconds']:.2f} s"
        ]
        if done["skipped"]:
            left = ", ".join(f"{n:,} {why}" for why, n in sorted(done["skipped"].items()))
            lines.append(f"left out: {left}")
        lines += [f"memory {r['memory']} now targets {r['to']} (was {r['from']}: it moved)"
                  for r in done["retargeted"]]  # fmt: skip
        if not args.quiet:
            emit(done, ctx.as_json, "\n".join(lines))
    elif args.action == "status":
        found = questions.status(ctx.conn, ctx.project(create=False))
        lines = [
            f"{s['id']}  {s['created_at'][:19].replace('T', ' ')}  {s['files']:,} files"
            + (f"  HEAD {s['git_head'][:10]}" if s["git_head"] else "")
            + (" dirty" if s["git_dirty"] else "")
            + ("" if s["kept"] else "  (files pruned)")
            for s in found["snapshots"]
        ] or ["no snapshots yet: run `waymark map refresh`"]
        lines.append(f"{found['stored_files']:,} file rows stored; the {found['keep']} newest "
                     "snapshots keep their files")  # fmt: skip
        emit(found, ctx.as_json, "\n".join(lines))
    elif args.action == "impact":
        if not args.target:
            raise UsageError("impact needs a TARGET: a file, or path::Qualified.name")
        found = questions.impact(
            ctx.conn, ctx.project(create=False), args.target, args.depth, base=os.getcwd()
        )
        lines = [f"{len(found['dependents'])} dependents of {found['target']} "
                 f"(snapshot {found['snapshot']}, depth {found['depth']})"]  # fmt: skip
        lines += [f"{'  ' * d['depth']}{d['at']}  {d['kind']}s {d['via']} (line {d['line']})"
                  for d in found["dependents"]]  # fmt: skip
        emit(found, ctx.as_json, "\n".join(lines))
    elif args.action == "find":
        if not args.target:
            raise UsageError("find needs a few words to look for")
        found = questions.find(ctx.conn, ctx.project(create=False), args.target)
        lines = [f"{r['name']}  ({r['kind']}, {r['match']})" for r in found["results"]]
        lines.append(f"{found['total']} matched (snapshot {found['snapshot']})")
        emit(found, ctx.as_json, "\n".join(lines))
    elif args.action == "symbols":
        found = questions.structure(ctx.conn, ctx.project(create=False), args.path)
        lines = [
            f"{d['path']}:{d['start_line']}-{d['end_line']}  {d['kind']:<8} {d['qualname']}"
            for d in found["declarations"]
        ] or ["no declarations parsed"]
        refs = found["references"]
        lines.append(f"{sum(r['kind'] == 'import' for r in refs):,} imports, "
                     f"{sum(r['kind'] == 'call' for r in refs):,} calls "
                     f"(snapshot {found['snapshot']['id']})")  # fmt: skip
        emit(found, ctx.as_json, "\n".join(lines))
    else:
        diff = changes.changes(
            ctx.conn, ctx.project(create=False), since=args.since, until=args.until,
            path=args.path,
        )  # fmt: skip
        lines = [f"{diff['from']['id']} -> {diff['to']['id']}"]
        lines += [f"A {p}" for p in diff["added"]] + [f"D {p}" for p in diff["removed"]]
        lines += [f"M {p}" for p in diff["modified"]]
        lines += [f"R {r['from']} -> {r['to']}" for r in diff["renamed"]]
        declared = diff["declarations"]
        for mark, key in (("A", "added"), ("D", "removed"), ("M", "modified")):
            lines += [f"{mark} {name}" for name in declared[key]]
        for mark, key in (("+", "added"), ("-", "removed")):
            lines += [f"{mark} {r['from']} {r['kind']}s {r['to']}"
                      for r in diff["relationships"][key]]  # fmt: skip
        if len(lines) == 1:
            lines.append("no file changed")
        emit(diff, ctx.as_json, "\n".join(lines))
    return 0
