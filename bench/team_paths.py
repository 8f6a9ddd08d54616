"""Team memory through the paths a user runs: `waymark sync` as a process, and team recall
through a running MCP server (`recall` with `team: true`) and the CLI (`recall --team`).

A private PostgreSQL with pgvector (pgserver) in a temporary folder; two machines, each a
data home of its own with one shared project (`.waymark.toml`: name and `[team] share`).
Machine A gets --memories memories of the synthetic corpus (bench/corpus.py) through the
importer, with vectors; then, each a whole process timed from start to exit:
- push: `waymark sync` on A (events sent a second, the process's start included);
- pull: `waymark sync` on B, empty (events applied a second);
- team recall: `waymark mcp` started on B as a client starts it (the handshake, then
  --queries `recall` calls with `team: true`, one after another; the first call apart, as
  it pays for loading the model), and `waymark recall --team` as a process, 10 times.
Targets (README): sync 5,000 events/s each way; team recall p95 under 100 ms warm.

    python bench/team_paths.py [--memories 13000] [--queries 60] [--keep]

WAYMARK_EMBED_MODEL_DIR defaults to ../shared/models/all-MiniLM-L6-v2-onnx when that exists
(without a model, team recall is lexical).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import corpus
from waymark.health.handshake import Speaker

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_MODEL = ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
TOML = 'name = "shop"\n\n[team]\nshare = true\n'


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def machine(root: pathlib.Path, name: str) -> tuple[pathlib.Path, dict[str, str]]:
    repo = root / f"{name}-repo"
    repo.mkdir(parents=True)
    (repo / ".waymark.toml").write_text(TOML, encoding="utf-8")
    return repo, {**os.environ, "WAYMARK_HOME": str(root / f"{name}-home")}


def waymark(repo: pathlib.Path, env: dict[str, str], *args: str) -> tuple[str, float]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "waymark", *args],
        cwd=repo, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"waymark {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=13_000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--settle", type=float, default=0.0,
                        help="seconds to let the server's background work end before timing")  # fmt: skip
    args = parser.parse_args()
    if "WAYMARK_EMBED_MODEL_DIR" not in os.environ and DEFAULT_MODEL.exists():
        os.environ["WAYMARK_EMBED_MODEL_DIR"] = str(DEFAULT_MODEL)

    root = pathlib.Path(tempfile.mkdtemp(prefix="waymark-team-paths-"))
    os.environ.setdefault("XDG_RUNTIME_DIR", str(root))  # pgserver's platformdirs asks
    import pgserver
    import psycopg

    server = pgserver.get_server(str(root / "pg"), cleanup_mode="stop")
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as c:
            c.execute("CREATE DATABASE team")
        socket = psycopg.conninfo.conninfo_to_dict(server.get_uri())["host"]
        url = f"postgresql://postgres@/team?host={socket}"
        (a_repo, a_env), (b_repo, b_env) = machine(root, "a"), machine(root, "b")
        for repo, env in ((a_repo, a_env), (b_repo, b_env)):
            waymark(repo, env, "team", "connect", url)

        os.environ["WAYMARK_HOME"] = a_env["WAYMARK_HOME"]
        from waymark.projects.resolve import resolve
        from waymark.storage import connection as db

        conn = db.connect()
        project = resolve(conn, str(a_repo))
        records = [dict(r, scope="project", target=None, key=f"m-{i}")
                   for i, r in enumerate(corpus.make_corpus(args.memories, 1).records)]  # fmt: skip
        report, imported = corpus.import_jsonl(conn, project, records)
        embedded, _ = corpus.fill_vectors(conn, project.id, seed=1)
        conn.close()
        print(f"machine A: {report['created']:,} memories imported in {imported:.1f} s,"
              f" {embedded:,} vectors; {os.cpu_count()} cores, PostgreSQL on a socket")  # fmt: skip

        print(f"\n{'step':40} {'events':>8} {'seconds':>8} {'events/s':>9}")
        for step, (repo, env), key in (("push: waymark sync on A", (a_repo, a_env), "sent"),
                                       ("pull: waymark sync on B", (b_repo, b_env), "applied")):  # fmt: skip
            out, seconds = waymark(repo, env, "--json", "sync")
            import json

            said = json.loads(out)
            n = said.get("pushed" if key == "sent" else "applied", 0)
            print(f"{step:40} {n:>8,} {seconds:>8.2f} {n / seconds:>9,.0f}")
        _, idle = waymark(b_repo, b_env, "--json", "sync")
        print(f"{'again on B, nothing to move':40} {0:>8,} {idle:>8.2f}  (the process and the"
              " round trips alone)")  # fmt: skip

        queries = corpus.make_queries(corpus.make_corpus(200, 1), args.queries)
        speaker = Speaker([sys.executable, "-m", "waymark", "mcp"], b_env, str(b_repo))
        try:
            speaker.request("initialize", {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"}}, 60)  # fmt: skip
            speaker.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            time.sleep(args.settle)
            times, semantic = [], []
            for query in queries:
                started = time.perf_counter()
                result = speaker.request("tools/call", {"name": "recall", "arguments": {
                    "query": query, "team": True}}, 60)  # fmt: skip
                times.append((time.perf_counter() - started) * 1000)
                if result.get("isError"):
                    raise SystemExit(f"team recall failed: {result['content']}")
                semantic.append(bool((result.get("structuredContent") or {}).get("semantic")))
        finally:
            speaker.close()
        warm = times[1:]
        print(f"\nteam recall over {args.memories:,} memories, through `waymark mcp` "
              f"({len(warm)} calls after the first; semantic in {sum(semantic[1:])}):")  # fmt: skip
        print(f"  first call {times[0]:7.1f} ms; then p50 {percentile(warm, 50):6.1f} ms, "
              f"p95 {percentile(warm, 95):6.1f} ms, max {max(warm):6.1f} ms")  # fmt: skip
        cli = [waymark(b_repo, b_env, "recall", "--team", q)[1] * 1000 for q in queries[:10]]
        print(f"  `waymark recall --team` as a process: p50 {percentile(cli, 50):6.1f} ms,"
              f" p95 {percentile(cli, 95):6.1f} ms")  # fmt: skip
    finally:
        server.cleanup()
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
