"""Team memory on PostgreSQL: sync throughput, joining a large team, team recall latency,
and the hooks' latency while a sync runs.

A private PostgreSQL with pgvector (pgserver) in a temporary folder, and machines as data
homes of their own with one shared project (`.waymark.toml`: name and `[team] share`), the
synthetic corpus (bench/corpus.py) loaded into them with pseudo-random vectors.

- push / pull: machine A writes --events memories and syncs (events/s sent); machine B,
  empty, syncs (events/s applied). Target: 5,000 events/s each way.
- join: A's store is grown to --store memories; machine C with --local memories of its own
  joins and syncs everything. Target: under 60 s.
- team recall: queries over the store, by the library on one open connection (what a warm
  process pays) and with a connection per query (what a one-off CLI call pays). Target: p95
  under 100 ms at 100,000 memories, warm.
- hooks during a sync: PostToolUse on machine B as a real process, with nothing else running
  and while A syncs in another process (p50/p95 ms, floor `python -I -c pass`).

    python bench/team.py [--events 5000] [--store 100000] [--local 10000] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

import corpus

TOML = 'name = "shop"\n\n[team]\nshare = true\n'


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


class Machine:
    def __init__(self, root: pathlib.Path, name: str):
        self.home = root / f"{name}-home"
        self.repo = root / f"{name}-repo"
        self.repo.mkdir(parents=True)
        (self.repo / ".waymark.toml").write_text(TOML, encoding="utf-8")

    def use(self):
        """This machine's file, its project; the process now runs as this machine."""
        os.environ["WAYMARK_HOME"] = str(self.home)
        from waymark.projects.resolve import resolve
        from waymark.storage import connection as db

        conn = db.connect()
        return conn, resolve(conn, str(self.repo))

    def load(self, n: int, seed: int) -> float:
        conn, project = self.use()
        records = [dict(r, scope="project", target=None, key=f"m{seed}-{i}")
                   for i, r in enumerate(corpus.make_corpus(n, seed).records)]  # fmt: skip
        seconds = corpus.load(conn, project, records)
        corpus.fill_vectors(conn, project.id, seed)
        conn.close()
        return seconds

    def sync(self) -> tuple[dict, float]:
        from waymark.team import sync

        conn, project = self.use()
        started = time.perf_counter()
        done = sync.sync(conn, project)
        seconds = time.perf_counter() - started
        conn.close()
        return done, seconds


def timed_tend() -> list[float]:
    """The seconds of each vector index check a sync makes (an index build, when one is due,
    is timed apart from the push it follows)."""
    from waymark.team import sync

    seconds: list[float] = []
    tend = sync._tend

    def timed(pg):
        started = time.perf_counter()
        try:
            return tend(pg)
        finally:
            seconds.append(time.perf_counter() - started)

    sync._tend = timed
    return seconds


