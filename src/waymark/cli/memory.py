"""Commands on memories: remember, supersede, list, show, history, archive, erase, relate."""

from __future__ import annotations

import os

from waymark.base import jsonlite as json  # `import json` costs a command ~2 ms
from waymark.cli.common import Context, add_command, bounded, emit, read_content
from waymark.errors import InvalidArgument, UsageError
from waymark.memories import browse, links
from waymark.memories.kinds import PRIORITY_RANGE, TYPES
from waymark.memories.scope import SCOPES, check_agent, scope_of, tier
from waymark.projects import locate
from waymark.storage.memories import Memory

# What only writing commands need is imported in their handlers: `list` no longer loads the
# write path (agent_writes, edit, store, draft: 33 ms of its whole process's imports).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from waymark.curation.agent_writes import Held
    from waymark.memories.draft import Draft, Saved


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    _register_writes(commands, common)
    _register_reads(commands, common)
    _register_retiring(commands, common)


def _register_writes(commands: Any, common: argparse.ArgumentParser) -> None:
    """remember, supersede, edit."""
    p = add_command(
        commands,
        "remember",
        common,
        handler=cmd_remember,
        help="store a memory for this project (exact duplicates return the existing one)",
        example='waymark remember --type decision --title "Use apsw" --content "apsw loads '
        'sqlite-vec everywhere; stdlib sqlite3 cannot on macOS" --tag storage',
    )
    _record_flags(p, required_type=False)
    p.add_argument("--supersedes", metavar="ID", help="replace this active memory")
    p.add_argument(
        "--personal", action="store_true",
        help="in a project shared with a team: keep this memory on this machine only",
    )  # fmt: skip
    p = add_command(
        commands,
        "supersede",
        common,
        handler=cmd_supersede,
        help="replace an active memory with a new version (unset fields are carried over)",
        example='waymark supersede 01JD... --content "Use apsw 3.46 or newer"',
    )
    p.add_argument("id", help="the active memory to replace")
    _record_flags(p, required_type=False, replacing=True)
    p = add_command(
        commands,
        "edit",
        common,
        handler=cmd_edit,
        help="change a memory by exact-text operations, in the order given, all or nothing "
        "(one new revision; the same edit retried is reported as already applied)",
        example='waymark edit 01JD... --replace "port 8080" "port 8443" --add "Since v2."',
    )
    p.add_argument("id", help="the active memory to edit")
    _edit_operations(p)


def _edit_operations(p: Any) -> None:
    """--add, --remove, --replace: argparse's custom action, which keeps their order. A
    recorded registration (`cli.quick`) is told it cannot parse them."""
    if getattr(p, "quick", False):
        p.register("action", "edit-operation", None)
        return
    op = _op_action()
    p.add_argument("--add", action=op, metavar="TEXT", help="append TEXT on a line of its own")
    p.add_argument("--remove", action=op, metavar="TEXT", help="delete TEXT (exactly once)")
    p.add_argument(
        "--replace", action=op, nargs=2, metavar=("OLD", "NEW"), help="OLD (exactly once) -> NEW"
    )


def _register_reads(commands: Any, common: argparse.ArgumentParser) -> None:
    """list, show, history."""
    p = add_command(
        commands,
        "list",
        common,
        handler=cmd_list,
        help="browse memories, newest first",
        example="waymark list --type decision --tag storage --query sqlite --limit 10",
    )
    p.add_argument("--query", help="case-insensitive literal text in title, content or tags")
    p.add_argument("--type", action="append", default=[], choices=TYPES, help="repeatable; any")
    p.add_argument("--tag", action="append", default=[], help="repeatable; all must match")
    p.add_argument("--scope", choices=SCOPES, help="exact scope")
    p.add_argument("--target", help="exact scope target (with --scope directory|file|symbol)")
    p.add_argument(
        "--include-inactive", action="store_true", help="also superseded, archived, erased"
    )
    p.add_argument("--limit", type=bounded(1, 100), default=20, help="1-100 (default 20)")
    p.add_argument("--offset", type=bounded(0, 100_000), default=0, help="0-100000 (default 0)")
    p.add_argument("--branch", help="only memories written on this git branch")
    p.add_argument("--agent", help="only the memories of this agent")
    p = add_command(
        commands,
        "show",
        common,
        handler=cmd_show,
        help="show one memory in full",
        example="waymark show 01JD...",
    )
    p.add_argument("id")
    p = add_command(
        commands,
        "history",
        common,
        handler=cmd_history,
        help="the whole supersession chain of a memory, oldest first",
        example="waymark history 01JD...",
    )
    p.add_argument("id")


