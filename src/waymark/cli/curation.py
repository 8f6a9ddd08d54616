"""`waymark candidates` and `waymark review`: the review queue, for people."""

from __future__ import annotations

from waymark.cli.common import Context, add_command, bounded, emit, positive
from waymark.curation import candidates
from waymark.errors import UsageError

TYPE_CHECKING = False  # typing costs a command ~3 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(
        commands,
        "candidates",
        common,
        handler=cmd_candidates,
        help="what Waymark proposes to remember, waiting for review (nothing here is recalled)",
        example="waymark candidates --kind failure_fix",
    )
    p.add_argument(
        "--status",
        action="append",
        choices=candidates.STATUSES,
        help="repeatable (default: pending)",
    )
    p.add_argument("--all", action="store_true", help="every status")
    p.add_argument("--kind", choices=candidates.KINDS)
    p.add_argument("--limit", type=bounded(1, 200), default=50, help="1-200 (default 50)")
    p.add_argument("--offset", type=bounded(0, 100_000), default=0)
    p = add_command(
        commands,
        "review",
        common,
        handler=cmd_review,
        help="approve a candidate (it becomes a memory, or changes the ones it names) or "
        "reject it (it is not proposed again)",
        example='waymark review cand_01JD... --approve --reason "seen it fail twice"',
    )
    p.add_argument("id", nargs="?", help="the candidate (cand_..., or a unique start of it)")
    decision = p.add_mutually_exclusive_group(required=True)
    decision.add_argument("--approve", action="store_true")
    decision.add_argument("--reject", action="store_true")
    decision.add_argument("--undo", action="store_true",
                          help="take a decision back: the candidate waits again (an approved "
                          "addition's memory is archived, an approved archive's memories "
                          "come back)")  # fmt: skip
    p.add_argument("--reason", help="kept with the decision")
    p.add_argument("--kind", choices=candidates.KINDS, dest="all_of_kind",
                   help="without an id: every pending candidate of this kind (bulk)")  # fmt: skip
    p = add_command(
        commands,
        "backfill",
        common,
        handler=cmd_backfill,
        help="read the Claude Code and Codex transcripts already on this machine for this "
        "project and propose candidates: decisions stated, failures and what fixed them, the "
        "files each session edited (redacted; nothing active until reviewed)",
        example="waymark backfill --since 2026-11-01 --dry-run",
    )
    p.add_argument("--client", choices=("claude", "codex"))
    p.add_argument("--since", metavar="DATE", help="transcripts written since (YYYY-MM-DD)")
    p.add_argument("--dry-run", action="store_true", help="count what would be proposed")
    p.add_argument("--seconds", type=bounded(1, 3600), default=300,
                   help="stop reading after this long (default 300)")  # fmt: skip
    _register_retiring(commands, common)
    _register_learning(commands, common)
    _register_measures(commands, common)


def _register_retiring(commands: Any, common: argparse.ArgumentParser) -> None:
    """sweep, unarchive."""
    p = add_command(
        commands,
        "sweep",
        common,
        handler=cmd_sweep,
        help="sweep: archive what is expired or unused and of low salience, purge what stayed "
        "archived long enough (pinned, decisions, conventions and fresh evidence are kept)",
        example="waymark sweep --dry-run",
    )
    p.add_argument("--dry-run", action="store_true", help="show what would change, and why")
    p = add_command(
        commands,
        "unarchive",
        common,
        handler=cmd_unarchive,
        help="bring an archived memory back (a sweep's archive is undone this way)",
        example="waymark unarchive 01JD...",
    )
    p.add_argument("id")


