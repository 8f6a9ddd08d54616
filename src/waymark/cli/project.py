"""Commands about this project: which it is, its status, and whether hooks capture here."""

from __future__ import annotations

import os

from waymark.cli.common import Context, add_command, emit
from waymark.errors import InvalidArgument, NotFound
from waymark.health import status
from waymark.projects import capture

# `manage` (the `project` commands' listing, rebinding and removal) is imported where used:
# `waymark status` skips its ~10 ms.
from waymark.projects.locate import CONFIG_NAME
from waymark.projects.resolve import resolve

TYPE_CHECKING = False  # typing costs a command ~3 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    _register_projects(commands, common)
    _register_status(commands, common)


def _register_projects(commands: Any, common: argparse.ArgumentParser) -> None:
    """project and its list, rebind, rename, remove."""
    p = add_command(
        commands,
        "project",
        common,
        handler=cmd_project,
        help="show which project this directory is (list, rebind and remove projects)",
        example="waymark project list",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=False)
    add_command(
        actions,
        "list",
        common,
        handler=cmd_project_list,
        help="every project: id, directory or name, memories, checkpoints, last session",
        example="waymark project list --json",
    ).add_argument("--all", dest="all_folders", action="store_true",
                   help="also the plain folders (outside git) that hold nothing")  # fmt: skip
    rebind = add_command(
        actions,
        "rebind",
        common,
        handler=cmd_project_rebind,
        help="bind a directory (a clone, a copy) to an existing project and its memories",
        example="waymark project rebind . --to 01M8SB5XG39S",
    )
    rebind.add_argument("directory", nargs="?", default=".", help="default: this directory")
    rebind.add_argument(
        "--to", required=True, metavar="ID_OR_NAME", help="the project (id, id prefix, or name)"
    )
    rename = add_command(
        actions,
        "rename",
        common,
        handler=cmd_project_rename,
        help="give a project a new name (the old name and directory keep addressing it)",
        example="waymark project rename shop store",
    )
    rename.add_argument("id", metavar="ID_NAME_OR_DIR")
    rename.add_argument("name", metavar="NEW_NAME")
    remove = add_command(
        actions,
        "remove",
        common,
        handler=cmd_project_remove,
        help="delete a project and everything recorded under it (the database is backed up first)",
        example="waymark project remove 01M8SB5XG39S --yes",
    )
    remove.add_argument("id", metavar="ID_OR_NAME")
    remove.add_argument("--yes", action="store_true", help="really delete it")


def _register_status(commands: Any, common: argparse.ArgumentParser) -> None:
    """status, capture."""
    add_command(
        commands,
        "status",
        common,
        handler=cmd_status,
        help="the data home, schema, and this project's memory counts",
        example="waymark status",
    )
    p = add_command(
        commands,
        "capture",
        common,
        handler=cmd_capture,
        help="show or set how hooks capture here: on (inject and record), confirm (as on; the "
        "agent's own writes wait for review), read-only (inject, "
        "never record) or off; for the project, or one --session",
        example="waymark capture read-only --session 3f2a...",
    )
    p.add_argument("mode", nargs="?", choices=capture.MODES)
    p.add_argument("--session", metavar="SESSION_ID", help="only this client session")
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
    try:
        project = ctx.project(create=False)
    except NotFound:
        if ctx.project_spec and not os.path.isdir(ctx.project_spec):
            raise
        return _not_a_project(ctx)
    text = f"{project.name or project.root}\n  id:  {project.id}\n  how: {project.how}"
    emit(project.to_dict(), ctx.as_json, text)
    return 0


