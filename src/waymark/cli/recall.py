"""Commands that find memories: recall (and --batch), and index, which embeds them."""

from __future__ import annotations

import os
import sys
import time

from waymark import errors
from waymark.base import jsonlite as json  # `import json` costs a command ~2 ms
from waymark.cli.common import Context, add_command, bounded, emit, open_input, progress_bar
from waymark.errors import InvalidArgument, NotFound, UsageError
from waymark.memories import observations
from waymark.memories.kinds import TYPES
from waymark.memories.scope import check_agent
from waymark.projects.resolve import resolve
from waymark.recall import ann, embed, quantize, semantic, vectors
from waymark.recall import ranked as recall

TYPE_CHECKING = False  # typing costs a command ~3 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(
        commands, "index", common, handler=cmd_index,
        help="embed memories for semantic recall (only new or changed text; resumable; "
        "fetches the model on first use)",
        example="waymark index --all-projects",
    )  # fmt: skip
    p.add_argument(
        "--all-projects", action="store_true",
        help="every project's memories, not only this project's and the global ones",
    )  # fmt: skip
    p.add_argument(
        "--model-dir", metavar="DIR",
        help="a folder holding the model's files (model.onnx, tokenizer.json, "
        "tokenizer_config.json): recorded for every later process, so nothing is downloaded; "
        '"" forgets it',
    )  # fmt: skip
    p = add_command(
        commands,
        "recall",
        common,
        handler=cmd_recall,
        help="the memories that matter for a query, best first",
        example='waymark recall "why did we pick apsw" --explain',
    )
    p.add_argument("query", nargs="?", help="what you are about to do or want to know")
    p.add_argument("--limit", type=bounded(1, 200), default=10, help="1-200 (default 10)")
    p.add_argument("--type", action="append", default=[], choices=TYPES, help="repeatable; any")
    p.add_argument("--tag", action="append", default=[], help="repeatable; all must match")
    p.add_argument("--path", action="append", default=[], help="a file or directory in play")
    p.add_argument("--branch", help="only memories written on this git branch")
    p.add_argument(
        "--agent",
        help="recall as this agent: its own memories too, ahead of everyone's they shadow",
    )
    p.add_argument("--explain", action="store_true", help="show each result's score breakdown")
    p.add_argument(
        "--packet",
        metavar="ID",
        help="with --explain and no QUERY: explain a past hook packet line by line ('last' is"
        " the newest; see `waymark log --injected`)",
    )
    p.add_argument("--session", metavar="SESSION_ID", help="with --packet: that session's")
    p.add_argument(
        "--include-inactive",
        action="store_true",
        help="also superseded, archived and expired memories",
    )
    p.add_argument("--lexical", action="store_true", help="skip semantic search")
    p.add_argument("--no-notes", dest="notes", action="store_false",
                   help="leave out the repository's note sections (`waymark notes`) and the "
                   "dbt models the query names (`waymark dbt`)")  # fmt: skip
    p.add_argument(
        "--team", action="store_true",
        help="search the team store for this shared project (full text and meaning, on the "
        "server), with who wrote each",
    )  # fmt: skip
    p.add_argument(
        "--batch",
        metavar="FILE",
        help='evaluate: JSON lines {"qid", "query", "project"} -> {"qid", "ranked"}',
    )
    p.add_argument(
        "--floor", action="store_true",
        help="with --batch: rank only what clears the relevance floor, as `recall` shows",
    )  # fmt: skip


INDEX_THREADS = max(1, min(4, os.cpu_count() or 1))  # 2 threads: 1.8x the texts/s of 1


def cmd_index(args: argparse.Namespace, ctx: Context) -> int:
    # Nothing else runs in this process: every core (up to 4) embeds. Raises
    # ModelUnavailable (exit 1) when there is no model and it cannot be fetched.
    if args.model_dir is not None:
        recorded = embed.record_model_dir(args.model_dir, embed.chosen(ctx.conn))
        said = f"model folder {recorded} recorded" if recorded else "model folder forgotten"
        print(f"{said} for every later process", file=sys.stderr)
    model = embed.open_embedder(
        spec=embed.chosen(ctx.conn), allow_download=True, threads=INDEX_THREADS
    )
    project = None if args.all_projects else ctx.project(create=False)
    bar: list[Any] = []  # created on the first call, when the count is known

    def progress(done: int, todo: int) -> None:
        if not bar:
            bar.append(progress_bar(todo, "embedding"))
        bar[0](done)

    show = sys.stderr.isatty() and not ctx.as_json
    started = time.perf_counter()
    report = vectors.index_missing(
        ctx.conn, model, project.id if project else None, progress=progress if show else None
    )
    elapsed = time.perf_counter() - started
    queries = int8_queries(ctx, model)
    graph_bar: list[Any] = []

    def graph_progress(done: int, todo: int) -> None:
        if not graph_bar:
            graph_bar.append(progress_bar(todo, "vector index"))
        graph_bar[0](done)

    graph = ann.refresh(ctx.conn, model.model, model.dim, threads=INDEX_THREADS,
                        progress=graph_progress if show else None)  # fmt: skip
    data = report | {
        "model": model.model,
        "project": project.to_dict() if project else None,
        "seconds": round(elapsed, 3),
        "queries": queries,
        "vector_index": graph,
    }
    where = f"{project.name or project.root}" if project else "all projects"
    rate = f", {report['embedded'] / elapsed:,.0f}/s" if report["embedded"] and elapsed else ""
    emit(data, ctx.as_json,
         f"{where}: embedded {report['embedded']}, {report['skipped']} already current "
         f"({report['total']} active memories, model {model.model}{rate})\n"
         f"queries: {queries['note']}\n"
         f"vector index: {_graph_note(graph)}")  # fmt: skip
    return 0