def _register_learning(commands: Any, common: argparse.ArgumentParser) -> None:
    """insights, rules, errors, skills."""
    p = add_command(
        commands,
        "insights",
        common,
        handler=cmd_insights,
        help="insights learned from the error log: list, vote up or down (archived at zero), "
        "or promote to a rule",
        example="waymark insights vote 01JD... up",
    )
    p.add_argument("action", nargs="?", choices=("vote", "promote"))
    p.add_argument("id", nargs="?")
    p.add_argument("direction", nargs="?", help="up or down (with vote)")
    p = add_command(
        commands,
        "rules",
        common,
        handler=cmd_rules,
        help="rules promoted from insights (pinned while active): list, rate after use, or "
        "retire; one that rarely helps is suspended",
        example="waymark rules rate 01JD... helped",
    )
    p.add_argument("action", nargs="?", choices=("rate", "retire"))
    p.add_argument("id", nargs="?")
    p.add_argument("outcome", nargs="?", help="helped or missed (with rate)")
    p = add_command(
        commands,
        "errors",
        common,
        handler=cmd_errors,
        help="the error log: failed commands and lessons, each with its category (given, or "
        "inferred by rules); three of one category in 30 days propose an insight",
        example="waymark errors --days 7",
    )
    p.add_argument("--days", type=positive, default=30.0, help="how far back (default 30)")
    p.add_argument("--limit", type=bounded(1, 1000), default=50, help="lines shown (default 50)")
    p = add_command(
        commands,
        "skills",
        common,
        handler=cmd_skills,
        help="skills learned from work: numbered steps in checkpoints and memories, and command "
        "sequences that made a failing check pass, proposed for review; approved ones are named "
        "before a matching command or edit",
        example="waymark skills extract",
    )
    p.add_argument("action", nargs="?", choices=("list", "show", "extract"), default="list")
    p.add_argument("id", nargs="?", help="show: the skill's memory id")


def _register_measures(commands: Any, common: argparse.ArgumentParser) -> None:
    """stats, outcomes, outcome, consolidate, feedback."""
    p = add_command(
        commands,
        "stats",
        common,
        handler=cmd_stats,
        help="how much of what the packets inject the sessions use (per section, hook, type), "
        "tokens per session, prompt, subagent and used item, and the MCP tools' cost",
        example="waymark stats --impact --days 28",
    )
    p.add_argument("--days", type=positive, default=30.0, help="how far back (default 30)")
    p.add_argument(
        "--impact",
        action="store_true",
        help="what it led to, per week: sessions started from a handoff, recalls served, "
        "items used, hints followed by a pass, decisions held, the prompt cache",
    )
    p = add_command(
        commands,
        "statusline",
        common,
        handler=cmd_statusline,
        help="a session's line for Claude Code's status line: records shown, used, its handoff "
        "(reads Claude Code's JSON on stdin; `waymark install --statusline` wires it)",
        example="waymark statusline --session 3f2a...",
    )
    p.add_argument("--session", help="the session's id (default: session_id of stdin's JSON)")
    p = add_command(
        commands,
        "outcomes",
        common,
        handler=cmd_outcomes,
        help="what became of the changes decisions, lessons and checkpoints led to, in git: "
        "held (boosted in recall) or reverted (demoted, flagged)",
        example="waymark outcomes --refresh",
    )
    p.add_argument("--refresh", action="store_true", help="read git's history again first")
    p = add_command(
        commands,
        "outcome",
        common,
        handler=cmd_outcome,
        help="settle one item's outcome by hand (git leaves it so), or give it back to git",
        example="waymark outcome 01JD... --set linked --reason 'the revert was undone'",
    )
    p.add_argument("id")
    chosen = p.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--set", choices=("linked", "held", "reverted"), dest="state")
    chosen.add_argument("--auto", action="store_true", help="git's judgement again")
    p.add_argument("--reason", default="", help="kept in the audit log (redacted)")
    p = add_command(
        commands,
        "consolidate",
        common,
        handler=cmd_consolidate,
        help="find near-duplicate or contradicting memories and propose each group as one "
        "candidate that names all its sources (nothing merges without approval)",
        example="waymark consolidate --dry-run",
    )
    p.add_argument("--dry-run", action="store_true", help="print the groups, propose nothing")
    p = add_command(
        commands,
        "feedback",
        common,
        handler=cmd_feedback,
        help="say how a recalled memory served: it moves in ranking a little; stale or wrong "
        "also proposes its archive for review",
        example='waymark feedback 01JD... stale --note "the port moved to 8443"',
    )
    p.add_argument("id")
    p.add_argument("verdict", choices=("helpful", "not_helpful", "stale", "wrong"))
    p.add_argument("--note", help="why (kept with a stale or wrong proposal)")
    p.add_argument(
        "--query",
        help="the recall it answered: helpful or not helpful then moves it for queries like it",
    )