def _register_retiring(commands: Any, common: argparse.ArgumentParser) -> None:
    """archive, erase, relate."""
    p = add_command(
        commands,
        "archive",
        common,
        handler=cmd_archive,
        help="retire an active memory (kept, no longer recalled)",
        example='waymark archive 01JD... --reason "moved to CONTRIBUTING.md"',
    )
    p.add_argument("id")
    p.add_argument("--reason")
    p.add_argument(
        "--team", action="store_true",
        help="the memory is the team's: archive it on every machine (the next sync)",
    )  # fmt: skip
    p = add_command(
        commands,
        "erase",
        common,
        handler=cmd_erase,
        help="drop a memory's content for good, keeping a tombstone",
        example='waymark erase 01JD... --reason "contained a customer name"',
    )
    p.add_argument("id")
    p.add_argument("--reason", required=True)
    p.add_argument(
        "--team", action="store_true",
        help="the memory is the team's: erase it on every machine (the next sync)",
    )  # fmt: skip
    p.add_argument(
        "--from-backups", action="store_true",
        help="also erase it in the backups taken before (each rewritten, still restorable)",
    )  # fmt: skip
    p = add_command(
        commands,
        "relate",
        common,
        handler=cmd_relate,
        help="link two memories so recall brings one along with the other",
        example="waymark relate 01JDX... 01JDW... --kind solves",
    )
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--kind", default="related", choices=links.KINDS)


def _op_action() -> type:
    """The argparse action of --add / --remove / --replace, kept in the order given."""
    import argparse

    class Op(argparse.Action):
        def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
            ops = getattr(namespace, "ops", None) or []
            kind = self.dest
            if kind == "add":
                ops.append({"op": "add", "text": values})
            elif kind == "remove":
                ops.append({"op": "remove", "old": values})
            else:
                ops.append({"op": "replace", "old": values[0], "text": values[1]})
            namespace.ops = ops

    return Op


