"""Commands that set Waymark up: install, uninstall, doctor, config, and the MCP server."""

from __future__ import annotations

from waymark import settings
from waymark.base import jsonlite as json  # `import json` costs a command ~2 ms
from waymark.cli.common import Context, add_command, bounded, emit
from waymark.errors import InvalidArgument, UsageError

TYPE_CHECKING = False  # typing costs a command ~3 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    _register_health(commands, common)
    _register_setup(commands, common)


def _register_health(commands: Any, common: argparse.ArgumentParser) -> None:
    """doctor, diagnostics, log, output, mcp."""
    p = add_command(
        commands,
        "doctor",
        common,
        handler=cmd_doctor,
        help="check the environment, database, client registrations, model and hooks",
        example="waymark doctor --self-test",
    )
    p.add_argument(
        "--self-test",
        action="store_true",
        help="also fire each installed hook command as its client would (a marker payload)",
    )
    p = add_command(
        commands,
        "diagnostics",
        common,
        handler=cmd_diagnostics,
        help="write a support bundle (versions, health, registration; no memory content, "
        "paths or ids), owner-only",
        example="waymark diagnostics",
    )
    p.add_argument("--out", metavar="FILE", help="default: <data home>/diagnostics/...json")
    p = add_command(
        commands,
        "log",
        common,
        handler=cmd_log,
        help="the audit log: what changed, when and by whom (ids and metadata, no content)",
        example="waymark log --op checkpoint. --since 7d",
    )
    p.add_argument(
        "--op",
        action="append",
        default=[],
        help="an operation (config.set) or a prefix ending in '.' (checkpoint.); repeatable",
    )
    p.add_argument("--since", help="an ISO date or time, or an age: 30m, 12h, 7d")
    p.add_argument(
        "--all-projects", action="store_true", help="every project (default: this one's)"
    )
    p.add_argument("--limit", type=bounded(1, 1000), default=50, help="1-1000 (default 50)")
    p.add_argument(
        "--injected",
        action="store_true",
        help="the hooks' injection receipts instead: each packet, line by line, and why",
    )
    p.add_argument("--session", metavar="SESSION_ID", help="with --injected: one session's")
    p = add_command(
        commands,
        "output",
        common,
        handler=cmd_output,
        help="a tool output Waymark trimmed for the model ([output] in .waymark.toml), whole"
        " and redacted",
        example="waymark output out_01JD...",
    )
    p.add_argument("id", help="the id the trimmed view names (out_...)")
    add_command(
        commands,
        "mcp",
        common,
        handler=cmd_mcp,
        help="run the MCP stdio server (started by Claude Code or Codex)",
        example="waymark mcp",
    )


def _register_setup(commands: Any, common: argparse.ArgumentParser) -> None:
    """config, install, uninstall."""
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
    p.add_argument(
        "--only",
        choices=("hooks", "mcp", "both"),
        default="both",
        help="install only the hooks or only the MCP server (what an earlier install wrote of "
        "the other is taken out); default both",
    )
    from argparse import BooleanOptionalAction  # argparse is loaded by now: the parser's

    p.add_argument(
        "--statusline",
        action=BooleanOptionalAction,
        default=None,
        help="Claude Code's status line, `memory: 3 shown · 1 used · handoff saved 2 min ago`, "
        "where none is set (--no-statusline takes it out; default: as the last install)",
    )
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
    p.add_argument(
        "--delete-backups",
        action="store_true",
        help="with --delete-data: also delete backups/ and exports/ (kept otherwise)",
    )
    p.add_argument(
        "--all",
        dest="everything",
        action="store_true",
        help="also remove the environment install.sh made and its `waymark` link "
        "(memories stay unless --delete-data)",
    )
    p.add_argument(
        "--all-profiles",
        action="store_true",
        help="also the entries install wrote under another CLAUDE_CONFIG_DIR or CODEX_HOME "
        "(by default only the folders this environment names are touched)",
    )
    p.add_argument("--yes", action="store_true", help="confirm --delete-data")