def _said(row: dict) -> str:
    """One insight or rule, in a line: its standing and how it served."""
    kind = row["kind"]
    standing = (
        f"importance {row['importance']}, confidence {row['confidence']}"
        if kind == "insight"
        else f"fired {row['fires']}, helped {row['successes']}"
    )
    return f"{row['memory_id']}  {kind}  {standing}  [{row['status']}]"


def _learned(args: argparse.Namespace, ctx: Context, kind: str, act: Any, empty: str) -> int:
    """`waymark insights` / `waymark rules`: the list, or one action on one of them."""
    from waymark.curation import learning

    project = ctx.project(create=False)
    if args.action is None:
        found = learning.listed(ctx.conn, project, kind)
        lines = [f"{_said(r)}  {r['title'][:60]}" for r in found] or [empty]
        emit({"results": found}, ctx.as_json, "\n".join(lines))
        return 0
    if args.id is None:
        raise UsageError(f"`waymark {kind}s {args.action}` needs an id")
    row = act(learning, project)
    emit(row, ctx.as_json, _said(row))
    return 0


def cmd_insights(args: argparse.Namespace, ctx: Context) -> int:
    def act(learning: Any, project: Any) -> dict:
        if args.action == "promote":
            return learning.promote(ctx.conn, project, args.id)
        if args.direction not in ("up", "down"):
            raise UsageError("vote up or down: `waymark insights vote ID up|down`")
        return learning.vote(ctx.conn, project, args.id, args.direction == "up")

    empty = "no insights yet: approve one from `waymark candidates --kind insight`"
    return _learned(args, ctx, "insight", act, empty)


def cmd_rules(args: argparse.Namespace, ctx: Context) -> int:
    def act(learning: Any, project: Any) -> dict:
        if args.action == "retire":
            return learning.retire(ctx.conn, project, args.id)
        if args.outcome not in ("helped", "missed"):
            raise UsageError("rate a rule helped or missed: `waymark rules rate ID helped`")
        return learning.rate(ctx.conn, project, args.id, args.outcome == "helped")

    empty = "no learned rules yet: insights become rules by votes or `waymark insights promote`"
    return _learned(args, ctx, "rule", act, empty)