def _graph_note(graph: dict[str, Any]) -> str:
    said = graph["index"]
    if said in ("built", "merged"):
        return f"{said}, {graph['vectors']:,} vectors in {graph['seconds']} s ({graph['file']})"
    if said == "current":
        return f"current ({graph['file']}; {graph.get('pending', 0):,} written since)"
    return f"{said}: {graph.get('why', '')}".rstrip(": ")


def int8_queries(ctx: Context, model: embed.Embedder) -> dict[str, Any]:
    """Build the int8 query model once (quantize.py) unless recall.int8_queries is off. A
    failure leaves queries on the full model and is reported, not fatal: the index is done."""
    if not quantize.enabled(ctx.conn):
        return {"precision": "float32", "note": quantize.note(False)}
    if sys.stderr.isatty() and not ctx.as_json and not embed.int8_built(model.spec):
        print("building the int8 query model (once per model file)...", file=sys.stderr)
    try:
        folder = quantize.attach(model)
    except errors.Int8Unavailable as exc:
        return {"precision": "float32", "note": f"full model: {exc.message}"}
    return {"precision": "int8", "note": f"int8 copy at {folder}", "folder": folder}


BATCH_MIN = 10


def _team_recall(args: argparse.Namespace, ctx: Context, project: Any) -> int:
    from waymark.team.recall import team_recall

    if project is None:  # a machine that joins the team before its first write here
        project = ctx.project(create=True)
    found = team_recall(ctx.conn, project, args.query, limit=args.limit, semantic=not args.lexical)
    lines = [
        f"{r['memory']['id']}  {r['memory']['type']:10} {r['author']}: {r['memory']['title']}"
        for r in found["results"]
    ] or [f"no team memory of {found['project_key']} matches"]
    emit(found, ctx.as_json, "\n".join(lines))
    return 0


def cmd_recall(args: argparse.Namespace, ctx: Context) -> int:
    if args.batch:
        return _batch(args, ctx)
    if args.packet is not None:
        return _explain_packet(args, ctx)
    if args.query is None:
        raise UsageError("give a QUERY, --batch FILE, or --explain --packet ID|last")
    project = ctx.read_project()
    if args.team:
        return _team_recall(args, ctx, project)
    if project is None:
        text = "nothing remembered here: this directory is not a Waymark project yet"
        emit({"semantic": False, "results": []}, ctx.as_json, text)
        return 0
    near = semantic.neighbours(
        ctx.conn, project, [args.query], mode="off" if args.lexical else "auto"
    )
    from waymark.packets.asked import asked

    # The relevance floor every face shows by, not near-zero padding; the best match stays
    # even below it when it answers at all: a deliberate query gets an answer.
    found = asked(ctx.conn, project, args.query, limit=args.limit, types=args.type or (),
                  tags=args.tag or (), paths=args.path or (), semantic=near[0] if near else None,
                  include_inactive=args.include_inactive, branch=args.branch,
                  agent=check_agent(args.agent), cited=args.notes)  # fmt: skip
    hits, below, noted, models = found["hits"], found["below"], found["notes"], found["dbt"]
    checks = observations.checks(ctx.conn, project, [h.memory for h in hits])
    results = [h.to_dict(with_explain=args.explain) | checks.get(h.memory.id, {}) for h in hits]
    data = {
        "semantic": near is not None,
        "results": results,
        "below_relevance_floor": below,
        "notes": noted,
        "dbt": models,
    }
    lines = [
        f"{i}. {h.memory.id}  {h.memory.type:<10} {h.memory.title}"
        + (f" (agent {h.memory.agent})" if h.memory.agent else "")
        + f"  ({h.score:.4f})"
        + _checked(checks.get(h.memory.id, {}))
        + outcome_mark(h.explain.get("outcome"))
        for i, h in enumerate(hits, 1)
    ] or ["nothing relevant remembered"]
    if args.explain:
        from waymark.memories.store import authorship

        made = {h.memory.id: authorship(ctx.conn, h.memory.id) for h in hits}
        for result in results:
            author = made.get(result["memory"]["id"])
            if author:
                result["explain"] = {**result["explain"], "team": author}
        lines = _with_explain(lines, hits, made)
    lines += [(f"note: {n['cite']}" if n["kind"] == "note" else
               f"{n['kind']}: {n['heading']} ({n['path']}): {n['description'] or ''}".rstrip(": "))
              + ("" if n["state"] == "FRESH" else f"  [{n['state']}]") for n in noted]  # fmt: skip
    lines += [m["line"] for m in models]
    if near is None and not args.lexical:
        lines.append("(lexical only: no embedding model on this machine; see `waymark index`)")
    if below:
        lines.append(f"({below} weaker match(es) below the relevance floor left out)")
    emit(data, ctx.as_json, "\n".join(lines))
    return 0