def cmd_edit(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.memories import edit

    ops = getattr(args, "ops", None)
    if not ops:
        raise UsageError("give at least one --add, --remove or --replace")
    done = edit.edit(ctx.conn, ctx.project(), args.id, ops, actor="user", client="cli")
    memory = done["memory"]
    text = (
        f"already applied: {memory['id']} holds this edit of {done['supersedes']}"
        if done["status"] == "already_applied"
        else f"edited {done['supersedes']} -> {memory['id']} ({len(ops)} operations)"
    )
    emit(done, ctx.as_json, text)
    return 0


def _record_flags(
    p: argparse.ArgumentParser, *, required_type: bool, replacing: bool = False
) -> None:
    """The fields of a memory; `replacing` (supersede, remember --supersedes): each flag
    left out keeps the replaced memory's value, and the help says so."""
    kept = "default: the replaced memory's"

    def default(fresh: str) -> str:
        return kept if replacing else f"default: {fresh}"

    p.add_argument(
        "--type", choices=TYPES, required=required_type, help=f"kind of memory ({default('note')})"
    )
    p.add_argument(
        "--title",
        help="one line; "
        + ("default: the replaced memory's, or the new content's first line" if replacing
           else "default: the content's first line"),
    )  # fmt: skip
    p.add_argument("--content", help="the memory itself; '-' or omitted reads stdin")
    p.add_argument("--scope", choices=SCOPES, help=default("project, or what --target names"))
    p.add_argument("--target", help="directory, file or path::Symbol for those scopes")
    p.add_argument(
        "--global",
        dest="is_global",
        action="store_true",
        help="store for every project (scope global)",
    )
    p.add_argument("--tag", action="append", default=None,
                   help="repeatable" + (f"; {kept} tags" if replacing else ""))  # fmt: skip
    p.add_argument(
        "--priority", type=int,
        help=f"{PRIORITY_RANGE[0]}..{PRIORITY_RANGE[1]} ({default('0')})",
    )  # fmt: skip
    p.add_argument("--pinned", action="store_true", default=None,
                   help="always in session packets" + (f" ({kept})" if replacing else ""))  # fmt: skip
    p.add_argument(
        "--evidence",
        action="append",
        default=None,
        metavar="REF",
        help="repeatable: a path, url:/http(s) URL, cmd:COMMAND, commit:SHA, or a JSON object"
        + (f"; {kept} evidence" if replacing else ""),
    )
    p.add_argument("--valid-until", help="ISO date or time after which it stops being recalled")
    p.add_argument("--key", help="a stable external id for this memory")
    p.add_argument(
        "--agent",
        help="the agent it is for (a subagent type, a Codex profile): that agent reads it "
        "first, and it shadows everyone's memory of the same type and key",
    )


def parse_evidence(ref: str) -> dict[str, str]:
    if ref.startswith("{"):
        try:
            value = json.loads(ref)
        except ValueError as exc:
            raise InvalidArgument(f"--evidence {ref!r} is not valid JSON: {exc}") from None
        if not isinstance(value, dict):
            raise InvalidArgument(f"--evidence {ref!r} must be a JSON object")
        return value
    for prefix, kind in (
        ("cmd:", "command"),
        ("command:", "command"),
        ("url:", "url"),
        ("path:", "path"),
        ("commit:", "commit"),
    ):
        if ref.startswith(prefix):
            return {kind: ref[len(prefix) :]}
    if ref.startswith(("http://", "https://")):
        return {"url": ref}
    return {"path": ref}


def _draft(args: argparse.Namespace, ctx: Context) -> Draft:
    """A new memory's Draft from the flags (a revision's: `_revise`)."""
    from waymark.codemap.facts import declarations_of
    from waymark.memories.draft import make_draft

    project = ctx.project()
    content = read_content(args.content)
    if content is None:
        raise UsageError("give the memory with --content TEXT or on stdin")
    scope, target, base_dir = _scope(args, files=project.files)
    return make_draft(
        project,
        type=args.type or "note",
        content=content,
        title=args.title,
        scope=scope,
        target=target,
        tags=args.tag or [],
        priority=args.priority or 0,
        pinned=bool(args.pinned),
        evidence=[parse_evidence(e) for e in args.evidence or []],
        valid_until=args.valid_until,
        key=args.key,
        agent=args.agent,
        actor="user",
        client="cli",
        git_branch=_branch(project.files),
        base_dir=base_dir,
        check_symbol=args.target is not None,  # typed now, so it must be real now
        mapped=declarations_of(ctx.conn, project.id) if project.files else None,
        personal=getattr(args, "personal", False),
        expiry_given=getattr(args, "valid_until", None) is not None,
    )


def _scope(args: argparse.Namespace, *, files: str | None) -> tuple[str, str | None, str | None]:
    """(scope, target, directory a relative target is taken against) from the flags."""
    if args.is_global or args.scope == "global":
        if args.target is not None:
            raise UsageError(
                f"a global memory applies to every project and has no target (got --target "
                f"{args.target!r}); drop --target, or use --scope file|directory|symbol"
            )
        if args.is_global and args.scope not in (None, "global"):
            raise UsageError(f"--global and --scope {args.scope} disagree; give one")
        return "global", None, None
    scope = args.scope
    if scope is None and args.target is not None:
        scope = scope_of(args.target, files, os.getcwd())
    return scope or "project", args.target, os.getcwd()


def _branch(root: str | None) -> str | None:
    try:
        return locate.git_branch(root) if root else None
    except Exception:  # a branch is a nicety; never fail a write over it
        return None


def cmd_remember(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.curation.agent_writes import save

    if args.supersedes:
        _emit_saved(_revise(args, ctx, args.supersedes), ctx)
        return 0
    _emit_saved(save(ctx.conn, ctx.project(), _draft(args, ctx)), ctx)
    return 0


def cmd_supersede(args: argparse.Namespace, ctx: Context) -> int:
    _emit_saved(_revise(args, ctx, args.id), ctx)
    return 0


def _revise(args: argparse.Namespace, ctx: Context, base_id: str) -> Saved | Held:
    """The flags given, as changes to `base_id` (every flag left out keeps its value)."""
    from waymark.curation.revising import revise
    from waymark.memories import store

    project = ctx.project()
    changes: dict[str, Any] = {}
    content = read_content(args.content)
    if content is not None:
        changes["content"] = content
    for flag, field in (("type", "type"), ("title", "title"), ("tag", "tags"),
                        ("priority", "priority"), ("pinned", "pinned"),
                        ("valid_until", "valid_until"), ("key", "key"), ("agent", "agent")):  # fmt: skip
        if getattr(args, flag, None) is not None:
            changes[field] = getattr(args, flag)
    if args.evidence is not None:
        changes["evidence"] = [parse_evidence(e) for e in args.evidence]
    if getattr(args, "personal", False):
        changes["personal"] = True
    if args.is_global or args.scope is not None or args.target is not None:
        scope, target, _ = _scope(args, files=project.files)  # the flags' own checks
        changes["scope"], changes["target"] = scope, target
    return revise(ctx.conn, project, store.full_id(ctx.conn, base_id), changes, actor="user",
                  client="cli", base_dir=os.getcwd(), git_branch=_branch(project.files))  # fmt: skip


def _emit_saved(saved: Saved | Held, ctx: Context) -> None:
    from waymark.curation.agent_writes import Held

    if isinstance(saved, Held):
        cid = saved.candidate["id"]
        emit(saved.to_dict(), ctx.as_json,
             f"held for review as {cid}: the text {'; '.join(saved.flags)}\n"
             f"it reaches no packet until approved: waymark review {cid} --approve"
             f" (or --reject)")  # fmt: skip
        return
    m = saved.memory
    verb = "remembered" if saved.created else "already remembered as"
    lines = [f"{verb} {m.id} ({m.type}): {m.title}"]
    if m.supersedes:
        lines.append(f"supersedes {m.supersedes}")
    if saved.redactions:
        lines.append(f"redacted {saved.redactions} secret(s) before storing")
    if saved.similar:
        lines.append(f"similar: {', '.join(saved.similar)} (supersede one instead?)")
    emit(saved.to_dict(), ctx.as_json, "\n".join(lines))


def cmd_list(args: argparse.Namespace, ctx: Context) -> int:
    project = ctx.read_project()
    if project is None:
        empty = {"results": [], "has_more": False, "next_offset": None}
        emit(empty, ctx.as_json, "no memories here: this directory is not a Waymark project yet")
        return 0
    page = browse.list_memories(
        ctx.conn,
        project,
        query=args.query,
        types=args.type,
        tags=args.tag,
        scope=args.scope,
        target=args.target,
        include_inactive=args.include_inactive,
        limit=args.limit,
        offset=args.offset,
        branch=args.branch,
        agent=check_agent(args.agent),
        base=os.getcwd(),
    )
    lines = [_line(m) for m in page.results] or ["no memories match"]
    if page.has_more:
        lines.append(f"... more with --offset {page.next_offset}")
    emit(page.to_dict(), ctx.as_json, "\n".join(lines))
    return 0


def _line(m: Memory) -> str:
    status = "" if m.status == "active" else f" [{m.status}]"
    where = (
        f" @{m.scope_target}" if m.scope_target else (" @global" if m.project_id is None else "")
    )
    tags = f" #{' #'.join(m.tags)}" if m.tags else ""
    agent = f" (agent {m.agent})" if m.agent else ""
    return f"{m.id}  {m.created_at[:10]}  {m.type:<10} {m.title}{where}{agent}{tags}{status}"


def render(m: Memory) -> str:
    lines = [_line(m), ""]
    if m.status == "erased":
        lines.append(f"erased {m.updated_at}: {m.erased_reason}")
        return "\n".join(lines)
    lines.append(m.content)
    meta = [
        ("scope", f"{m.scope_type} {m.scope_target or ''}".strip()),
        ("priority", m.priority if m.priority else None),
        ("pinned", m.pinned or None),
        ("valid until", m.valid_until),
        ("branch", m.git_branch),
        ("key", m.key),
        ("agent", m.agent),
        ("tier", tier(m.agent, m.project_id) if m.agent else None),
        ("supersedes", m.supersedes),
        ("superseded by", m.superseded_by),
        ("by", f"{m.actor}" + (f" via {m.client}" if m.client else "")),
        ("happened", m.event_time if m.event_time != m.created_at else None),
    ]
    lines.append("")
    lines += [f"{k}: {v}" for k, v in meta if v not in (None, "")]
    lines += [f"evidence: {json.dumps(e, ensure_ascii=False)}" for e in m.evidence]
    return "\n".join(lines)


def cmd_show(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.memories import observations, store

    m = store.get(ctx.conn, args.id)
    data, text = m.to_dict(), render(m)
    related = links.links_of(ctx.conn, m.id)
    data["links"] = related
    lines = [text]
    for link in related:
        other, arrow = (link["dst"], "->") if link["src"] == m.id else (link["src"], "<-")
        lines.append(f"link: {arrow} {link['kind']} {other}")
    from waymark.curation import outcomes

    outcome = outcomes.of_item(ctx.conn, m.id)
    if outcome:
        data["outcome"] = outcome
        lines.append(outcomes.said(outcome))
    made = store.authorship(ctx.conn, m.id)
    if made:
        from waymark.cli.recall import written_by

        data["team"] = made
        lines.append(written_by(made))
    if m.status == "archived":
        why = store.archived_why(ctx.conn, m.id)
        data["archived"] = why
        if why:
            where = f" (team, machine {why['team'][:12]})" if why.get("team") else ""
            lines.append(
                f"archived {why['at'][:10]} by {why['actor']}{where}: "
                f"{why['reason'] or 'no reason given'}"
            )
    text = "\n".join(lines)
    project = ctx.read_project()
    if project is not None and m.status != "erased":
        extra = []
        latest = observations.latest(ctx.conn, project, [m.id]).get(m.id)
        if latest:
            data["observation"] = latest
            state = f" {latest['state']}" if latest.get("state") else ""
            extra.append(f"observation: {latest['status']} {latest['at'][:10]}{state}")
            extra += [f"  recheck: {item}" for item in latest.get("recheck", [])]
        fresh = observations.evidence_state(m, project.files)
        if fresh:
            data["evidence_state"] = fresh
            extra.append(f"evidence state: {fresh['state']}")
            extra += [f"  recheck: {item}" for item in fresh.get("recheck", [])]
        text = "\n".join([text, *extra])
    emit(data, ctx.as_json, text)
    return 0


def cmd_history(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.memories import store

    chain = store.history(ctx.conn, args.id)
    emit([m.to_dict() for m in chain], ctx.as_json, "\n".join(_line(m) for m in chain))
    return 0


def cmd_archive(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.memories import store

    m = store.archive(ctx.conn, ctx.project(), args.id, reason=args.reason, team=args.team)
    emit(m.to_dict(), ctx.as_json, f"archived {m.id}")
    return 0


def cmd_erase(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.curation import erasing

    done = erasing.erase(ctx.conn, ctx.project(), args.id, reason=args.reason, team=args.team,
                         from_backups=args.from_backups)  # fmt: skip
    m, holding, rewritten = done["memory"], done["backups_holding"], done["backups_rewritten"]
    said = f"{m.id} was erased already" if done["already"] else f"erased {m.id} (tombstone kept)"
    if args.from_backups:
        said += f"; erased from {len(rewritten)} backup(s) too"
    if holding:
        said += "; " + erasing.backups_said(m.id, holding)
    out = {**m.to_dict(), "backups_holding": holding, "backups_rewritten": rewritten}
    emit(out, ctx.as_json, said)
    return 0


def cmd_relate(args: argparse.Namespace, ctx: Context) -> int:
    created = links.relate(ctx.conn, ctx.project(), args.src, args.dst, args.kind)
    verb = "linked" if created else "already linked"
    emit(
        {"created": created, "src": args.src, "dst": args.dst, "kind": args.kind},
        ctx.as_json,
        f"{verb}: {args.src} {args.kind} {args.dst}",
    )
    return 0