def cmd_errors(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.curation import mistakes

    project = ctx.read_project()
    entries = mistakes.log(ctx.conn, project, days=args.days) if project else []
    counts: dict[str, int] = {}
    for e in entries:
        counts[e["category"] or "other"] = counts.get(e["category"] or "other", 0) + 1
    lines = [
        f"{e['at'][:16]}  {e['kind']:<7} {(e['category'] or 'other'):<16} {e['text'][:70]}"
        for e in entries[: args.limit]
    ] or [f"no failed commands or lessons in the last {args.days:g} days"]
    if counts:
        lines.append("by category: " + ", ".join(f"{n} {c}" for c, n in sorted(counts.items())))
    emit({"entries": entries, "counts": counts}, ctx.as_json, "\n".join(lines))
    return 0


def cmd_skills(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.curation import skills

    project = ctx.project(create=False)
    if args.action == "extract":
        found = skills.extract(ctx.conn, project)
        lines = [f"{c['id']}  {c['name'][:60]}  ({len(c['steps'])} steps, from {c['source']})"
                 for c in found] or ["no procedure found to propose"]  # fmt: skip
        if found:
            lines.append("review them with `waymark candidates`")
        emit({"candidates": found}, ctx.as_json, "\n".join(lines))
        return 0
    found = skills.listing(ctx.conn, project)
    if args.action == "show":
        if not args.id:
            raise UsageError("skills show needs the skill's id")
        from waymark.memories import store

        wanted = store.full_id(ctx.conn, args.id)
        chosen = [k for k in found if k["id"] == wanted]
        if not chosen:
            from waymark.errors import NotFound

            raise NotFound(f"no approved skill {args.id!r}: `waymark skills` lists them")
        k = chosen[0]
        emit(k, ctx.as_json, f"{k['id']}  {k['title']}\n{k['content']}\ntrigger: "
             + ", ".join(t for t in k["trigger"] if t))  # fmt: skip
        return 0
    lines = [f"{k['id']}  {k['title']}  (trigger: {', '.join(t for t in k['trigger'] if t)})"
             for k in found] or ["no approved skills: `waymark skills extract` proposes some"]  # fmt: skip
    emit({"skills": found}, ctx.as_json, "\n".join(lines))
    return 0


def cmd_stats(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.packets.stats import stats

    project = ctx.project(create=False)
    if args.impact:
        return _impact(args, ctx, project)
    data = stats(ctx.conn, project, days=args.days)
    t = data["tokens"]

    def pct(rate: float | None) -> str:
        return "-" if rate is None else f"{100 * rate:.0f}%"

    def num(value: float | None) -> str:
        return "-" if value is None else f"{value:,.0f}"

    lines = [
        f"last {args.days:g} days: {data['sessions']} sessions, {data['shown']} items shown,"
        f" {data['used']} used ({pct(data['use_rate'])})",
        f"tokens injected: {num(t['total'])} in all; per session {num(t['per_session'])},"
        f" per prompt {num(t['per_prompt'])}, per subagent {num(t['per_subagent'])},"
        f" per used item {num(t['per_used_item'])}",
        f"MCP tool definitions: {data['tool_definitions']['tokens']:,} tokens in every request",
    ]
    for key, title in (("by_section", "section"), ("by_hook", "hook"), ("by_type", "type")):
        if data[key]:
            lines.append(f"use by {title}:")
            lines += [f"  {r[title]:<32} {r['used']:>5} of"
                      f" {r['shown']:<5} {pct(r['rate'])}" for r in data[key]]  # fmt: skip
    if data["by_how"]:
        lines.append("used by: " + ", ".join(f"{n} {h}" for h, n in data["by_how"].items()))
    emit(data, ctx.as_json, "\n".join(lines))
    return 0


def _impact(args: argparse.Namespace, ctx: Context, project: Any) -> int:
    from waymark.packets.impact import impact
    from waymark.projects.client_files import claude_config_dir, codex_home

    data = impact(ctx.conn, project, days=args.days, claude_dir=claude_config_dir(),
                  codex_dir=codex_home())  # fmt: skip
    emit(data, ctx.as_json, impact_text(data))
    return 0


def impact_text(data: dict[str, Any]) -> str:
    def pct(rate: float | None) -> str:
        return "-" if rate is None else f"{100 * rate:.0f}%"

    def row(name: str, r: dict[str, Any]) -> str:
        per = "-" if r["tokens_per_used_item"] is None else f"{r['tokens_per_used_item']:,.0f}"
        return (f"{name:<10} {r['sessions']:>8} {r['from_handoff']:>8} {r['handoffs_resumed']:>7}"
                f" {r['recalls']:>7} {r['used']:>5}/{r['shown']:<5} {per:>9}"
                f" {r['hints_then_passed']:>4}/{r['failure_hints']:<4}"
                f" {r['decisions_held']:>4}/{r['decisions_reverted']:<4}")  # fmt: skip

    t = data["total"]
    lines = [
        f"last {data['days']:g} days: {t['sessions']} sessions, {t['from_handoff']} started "
        f"from a handoff ({pct(t['from_handoff_share'])}), {t['handoffs_resumed']} carried it "
        f"on; {t['recalls']} recalls served ({t['asked_recalls']} asked for); {t['used']} of "
        f"{t['shown']} items used ({pct(t['use_rate'])}); {t['hints_then_passed']} of "
        f"{t['failure_hints']} failure hints followed by a pass; decisions {t['decisions_held']}"
        f" held, {t['decisions_reverted']} reverted",
        "",
        f"{'week of':<10} {'sessions':>8} {'handoff':>8} {'resumed':>7} {'recalls':>7}"
        f" {'used/shown':>11} {'tok/used':>9} {'hint/pass':>9} {'held/rev':>9}",
    ]
    lines += [row(w["week"], w) for w in data["weeks"]]
    lines.append(row("total", t))
    cache = data["prompt_cache"]
    if cache and cache["requests"]:
        parts = [f"{client} {pct(c['cached_share'])} of {c['input_tokens']:,} ({c['requests']}"
                 f" requests, {c['sessions']} sessions)" for client, c in cache["by_client"].items()]  # fmt: skip
        lines.append(f"prompt cache, from the clients' transcripts: {pct(cache['cached_share'])}"
                     f" of prompt tokens read from cache; " + "; ".join(parts))  # fmt: skip
    else:
        lines.append("prompt cache: no transcript of these sessions on this machine")
    return "\n".join(lines)


def cmd_statusline(args: argparse.Namespace, ctx: Context) -> int:
    import sys

    from waymark.base import jsonlite as json
    from waymark.errors import InvalidArgument
    from waymark.packets.statusline import status_line

    session = args.session
    if not session and not sys.stdin.isatty():
        try:
            said = json.loads(sys.stdin.read() or "{}")
        except ValueError as exc:
            raise InvalidArgument(f"stdin is not Claude Code's JSON: {exc}") from None
        session = said.get("session_id") if isinstance(said, dict) else None
    if not isinstance(session, str) or not session:
        raise InvalidArgument("name the session: --session ID, or Claude Code's JSON on stdin")
    line = status_line(ctx.conn, session)
    emit({"session": session, "line": line}, ctx.as_json, line)
    return 0


def cmd_outcomes(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.curation import outcomes

    project = ctx.project(create=False)
    counts = outcomes.refresh(ctx.conn, project) if args.refresh else None
    found = outcomes.listing(ctx.conn, project)
    lines = [
        f"{o['item_id']}  {o['kind']:<10} {o['state']:<8}"
        + (f" by {str(o['reverted_by'])[:10]}" if o["reverted_by"] else "")
        + f"  {len(o['commits'])} commit(s), {o['later']} later"
        + (" (set by hand)" if o["set_by"] == "person" else "")
        + f"  {', '.join(o['files'][:3])}"
        for o in found
    ] or ["nothing linked to a change in git yet"]
    if counts is not None:
        lines.insert(0, f"refreshed: {counts['changed']} changed")
    emit({"outcomes": found, "refreshed": counts}, ctx.as_json, "\n".join(lines))
    return 0


def cmd_outcome(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.curation import outcomes

    project = ctx.project(create=False)
    item = _full_id(ctx, args.id)
    row = outcomes.settle(ctx.conn, project, item, None if args.auto else args.state,
                          reason=args.reason)  # fmt: skip
    said = "back to git's judgement" if args.auto else f"set to {row['state']} by hand"
    emit(row, ctx.as_json, f"{item}: {said}")
    return 0


def _full_id(ctx: Context, given: str) -> str:
    """A memory id from its prefix (as every command takes); a checkpoint's id as given."""
    from waymark.errors import NotFound
    from waymark.memories import store

    try:
        return store.full_id(ctx.conn, given)
    except NotFound:
        return given  # a checkpoint's id: `outcome` says if nothing is linked to it


def cmd_consolidate(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.curation import consolidate
    from waymark.memories import store

    project = ctx.project(create=False)
    groups = (
        consolidate.find(ctx.conn, project)
        if args.dry_run
        else consolidate.propose(ctx.conn, project)
    )
    lines = []
    for g in groups:
        head = f"{g['kind']}: {len(g['members'])} memories ({'; '.join(g['why'])})"
        if "candidate" in g:
            head += f" -> {g['candidate']}" + ("" if g["new"] else " (already proposed)")
        lines.append(head)
        for memory_id in g["members"]:
            m = store.get(ctx.conn, memory_id)
            lines.append(f"  {m.id}  {m.created_at[:10]}  {m.title[:70]}")
    if not groups:
        lines.append("no near-duplicate or contradicting memories found")
    elif args.dry_run:
        lines.append("nothing was proposed (--dry-run); run without it to queue them for review")
    else:
        lines.append(
            "nothing was merged: review them with `waymark candidates --kind consolidation`"
        )
    emit({"groups": groups, "dry_run": args.dry_run}, ctx.as_json, "\n".join(lines))
    return 0


def cmd_feedback(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.curation import feedback

    done = feedback.give(
        ctx.conn, ctx.project(create=False), args.id, args.verdict, note=args.note,
        query=args.query,
    )  # fmt: skip
    counts = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in done["counts"].items() if n)
    text = f"{done['memory_id']}: {counts}"
    if args.verdict in ("helpful", "not_helpful") and not done["ranks"]:
        text += " (recorded; give --query for it to move ranking)"
    if done["candidate"]:
        text += f"; proposed its archive for review ({done['candidate']})"
    emit(done, ctx.as_json, text)
    return 0


def cmd_sweep(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.curation import retention

    project = ctx.project(create=False)
    if args.dry_run:
        done = retention.plan(ctx.conn, project)
    else:
        done = retention.sweep(ctx.conn, project, actor="user")
    verb = ("would archive", "would purge") if args.dry_run else ("archived", "purged")
    lines = []
    for label, key in zip(verb, ("archive", "purge"), strict=True):
        lines.append(f"{label} {len(done[key])}")
        lines += [
            f"  {e['id']}  {e['type']:<10} {e['title'][:60]}  ({e['why']})" for e in done[key]
        ]
    if done["kept"]:
        lines.append("kept whatever their salience: " + ", ".join(
            f"{n} {why}" for why, n in sorted(done["kept"].items())))  # fmt: skip
    if not args.dry_run and done["archive"]:
        lines.append("an archive is undone with `waymark unarchive ID`; a purge is final")
    emit({**done, "dry_run": args.dry_run}, ctx.as_json, "\n".join(lines))
    return 0


def cmd_unarchive(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.memories import store

    memory = store.unarchive(ctx.conn, ctx.project(create=False), args.id)
    emit(memory.to_dict(), ctx.as_json, f"unarchived {memory.id}")
    return 0


def cmd_candidates(args: argparse.Namespace, ctx: Context) -> int:
    project = ctx.read_project()
    statuses = candidates.STATUSES if args.all else tuple(args.status or ("pending",))
    found = (
        []
        if project is None
        else candidates.pending(
            ctx.conn,
            project,
            statuses=statuses,
            kind=args.kind,
            limit=args.limit,
            offset=args.offset,
        )
    )
    counts = (
        candidates.counts(ctx.conn, project.id)
        if project
        else dict.fromkeys(candidates.STATUSES, 0)
    )
    emit({"results": found, "counts": counts}, ctx.as_json, _text(found, counts, statuses))
    return 0


def _text(found: list[dict], counts: dict[str, int], statuses: tuple[str, ...]) -> str:
    if not found:
        waiting = counts.get("pending", 0)
        return f"no {'/'.join(statuses)} candidates" + (
            f" ({waiting} pending: `waymark candidates`)"
            if waiting and "pending" not in statuses
            else ""
        )
    lines = []
    for c in found:
        lines.append(f"{c['id']}  {c['kind']}  {c['action']}  [{c['status']}]  {c['title']}")
        lines.append(f"    why: {c['reason']}")
        if c["sources"]:
            lines.append(f"    changes: {', '.join(c['sources'])}")
        if c["kind"] == "consolidation" and (c.get("fields") or {}).get("content"):
            lines.append(f"    keeps: {c['fields']['content'][:200]}")
        for e in c["evidence"][:3]:
            lines.append("    evidence: " + ", ".join(f"{k}={v}" for k, v in e.items()))
        if c["memory_id"]:
            lines.append(f"    became: {c['memory_id']}")
    lines.append(
        f"{counts['pending']} pending, {counts['approved']} approved, {counts['rejected']} rejected;"
        " `waymark review ID --approve|--reject`"
    )
    return "\n".join(lines)


def cmd_backfill(args: argparse.Namespace, ctx: Context) -> int:
    import sys

    from waymark.data import backfill
    from waymark.installers import claude, codex

    project = ctx.project(create=False)

    def progress(n: int, total: int) -> None:
        if sys.stderr.isatty():
            width = 30
            done = width * n // max(total, 1)
            sys.stderr.write(f"\r[{'#' * done}{'.' * (width - done)}] {n}/{total} transcripts")
            sys.stderr.flush()

    done = backfill.backfill(
        ctx.conn, project, claude.config_dir(), codex.home(), client=args.client,
        since=args.since, dry_run=args.dry_run, seconds=args.seconds, progress=progress,
    )  # fmt: skip
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(done["by_kind"].items()) if n)
    text = (f"read {done['read']} of {done['transcripts']} transcripts in {done['seconds']:.1f} s:"
            f" {'would propose' if args.dry_run else 'proposed'} {done['proposed']}"
            + (f" ({kinds})" if kinds else "") + f", {done['known']} known already"
            + ("; stopped at the time limit: run it again to go on" if done["stopped"] else "")
            + ("" if args.dry_run or not done["proposed"] else
               "\nreview them: `waymark candidates --kind backfill`, or all at once:"
               " `waymark review --kind backfill --approve`"))  # fmt: skip
    emit(done, ctx.as_json, text)
    return 0


def cmd_review(args: argparse.Namespace, ctx: Context) -> int:
    project = ctx.project(create=False)
    if args.undo:
        if args.id is None:
            raise UsageError("--undo needs a candidate id")
        undone = candidates.undo(ctx.conn, project, args.id, actor="user")
        moved = [f"archived {', '.join(undone['archived'])}"] if undone["archived"] else []
        moved += [f"unarchived {', '.join(undone['unarchived'])}"] if undone["unarchived"] else []
        emit(undone, ctx.as_json, f"{undone['candidate']['id']} waits for review again"
             + (f" ({'; '.join(moved)})" if moved else ""))  # fmt: skip
        return 0
    if args.id is None:
        if not args.all_of_kind:
            raise UsageError("review needs a candidate id, or --kind KIND for all of one kind")
        done_all = candidates.decide_all(ctx.conn, project, args.all_of_kind,
                                         approve_them=args.approve, note=args.reason)  # fmt: skip
        verb = "approved" if args.approve else "rejected"
        emit({"decided": len(done_all), "kind": args.all_of_kind}, ctx.as_json,
             f"{verb} {len(done_all)} pending {args.all_of_kind} candidates")  # fmt: skip
        return 0
    if args.approve:
        done = candidates.approve(ctx.conn, project, args.id, actor="user", note=args.reason)
        memory = done["memory"]
        if done["candidate"]["action"] == "checkpoint":
            text = (
                f"approved {done['candidate']['id']}: the checkpoint goes on from it as "
                f"revision {done['changed'][0]} (the next sync sends it to the team)"
            )
        elif done["candidate"]["action"] == "claim":
            text = (
                f"approved {done['candidate']['id']}: this machine gives up task "
                f"{done['changed'][0]}; the team store's holder keeps it"
            )
        elif memory is None:
            text = f"approved {done['candidate']['id']}: archived {', '.join(done['changed'])}"
        else:
            how = "added" if done["created"] else "kept the existing"
            text = f"approved {done['candidate']['id']}: {how} memory {memory['id']}"
            if done["changed"]:
                text += f" (replaces {', '.join(done['changed'])})"
    else:
        done = candidates.reject(ctx.conn, project, args.id, actor="user", note=args.reason)
        text = f"rejected {done['candidate']['id']}: it will not be proposed again"
    emit(done, ctx.as_json, text)
    return 0