def _not_a_project(ctx: Context, data: dict[str, Any] | None = None) -> int:
    """A directory nobody bound: say so, and point at a clone's project if there is one."""
    from waymark.projects import manage

    found = manage.unbound(ctx.conn, ctx.project_spec or ".")
    lines = [
        f"{found['root']}",
        "  not a Waymark project yet: nothing is recorded here; the first `waymark remember`"
        " or `waymark enable` binds it",
    ]
    for same in found["named"]:
        lines.append(
            f"  this repository's memories are under {same['name']!r} "
            f"({_count(same['memories'], 'memory', 'memories')}): "
            f'add `name = "{same["name"]}"` to {CONFIG_NAME} here to use them'
        )
    for same in found["same_repository"]:
        lines.append(
            f"  the same repository is project {same['id']} at {same['root']} "
            f"({_count(same['memories'], 'memory', 'memories')}): "
            f"`waymark project rebind --to {same['id']}` "
            "to use them here"
        )
    if data:
        lines += [
            f"database    {data['database']} (schema {data['schema_version']},"
            f" {data['database_bytes']:,} bytes)",
            f"global      {data['global_memories']} active",
        ]
    emit({**(data or {}), "project": found}, ctx.as_json, "\n".join(lines))
    return 0


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def cmd_project_list(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.projects import manage

    rows = manage.summaries(ctx.conn, empty_folders=args.all_folders)
    hidden = (
        0 if args.all_folders else len(manage.summaries(ctx.conn, empty_folders=True)) - len(rows)
    )
    lines = [
        f"{r['id']}  {r['kind']:5}  {r['memories']:>5} memories  {r['checkpoints']:>3} checkpoints"
        f"  last session {(r['last_session'] or 'never')[:10]:10}  "
        f"{r['name'] or r['root']}{'  (directory missing)' if r['missing'] else ''}"
        for r in rows
    ] or ["no projects yet"]
    if hidden:
        lines.append(f"({hidden} empty folder{'s' if hidden != 1 else ''} outside git not shown:"
                     " --all)")  # fmt: skip
    emit({"projects": rows, "hidden_empty_folders": hidden}, ctx.as_json, "\n".join(lines))
    return 0


def cmd_project_rebind(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.projects import manage

    if not os.path.isdir(args.directory):
        raise InvalidArgument(f"{args.directory} is not a directory")
    done = manage.rebind(ctx.conn, args.directory, args.to)
    text = (
        f"{done['root']} is project {done['project']} (it was at {done['previous_root']})"
        if done["changed"]
        else f"{done['root']} already is project {done['project']}"
    )
    emit(done, ctx.as_json, text)
    return 0


def cmd_project_rename(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.projects import manage

    spec = args.id
    if os.path.isdir(spec):  # a directory: its project
        spec = resolve(ctx.conn, spec, create=False, bind=False).id
    done = manage.rename(ctx.conn, spec, args.name)
    text = (
        f"project {done['project']} is now named {done['name']!r} (was {done['previous']}); "
        + done["hint"]
        if done["changed"]
        else f"project {done['project']} already is named {done['name']!r}"
    )
    emit(done, ctx.as_json, text)
    return 0


def cmd_project_remove(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.projects import manage

    target = manage.find(ctx.conn, args.id)
    if not args.yes:
        raise InvalidArgument(
            f"this deletes project {target['id']} ({target['name'] or target['root']}) with "
            f"{target['memories']} memories and {target['checkpoints']} checkpoints; "
            "add --yes to delete it (the database is backed up first)",
            project=target["id"],
        )
    done = manage.remove(ctx.conn, args.id)
    rows = sum(n for t, n in done["deleted"].items() if t != "projects")
    emit(
        done,
        ctx.as_json,
        f"removed project {target['id']} ({rows} rows); backup first: {done['backup']}; "
        f"the file is now {done['bytes_after']:,} bytes (was {done['bytes_before']:,})",
    )
    return 0


def cmd_status(args: argparse.Namespace, ctx: Context) -> int:
    try:
        project = ctx.project(create=False)
    except NotFound:
        if ctx.project_spec and not os.path.isdir(ctx.project_spec):
            raise
        return _not_a_project(ctx, status.store_report(ctx.conn))
    data = status.report(ctx.conn, project)
    from waymark.installers.wiring import hook_status

    data["hooks"] = hook_status()
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
        f"semantic    {sem['said']}",
        *([f"queries     {sem['queries']}"] if sem["queries"] else []),
        *([f"search      {sem['search']}"] if sem.get("search") else []),
        f"capture     {data['capture']['mode']}: {data['capture']['why']}",
        f"handoff     {len(pending)} pending" if pending else "handoff     none pending",
        *[
            f"imported    {v['memories']} from {source} ({v['folder']})"
            for source, v in data["imported"].items()
            if v["memories"]
        ],
        f"candidates  {data['candidates']['pending']} waiting for review"
        + (" (`waymark candidates`)" if data["candidates"]["pending"] else ""),
        *_hook_lines(data["hooks"]),
    ]
    emit(data, ctx.as_json, "\n".join(lines))
    return 0


def _hook_lines(clients: list[dict[str, Any]]) -> list[str]:
    """Per client: the doctor's line on its hooks, then each event's last run."""
    lines = []
    for c in clients:
        mark = "" if c["status"] in ("ok", "skip") else " (!)"
        mode = {"both": "hooks and MCP server", "hooks": "hooks only", "mcp": "MCP server only"}
        lines.append(f"install     {c['client']}: "
                     f"{mode.get(c.get('mode') or '', 'not by `waymark install`')}")  # fmt: skip
        lines.append(f"hooks       {c['client']}: {c['said']}{mark}")
        for e in c["events"]:
            last = (f"{e['last_at'][:19].replace('T', ' ')} {e['last_outcome']}"
                    if e["last_at"] else "never")  # fmt: skip
            notes = [n for n, on in (("silent", e["silent"]), ("not wired", not e["wired"])) if on]
            timing = f", p50 {e['p50']:.0f} / p95 {e['p95']:.0f} ms" if e.get("p50") else ""
            lines.append(
                f"              {e['event']:<18} {last}"
                + (f" ({e['runs']} runs{timing})" if e["runs"] else "")
                + (f" [{', '.join(notes)}]" if notes else "")
            )
        if c["fix"] and mark:
            lines.append(f"              fix: {c['fix']}")
        for r in c.get("chain") or []:
            share = f", Waymark {100 * r['share']:.0f}%" if r["share"] is not None else ""
            lines.append(
                f"              chain {r['event']:<12} p50 {r['chain_p50']:.0f} / p95"
                f" {r['chain_p95']:.0f} ms over {r['instances']} runs, {r['hooks']} hooks{share}"
            )
    return lines


def cmd_capture(args: argparse.Namespace, ctx: Context) -> int:
    if args.mode is None:
        project = ctx.project(create=False)
        chosen = capture.policy(ctx.conn, project, args.session)
        text = f"capture {chosen['mode']} in {project.name or project.root}: {chosen['why']}"
        emit(chosen, ctx.as_json, text)
        return 0
    project = ctx.project()
    capture.set_mode(ctx.conn, project, args.mode, session_id=args.session)
    chosen = capture.policy(ctx.conn, project, args.session)
    where = f"session {args.session}" if args.session else (project.name or project.root)
    emit(chosen, ctx.as_json, f"capture {chosen['mode']} for {where}")
    return 0


def cmd_enable(args: argparse.Namespace, ctx: Context) -> int:
    return _set_capture(args, ctx, True)


def cmd_disable(args: argparse.Namespace, ctx: Context) -> int:
    return _set_capture(args, ctx, False)


def _set_capture(args: argparse.Namespace, ctx: Context, enabled: bool) -> int:
    project = ctx.project()
    files: dict[str, str] = {}
    if args.instructions:
        from waymark.projects import instructions

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
