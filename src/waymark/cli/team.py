"""`waymark team connect|status|disconnect`: which team store this machine syncs with."""

from __future__ import annotations

from waymark.cli.common import Context, add_command, emit

TYPE_CHECKING = False  # typing costs a command ~3 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    register_sync(commands, common)
    register_share(commands, common)
    p = add_command(
        commands,
        "team",
        common,
        handler=cmd_team_status,
        help="the team store this machine shares memories through (PostgreSQL): connect, "
        "status, disconnect",
        example="waymark team connect postgresql://alice@127.0.0.1:5432/team",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=False)
    connect = add_command(
        actions,
        "connect",
        common,
        handler=cmd_team_connect,
        help="check a team store (reach it, bring its schema up, see whether you may write) "
        "and keep it, without its password, for this machine",
        example="waymark team connect postgresql://alice@127.0.0.1:5432/team",
    )
    connect.add_argument(
        "url",
        help="postgresql://USER@HOST:PORT/DATABASE[?sslmode=...] (a password in it is used "
        "once and never kept: ~/.pgpass, a service file or PGPASSWORD supply it later)",
    )
    add_command(
        actions,
        "status",
        common,
        handler=cmd_team_status,
        help="the team store, whether it answers, its schema, and whether you may write",
        example="waymark team status --json",
    )
    add_command(
        actions,
        "disconnect",
        common,
        handler=cmd_team_disconnect,
        help="stop syncing with the team store (every local memory stays)",
        example="waymark team disconnect",
    )