def outcome_mark(outcome: dict[str, Any] | None) -> str:
    """`  [REVERTED by 1a2b3c4]` or `  [held: 4 later commits]`, as a result line ends."""
    if not outcome:
        return ""
    if outcome["state"] == "reverted":
        by = outcome.get("by")
        said = "its lines restored" if by == "restored" else f"by {str(by)[:10]}" if by else ""
        return f"  [REVERTED{' ' + said if said else ''}]"
    return f"  [held: {outcome['later']} later commits]"


def _checked(found: dict[str, Any]) -> str:
    """` [REPORTED_PASS, RECHECK_REQUIRED]`: the latest observation and any evidence that
    changed since, as a result line ends."""
    marks = []
    obs = found.get("observation")
    if obs:
        marks.append(obs["status"] + (f", {obs['state']}" if obs.get("state") else ""))
    fresh = found.get("evidence_state")
    if fresh and fresh["state"] != "FRESH":
        marks.append(f"evidence {fresh['state']}")
    return f"  [{'; '.join(marks)}]" if marks else ""


def _explain_packet(args: argparse.Namespace, ctx: Context) -> int:
    from waymark.packets import receipts

    if args.query is not None or not args.explain:
        raise UsageError("--packet explains a past packet: give --explain and no QUERY")
    project = ctx.read_project()
    if project is None:
        raise InvalidArgument("this directory is not a Waymark project yet: no packets")
    found = receipts.packets(ctx.conn, project, session_id=args.session, packet=args.packet)
    emit({"packets": found}, ctx.as_json, receipts.render_text(found))
    return 0


def _with_explain(
    lines: list[str], hits: list[recall.Hit], made: dict[str, dict[str, Any] | None]
) -> list[str]:
    out = []
    for line, hit in zip(lines, hits, strict=False):
        ex = hit.explain
        tiers = ", ".join(f"{n} #{t['rank']} ({t['score']:.3f})" for n, t in ex["tiers"].items())
        mult = ", ".join(f"{n} x{v:.3f}" for n, v in ex["multipliers"].items() if v != 1.0)
        out += [line, f"     fused {ex['fused']:.4f} from {tiers}" + (f"; {mult}" if mult else "")]
        for hidden in ex.get("shadowed", ()):
            out.append(f"     shadows {hidden['id']} ({hidden['tier']}, same type and key)")
        author = made.get(hit.memory.id)
        if author:
            out.append(f"     {written_by(author)}")
    return out


def written_by(made: dict[str, Any]) -> str:
    """`from the team: alice on machine 01jd..., claude-code, pulled 2026-12-03`."""
    client = f", {made['client']}" if made.get("client") else ""
    machine = (made.get("machine") or "?")[:12]
    return f"from the team: {made['author']} on machine {machine}{client}, pulled {made['at'][:10]}"


def _batch(args: argparse.Namespace, ctx: Context) -> int:
    """One output line per query; read-only, so results never depend on query order."""
    source = open_input(args.batch)
    try:
        rows = [_batch_row(line, n) for n, line in enumerate(source, 1) if line.strip()]
    finally:
        if source is not sys.stdin:
            source.close()
    by_project: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_project.setdefault(row["project"], []).append(row)
    limit = max(args.limit, BATCH_MIN)
    tuned = recall.settings_for(ctx.conn)
    results: dict[str, list[str]] = {}
    for spec, group in by_project.items():
        try:
            project = resolve(ctx.conn, spec, create=False)
        except NotFound:
            results.update({row["qid"]: [] for row in group})
            continue
        queries = [row["query"] for row in group]
        near = semantic.neighbours(
            ctx.conn, project, queries, mode="off" if args.lexical else "auto"
        )
        for i, row in enumerate(group):
            hits = recall.recall(
                ctx.conn,
                project,
                row["query"],
                limit=limit,
                semantic=near[i] if near else None,
                settings=tuned,
            )
            if args.floor:
                from waymark.recall.floor import asked_hits

                hits = asked_hits(hits)
            results[row["qid"]] = [h.memory.key or h.memory.id for h in hits]
    for row in rows:
        sys.stdout.write(json.dumps({"qid": row["qid"], "ranked": results[row["qid"]]}) + "\n")
    return 0


def _batch_row(line: str, n: int) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except ValueError:
        raise InvalidArgument(f"batch line {n} is not valid JSON") from None
    if not isinstance(row, dict) or not all(isinstance(row.get(k), str) for k in ("qid", "query")):
        raise InvalidArgument(f'batch line {n} needs string "qid" and "query"')
    row.setdefault("project", ".")
    return row
