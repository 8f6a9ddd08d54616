"""The dashboard's pages at scale: `waymark ui` as a real process over a data home holding
--memories memories (the synthetic corpus, bench/corpus.py), each page asked --runs times
over HTTP with the session cookie, as a browser asks. Target: p95 under 200 ms per page at
100,000 memories.

    python bench/ui.py [--memories 100000] [--runs 40]
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

import httpx

import corpus


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()

    root = pathlib.Path(tempfile.mkdtemp(prefix="waymark-ui-bench-"))
    try:
        home, repo = root / "home", root / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        os.environ["WAYMARK_HOME"] = str(home)
        from waymark.projects.resolve import resolve
        from waymark.storage import connection as db

        conn = db.connect()
        project = resolve(conn, str(repo))
        records = [dict(r, scope="project", target=None, key=f"m{i}") for i, r in enumerate(
            corpus.make_corpus(args.memories, 1).records)]  # fmt: skip
        loaded = corpus.load(conn, project, records)
        some = [r[0] for r in conn.execute("SELECT id FROM memories ORDER BY random() LIMIT 20")]
        conn.close()
        print(
            f"{args.memories:,} memories loaded in {loaded:.0f} s; {os.cpu_count()} cores",
            flush=True,
        )

        env = {**os.environ, "WAYMARK_HOME": str(home)}
        server = subprocess.Popen([sys.executable, "-m", "waymark", "ui", "--no-open", "--json"],
                                  cwd=repo, env=env, stdout=subprocess.PIPE, text=True)  # fmt: skip
        text = ""
        while True:
            text += server.stdout.readline()
            try:
                url = json.loads(text)["url"]
                break
            except ValueError:
                continue
        base, token = url.split("/?")[0], url.split("token=")[1]
        pages = [
            ("memories, first page", "/memories"),
            ("memories, page 1,000 (offset 50,000)", "/memories?offset=50000"),
            ("memories, one type", "/memories?type=decision"),
            ("memories, words", "/memories?q=checksum"),
            ("one memory", None),
            ("search (recall)", "/search?q=why+does+the+checksum+cache+fail"),
            ("review queue", "/review"),
            ("checkpoints", "/checkpoints"),
        ]
        with httpx.Client(base_url=base, timeout=30) as client:
            client.get(f"/?token={token}")
            print(f"\n{'page':40} {'runs':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
            for name, path in pages:
                times = []
                for i in range(args.runs):
                    target = path or f"/memories/{some[i % len(some)]}"
                    started = time.perf_counter()
                    answer = client.get(target)
                    times.append((time.perf_counter() - started) * 1000)
                    assert answer.status_code == 200, (target, answer.status_code)
                print(f"{name:40} {len(times):>5} {percentile(times, 50):>8.1f}"
                      f" {percentile(times, 95):>8.1f} {max(times):>8.1f}", flush=True)  # fmt: skip
        server.terminate()
        server.wait(10)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