def register_sync(commands: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(
        commands,
        "sync",
        common,
        handler=cmd_sync,
        help="send this project's new memories to the team store and bring the team's here "
        "(a project shared by `[team] share = true` in its .waymark.toml)",
        example="waymark sync --dry-run",
    )
    p.add_argument("--dry-run", action="store_true", help="count what would move; move nothing")
    p.add_argument(
        "--to", metavar="DIR",
        help="write this project's new events to a folder instead (a synced folder, a share)",
    )  # fmt: skip
    p.add_argument(
        "--from", dest="source", metavar="DIR",
        help="apply the other machines' events from that folder (often with --to, the same)",
    )  # fmt: skip


def _sync_folder(args: argparse.Namespace, ctx: Context, project: Any) -> int:
    from waymark.team import folder

    done = folder.sync_folder(
        ctx.conn, project, to=args.to, source=args.source, dry_run=args.dry_run
    )
    lines = []
    if args.to:
        verb = "would write" if args.dry_run else "wrote"
        lines.append(
            f"{done['project_key']}: {verb} {done['pushed']} events to {args.to}"
            + (f", {done['blocked']} kept here (they hold what the redactor flagged)"
               if done["blocked"] else "")
            + (f", {done['personal']} personal kept here" if done["personal"] else "")
        )  # fmt: skip
    if args.source:
        machines = len(done["machines"])
        lines.append(
            f"{'would bring' if args.dry_run else 'brought'} {done['pulled']} events from "
            f"{machines} other machine{'s' if machines != 1 else ''} in {args.source}"
            + ("" if args.dry_run else f" ({done['applied']} applied)")
            + (f"; {done['conflicts']} conflicts wait in `waymark candidates --kind conflict`"
               if done["conflicts"] else "")
        )  # fmt: skip
    lines += _conflict_lines(done)
    emit(done, ctx.as_json, "\n".join(lines))
    return 0


def _conflict_lines(done: dict[str, Any]) -> list[str]:
    """What conflicted, one line each, with how to review it."""
    return [f"  conflict {c['candidate']}: {c['title']} (`waymark review {c['candidate']} "
            "--approve` puts it on top, `--reject` keeps the team's line)"
            for c in done.get("conflicted", [])]  # fmt: skip


def register_share(commands: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(
        commands,
        "share",
        common,
        handler=cmd_share,
        help="make a personal memory of a shared project the team's (through the review "
        'queue, unless the project says `[team] promote = "direct"`); or `share export` the '
        "project's shared memories into the repository (.waymark/memories/, one file each) "
        "and `share import` what a pull brought (`[repository] share = true` opts in)",
        example="waymark share export && git add .waymark/memories",
    )
    p.add_argument("id", help="the personal memory, or export / import")
    p.add_argument("--dry-run", action="store_true", help="export, import: say, change nothing")


def cmd_share(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.curation import agent_writes

    if args.id in ("export", "import"):
        return _share_repository(args, ctx)
    done = agent_writes.share(ctx.conn, ctx.project(create=False), args.id)
    if done["queued"]:
        said = (f"waiting for review as {done['queued']['id']}: "
                f"waymark review {done['queued']['id']} --approve")  # fmt: skip
    else:
        said = f"{done['shared']} is the team's now: the next sync sends it"
    emit(done, ctx.as_json, said)
    return 0


def _share_repository(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.team import repository

    project = ctx.project(create=args.id == "import")
    if args.id == "export":
        done = repository.export(ctx.conn, project, dry_run=args.dry_run)
        said = (f"{'would write' if args.dry_run else 'wrote'} {done['written']} memory files to"
                f" {done['folder']} ({done['unchanged']} unchanged"
                + (f", {done['personal']} personal kept here" if done["personal"] else "")
                + (f", {done['newer_there']} newer in the repository: `waymark share import`"
                   if done["newer_there"] else "") + ")")  # fmt: skip
        emit(done, ctx.as_json, said)
        return 0
    done = repository.import_(ctx.conn, project, dry_run=args.dry_run)
    said = (f"read {done['read']} memory files: "
            + (f"{done['new']} new" if args.dry_run else
               f"{done['applied']} applied, {done['unchanged']} unchanged")
            + (f"; {done['conflict'] + done['overtaken']} conflicts wait in `waymark candidates"
               " --kind conflict`" if done.get("conflicted") else ""))  # fmt: skip
    emit(done, ctx.as_json, said)
    return 0


def cmd_sync(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.base.launch import behind_the_hooks
    from waymark.team import sync

    behind_the_hooks()  # the agent's hooks go first while this runs
    project = ctx.project(create=not args.dry_run)  # a first sync brings the team's memories
    if args.to or args.source:
        return _sync_folder(args, ctx, project)
    done = sync.sync(ctx.conn, project, dry_run=args.dry_run)
    verb = "would send" if args.dry_run else "sent"
    lines = [
        f"{done['project_key']}: {verb} {done['pushed']} memory and checkpoint events"
        + (f", {done['blocked']} kept here (they hold what the redactor flagged)"
           if done["blocked"] else "")
        + (f", {done['personal']} personal kept here" if done.get("personal") else ""),
        f"{'would bring' if args.dry_run else 'brought'} {done['pulled']} from the team"
        + ("" if args.dry_run else f" ({done['applied']} applied)")
        + _waiting(len(done.get("conflicted") or [])),
    ]  # fmt: skip
    lines += _conflict_lines(done)
    if done.get("read_only"):
        lines.insert(0, "this role may only read: nothing was sent")
    emit(done, ctx.as_json, "\n".join(lines))
    return 0


def cmd_team_connect(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.team import link

    done = link.connect(args.url)
    lines = [f"team store {done['store']}: connected (PostgreSQL {done['server']})", *_facts(done)]
    lines += [f"note: {n}" for n in done["notes"]]
    emit(done, ctx.as_json, "\n".join(lines))
    return 0


def cmd_team_status(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.team import link

    found = link.status()
    if not found["connected"]:
        emit(found, ctx.as_json, "no team store: `waymark team connect postgresql://...`")
        return 0
    lines = [f"team store  {found['store']} (from {found['from']})"]
    if found["options"]:
        lines.append("options     " + ", ".join(f"{k}={v}" for k, v in found["options"].items()))
    if not found["reachable"]:
        lines.append(f"reachable   no: {found['why']}")
    else:
        lines += [f"reachable   yes (PostgreSQL {found['server']})", *_facts(found)]
    project = ctx.read_project()
    if project is not None:
        from waymark.team import sync

        here = found["project"] = sync.status_of(ctx.conn, project)
        if here.get("shared"):
            when = (here["last_sync"] or "never")[:16].replace("T", " ")
            lines.append(f"this project {here['project_key']}: last sync {when}, "
                         f"{here['unsent']} memory and checkpoint events not sent yet")  # fmt: skip
            if here["conflicts"]:
                n = here["conflicts"]
                lines.append(f"  {n} conflict{' waits' if n == 1 else 's wait'} for review: "
                             "`waymark candidates --kind conflict`")  # fmt: skip
        elif here:
            lines.append(here["why"])  # it says the project is not shared, and why
    emit(found, ctx.as_json, "\n".join(lines))
    return 0


def _waiting(n: int) -> str:
    """What waits for review, counted from the queue itself (never from a tally of what the
    sync met, which a settled conflict is part of)."""
    if not n:
        return ""
    return (f"; {n} conflict{' waits' if n == 1 else 's wait'} in `waymark candidates --kind"
            " conflict`")  # fmt: skip


def _facts(found: dict[str, Any]) -> list[str]:
    schema = found["schema"]
    said = f"schema      {schema['server']} on the server, {schema['client']} here"
    if schema["server"] < schema["client"]:
        said += " (the server's is brought up at the next connect or sync)"
    if schema["server"] > schema["client"]:
        writes = ("no: the server's schema is newer than this Waymark's, and sync refuses it;"
                  " install the Waymark the rest of the team runs")  # fmt: skip
    elif found["writes"]:
        writes = "yes"
    else:
        writes = "no: this role may only read (recall, never write)"
    return [said, f"writes      {writes}"]


def cmd_team_disconnect(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.team import link

    done = link.disconnect()
    emit(done, ctx.as_json, f"disconnected from {done['disconnected']}; every local memory stays")
    return 0