def cmd_doctor(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.health import doctor
    from waymark.installers.checks import client_checks

    findings = doctor.check_and_keep(client_checks)["findings"]  # the dashboard shows it
    if args.self_test:
        from waymark.installers.checks import self_test

        findings += [f for client in ("claude-code", "codex") for f in self_test(client)]
    healthy = not any(f["status"] == doctor.FAIL for f in findings)
    lines = []
    for f in findings:
        lines.append(f"{f['status'].upper():5} {f['check']}: {f['detail']}")
        if f["fix"] and f["status"] in (doctor.FAIL, doctor.WARN):
            lines.append(f"      fix: {f['fix']}")
    lines.append("healthy" if healthy else "not healthy: fix the FAIL lines above")
    emit({"healthy": healthy, "findings": findings}, ctx.as_json, "\n".join(lines))
    return 0 if healthy else 1


def cmd_diagnostics(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.health import diagnostics
    from waymark.installers.checks import client_checks

    ctx.close()  # the bundle opens what it needs itself
    data = diagnostics.bundle(client_checks)
    path = diagnostics.write(data, args.out)
    emit({"path": path}, ctx.as_json, f"wrote {path} (no memory content, paths or ids; 0600)")
    return 0


def cmd_log(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.storage.events import query_events

    if args.injected:
        return _injected(args, ctx)
    if args.session:
        raise UsageError("--session goes with --injected")
    project = None if args.all_projects else ctx.read_project()
    rows = query_events(
        ctx.conn,
        project_id=project.id if project else None,
        everywhere=args.all_projects,
        ops=args.op,
        since=_since(args.since) if args.since else None,
        limit=args.limit,
    )
    lines = [
        f"{r['at'][:19]}Z  {r['op']:<18} "
        + " ".join(
            f"{k}={v}"
            for k, v in [("memory", r["memory_id"]), ("by", r["actor"]), *r["detail"].items()]
            if v not in (None, "")
        )
        for r in rows
    ] or ["nothing logged matches"]
    data: dict = {"events": rows}
    if not rows and args.op:  # a name no event has: say so, and which names there are
        from waymark.storage.events import logged_ops

        known = logged_ops(ctx.conn)
        unknown = [o for o in args.op
                   if not any(k == o or (o.endswith(".") and k.startswith(o)) for k in known)]  # fmt: skip
        if unknown:
            data["unknown_ops"] = unknown
            lines = [
                f"no event named {', '.join(repr(o) for o in unknown)} was ever logged here; "
                "an op is a name or a prefix ending in '.' (`--op checkpoint.`), of: "
                + (", ".join(known) or "(nothing logged yet)")
            ]
    emit(data, ctx.as_json, "\n".join(lines))
    return 0


def cmd_output(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.handoff import outputs

    project = ctx.read_project()
    if project is None:
        raise InvalidArgument("this directory is not a Waymark project yet: no outputs")
    found = outputs.get(ctx.conn, project, args.id)
    emit(found, ctx.as_json, found["output"])
    return 0


def _injected(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.packets import receipts

    if args.all_projects or args.op or args.since:
        raise UsageError("--injected takes --session and --limit (this project's packets)")
    project = ctx.read_project()
    found = (
        receipts.packets(ctx.conn, project, session_id=args.session, limit=args.limit)
        if project is not None
        else []
    )
    emit({"packets": found}, ctx.as_json, receipts.render_text(found))
    return 0


def _since(text: str) -> str:
    """An ISO date/time, or an age (30m, 12h, 7d) as the UTC time that long ago."""
    import time

    from waymark.base import clock

    units = {"m": 60, "h": 3600, "d": 86400}
    if text[-1:] in units and text[:-1].isdigit():
        return clock.second(time.time() - int(text[:-1]) * units[text[-1]])
    try:
        clock.epoch(text)
    except (ValueError, IndexError):
        raise InvalidArgument(
            f"--since {text!r}: give an ISO date (2026-11-30) or an age (30m, 12h, 7d)"
        ) from None
    return text


def cmd_mcp(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.server.front import main

    ctx.close()
    return main()


def cmd_config(args: argparse.Namespace, ctx: Context) -> int:
    conn = ctx.conn
    if args.key is None:
        values = settings.all_values(conn)
        emit(values, ctx.as_json, "\n".join(f"{k} = {json.dumps(v)}" for k, v in values.items()))
        return 0
    if args.value is None:
        value = settings.get(conn, args.key)
    else:
        value = settings.set_value(conn, args.key, settings.parse(args.value))
    said = f"{args.key} = {json.dumps(value)}"
    if args.key in settings.AFTER and args.value is not None:
        said += "\n" + settings.AFTER[args.key]
    emit({args.key: value}, ctx.as_json, said)
    return 0


CLIENT_CHOICES = ("claude-code", "codex", "opencode", "all")


STATUS_TEXT = {
    "created": "created",
    "updated": "updated",
    "unchanged": "already up to date",
    "deleted": "deleted (Waymark created it)",
    "restored": "restored byte for byte",
    "cleaned": "Waymark's entries removed (the file changed since; other changes kept)",
    "missing": "already gone",
}


def _clients(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return ["claude-code", "codex"] if value == "all" else [value]


def cmd_install(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.installers import install

    report = install(_clients(args.client), dry_run=args.dry_run, only=args.only,
                     statusline=args.statusline)  # fmt: skip
    everywhere = settings.get(ctx.conn, "capture.all_git_repos")
    report["capture"] = "all_git_repos" if everywhere else "per_project"
    report["notes"].append(
        "hooks capture in every git repository (per project instead: `waymark config "
        "capture.all_git_repos false`, then `waymark enable` where you want it)"
        if everywhere
        else "hooks capture per project: run `waymark enable` in a repository "
        "(everywhere: `waymark config capture.all_git_repos true`)"
    )
    emit(report, ctx.as_json, render(report))
    return 0


def cmd_uninstall(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.installers import uninstall

    report = uninstall(
        None if args.everything else _clients(args.client),
        dry_run=args.dry_run,
        delete_data=args.delete_data,
        delete_backups=args.delete_backups,
        everything=args.everything,
        yes=args.yes,
        all_profiles=args.all_profiles,
    )
    emit(report, ctx.as_json, render(report))
    return 0


def render(report: dict[str, Any]) -> str:
    from waymark.installers.files import display

    lines = []
    names = {"claude-code": "Claude Code", "codex": "Codex", "opencode": "opencode"}
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