def hook_times(machine: Machine, runs: int) -> tuple[list[float], list[float]]:
    """PostToolUse after an edit, as a real process, with a floor run before each."""
    payload = json.dumps({
        "session_id": str(uuid.uuid4()), "hook_event_name": "PostToolUse", "cwd": str(machine.repo),
        "tool_name": "Write", "tool_input": {"file_path": str(machine.repo / "x.py"), "content": "x"},
        "tool_response": {"success": True},
    }).encode()  # fmt: skip
    env = {**os.environ, "WAYMARK_HOME": str(machine.home)}
    hook = [sys.executable, "-I", "-c", "from waymark.hooks.post_tool_use import main;main()",
            "claude-code"]  # fmt: skip
    times, floors = [], []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", "pass"], check=True)
        floors.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        subprocess.run(hook, input=payload, env=env, check=True, capture_output=True)
        times.append((time.perf_counter() - started) * 1000)
    return times, floors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--store", type=int, default=100_000)
    parser.add_argument("--local", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--hook-runs", type=int, default=20)
    args = parser.parse_args()

    root = pathlib.Path(tempfile.mkdtemp(prefix="waymark-team-bench-"))
    os.environ.setdefault("XDG_RUNTIME_DIR", str(root))  # pgserver's platformdirs asks
    import pgserver
    import psycopg

    server = pgserver.get_server(str(root / "pg"), cleanup_mode="stop")
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as c:
            c.execute("CREATE DATABASE team")
        socket = psycopg.conninfo.conninfo_to_dict(server.get_uri())["host"]
        os.environ["WAYMARK_TEAM_URL"] = f"postgresql://postgres@/team?host={socket}"
        a, b, c = Machine(root, "a"), Machine(root, "b"), Machine(root, "c")
        rows = []
        tended = timed_tend()

        loaded = a.load(args.events, seed=1)
        done, seconds = a.sync()
        rows.append(("push", done["pushed"], seconds, f"loaded in {loaded:.1f} s"))
        b.use()[0].close()
        done, seconds = b.sync()
        rows.append(("pull", done["applied"], seconds, ""))

        if args.store > args.events:
            grown = a.load(args.store - args.events, seed=2)
            done, seconds = a.sync()
            built = tended.pop() if tended else 0.0
            rows.append(("push (grow the store)", done["pushed"], seconds - built,
                         f"loaded in {grown:.1f} s; then vector index {done.get('vector_index')}"
                         f" in {built:.1f} s"))  # fmt: skip
        c.load(args.local, seed=3)
        done, seconds = c.sync()
        rows.append((f"join: {args.local:,} local, store {args.store:,}", done["applied"],
                     seconds, f"sent {done['pushed']:,} too"))  # fmt: skip

        print(f"PostgreSQL (pgserver) on a socket; {os.cpu_count()} cores")
        print(f"{'step':44} {'events':>8} {'seconds':>8} {'events/s':>9}  note")
        for step, n, secs, note in rows:
            print(f"{step:44} {n:>8,} {secs:>8.2f} {n / secs if secs else 0:>9,.0f}  {note}")

        from waymark.team.recall import lexical_terms, team_recall
        from waymark.teamstore import connection as team_db
        from waymark.teamstore import search

        queries = corpus.make_queries(corpus.make_corpus(200, 1), args.queries)
        conn, project = b.use()
        pg = team_db.connect(os.environ["WAYMARK_TEAM_URL"], migrate=False)
        import numpy as np

        rng = np.random.default_rng(9)
        vectors = rng.standard_normal((len(queries), 384), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        warm, lexical = [], []
        for query, vec in zip(queries, vectors, strict=True):
            started = time.perf_counter()
            words = lexical_terms(pg, query)  # as team recall asks
            search.team_matches(pg, "name:shop", words, vec.tolist(), 10)
            warm.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            search.team_matches(pg, "name:shop", words, None, 10)
            lexical.append((time.perf_counter() - started) * 1000)
        pg.close()
        cold = []
        for query in queries[:50]:
            started = time.perf_counter()
            team_recall(conn, project, query, semantic=False)
            cold.append((time.perf_counter() - started) * 1000)
        conn.close()
        total = args.store + args.local
        print(f"\nteam recall over {total:,} memories ({len(queries)} queries, top 10):")
        for name, values in (("hybrid, one open connection", warm),
                             ("lexical, one open connection", lexical),
                             ("lexical, a connection per query (CLI)", cold)):  # fmt: skip
            print(f"  {name:40} p50 {percentile(values, 50):6.1f} ms"
                  f"  p95 {percentile(values, 95):6.1f} ms")  # fmt: skip

        idle, idle_floor = hook_times(b, args.hook_runs)
        a.load(args.events, seed=4)
        env = {**os.environ, "WAYMARK_HOME": str(a.home)}
        syncing = subprocess.Popen([sys.executable, "-m", "waymark", "sync"], cwd=a.repo,
                                   env=env, stdout=subprocess.DEVNULL)  # fmt: skip
        busy, busy_floor = hook_times(b, args.hook_runs)
        syncing.wait()
        print(f"\nPostToolUse hook on another machine, {args.hook_runs} runs each (ms):")
        for name, values, floor in (("nothing else running", idle, idle_floor),
                                    ("while a sync of 5,000 events runs", busy, busy_floor)):  # fmt: skip
            print(f"  {name:36} p50 {percentile(values, 50):6.1f}  p95 "
                  f"{percentile(values, 95):6.1f}  floor p50 {percentile(floor, 50):5.1f}"
                  f"  p95 {percentile(floor, 95):5.1f}")  # fmt: skip
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
