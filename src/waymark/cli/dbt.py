"""A dbt project's artifacts from the command line: waymark dbt [status | refresh | list |
lineage MODEL | tests | freshness]. Each reads target/ again first when dbt wrote it since
(a stat when it did not); nothing runs dbt."""

from __future__ import annotations

from waymark.cli.common import Context, add_command, bounded, emit
from waymark.errors import UsageError
from waymark.knowledge import dbt, lineage

TYPE_CHECKING = False  # typing costs a command ~3 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any

LISTED = ("model", "seed", "snapshot", "source", "exposure", "metric", "semantic_model",
          "saved_query", "analysis")  # fmt: skip


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(
        commands,
        "dbt",
        common,
        handler=cmd_dbt,
        help="a dbt project's models, sources, tests and exposures as dbt last wrote them "
        "(target/manifest.json, run_results.json, sources.json): what depends on a model, the "
        "failing tests, the sources' freshness; dbt itself never runs",
        example="waymark dbt lineage orders",
    )
    p.add_argument("action", nargs="?", default="status",
                   choices=("status", "refresh", "list", "lineage", "tests", "freshness"))  # fmt: skip
    p.add_argument("model", nargs="?", help="lineage: a model's name or a node's unique id")
    p.add_argument("--depth", type=bounded(1, lineage.DEPTH_MAX), default=lineage.DEPTH_MAX,
                   help="lineage: steps to follow each way (default all)")  # fmt: skip
    p.add_argument("--all", action="store_true",
                   help="tests: every test, not only the failing; list: tests too")  # fmt: skip


def cmd_dbt(args: argparse.Namespace, ctx: Context) -> int:
    project = ctx.project()  # what dbt wrote is stored, as `waymark map refresh` stores a map
    done = dbt.refresh(ctx.conn, project)
    problems = [p for found in done["projects"] for p in found["problems"]]
    if args.action == "lineage":
        if not args.model:
            raise UsageError("dbt lineage needs a MODEL: its name or a unique id")
        found = lineage.lineage(ctx.conn, project, args.model, args.depth)
        emit(found, ctx.as_json, _lineage_text(found))
    elif args.action == "tests":
        found = lineage.tests(ctx.conn, project, failing=not args.all)
        lines = [f"{t['status'] or 'not run':<8} {t['name']}"
                 + (f"  on {t['tests_node']}" if t["tests_node"] else "")
                 + (f"  {t['message']}" if t["message"] else "") for t in found["tests"]]  # fmt: skip
        counts = ", ".join(f"{n} {s}" for s, n in sorted(found["counts"].items()))
        lines.append(f"tests: {counts or 'none'}")
        emit(found, ctx.as_json, "\n".join(lines))
    elif args.action == "freshness":
        found = lineage.freshness(ctx.conn, project)
        lines = [
            f"{s['freshness']:<8} {s['unique_id']}  loaded {s['loaded_at'] or '?'}"
            + (f" ({_age(s['age_s'])} before the check)" if s["age_s"] is not None else "")
            for s in found["sources"]
        ] or [  # fmt: skip
            "no source freshness read: `dbt source freshness` writes target/sources.json"
        ]
        emit(found, ctx.as_json, "\n".join(lines))
    elif args.action == "list":
        kinds = LISTED + (("test", "unit_test") if args.all else ())
        found = lineage.listing(ctx.conn, project, kinds)
        lines = [f"{n['kind']:<9} {n['name']}" + (f"  {n['path']}" if n["path"] else "")
                 + (f"  [{n['status']}]" if n["status"] else "") for n in found["nodes"]]  # fmt: skip
        emit(found, ctx.as_json, "\n".join(lines) or "no dbt nodes read")
    else:
        data = {**done, "status": lineage.status(ctx.conn, project)}
        emit(data, ctx.as_json, _status_text(done, data["status"]))
    for problem in problems if not ctx.as_json else ():
        print(f"warning: {problem}")
    return 0


def _lineage_text(found: dict[str, Any]) -> str:
    node = found["node"]
    lines = [f"{node['kind']} {node['name']} ({node['path'] or node['unique_id']})"
             + ("" if found["state"] == dbt.FRESH else f"  [{found['state']}]")]  # fmt: skip
    for title, key in (("upstream", "upstream"), ("downstream", "downstream")):
        lines.append(f"{title}: {len(found[key])}")
        lines += [f"{'  ' * n['depth']}{n['kind']} {n['name']}"
                  + (f"  [{n['status']}]" if n["status"] else "") for n in found[key]]  # fmt: skip
    lines.append(f"tests: {len(found['tests'])}")
    lines += [f"  {t['status'] or 'not run':<8} {t['name']}"
              + (f"  {t['message']}" if t["message"] else "") for t in found["tests"]]  # fmt: skip
    return "\n".join(lines)


def _status_text(done: dict[str, Any], status: dict[str, Any]) -> str:
    if not status["projects"]:
        return "no dbt project here (no dbt_project.yml that git tracks)"
    lines = []
    for p in status["projects"]:
        where = p["root"] or "."
        lines.append(f"dbt project {p['name'] or '?'} at {where}: manifest "
                     + (f"of {p['manifest_at'][:19]} (dbt {p['dbt_version']})" if p["manifest_at"]
                        else f"not found: run `dbt parse` ({p['target']}/manifest.json)"))  # fmt: skip
    counts = ", ".join(f"{n} {k}s" for k, n in sorted(status["counts"].items()))
    lines.append(counts or "no nodes read")
    lines.append(f"failing tests: {status['failing']}; sources not fresh: {status['stale']}")
    read = [f"{p['root'] or '.'}: {', '.join(p['read'])}" for p in done["projects"] if p["read"]]
    if read:
        lines.append(f"read now: {'; '.join(read)} ({done['seconds']:.2f} s)")
    return "\n".join(lines)


def _age(seconds: float) -> str:
    hours = seconds / 3600
    return f"{hours:.0f} h" if hours < 48 else f"{hours / 24:.0f} days"
