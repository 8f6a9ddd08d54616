"""The dashboard's pages at scale: `waymark ui` as a real process over a data home holding
--memories memories (the synthetic corpus, bench/corpus.py), each page asked --runs times
over HTTP with the session cookie, as a browser asks. Target: p95 under 200 ms per page at
100,000 memories.

    python bench/ui.py [--memories 100000] [--runs 40] [--sessions 2000]

Beside the memories: --sessions sessions of five packets each (receipts), half the memories
pulled from a team (each with its authorship event), a full hook-run record (15,000 runs),
and a code map of 200 files.
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


def history(conn, project, count: int) -> str:  # type: ignore[no-untyped-def]
    """`count` sessions with five packets of ten receipt lines each, half the memories
    pulled from a team (their authorship events), and a full hook-run record; the newest
    session's id."""
    from waymark.base import clock, hookruns
    from waymark.storage import connection as db
    from waymark.storage import sessions
    from waymark.storage.events import log_event

    ids = [r[0] for r in conn.execute("SELECT id FROM memories")]
    with db.write(conn):
        for n, memory_id in enumerate(ids[::2]):
            log_event(
                conn,
                "team.pull",
                project_id=project.id,
                memory_id=memory_id,
                actor="import",
                author=f"dev{n % 7}",
                machine="m" * 12,
                client="codex",
            )
        for i in range(count):
            sid = f"bench-{i:06d}"
            stamp = f"2026-11-{1 + i * 29 // count:02d}T10:00:00.{i % 1000:03d}Z"
            sessions.insert_session(conn, sid, "claude-code", project.id, stamp, None, None)
            for k in range(5):
                lines = [
                    ("rules", ids[(i * 50 + k * 10 + j) % len(ids)], "pinned", 12)
                    for j in range(10)
                ]
                sessions.add_receipts(
                    conn,
                    clock.new_id(),
                    stamp,
                    project.id,
                    sid,
                    "SessionStart" if k == 0 else "UserPromptSubmit",
                    "startup" if k == 0 else "prompt",
                    lines,
                )
                sessions.add_injected(conn, sid, [line[1] for line in lines])
    for i in range(15_000):
        hookruns.append(
            "claude-code", ("PreToolUse", "PostToolUse", "Stop")[i % 3], "ok", 20.0 + i % 17
        )
    return f"bench-{count - 1:06d}"


def code(repo: pathlib.Path) -> None:
    """Two hundred Python files importing one another, for the code map's page."""
    src = repo / "src"
    src.mkdir()
    for i in range(200):
        imports = "".join(f"import m{j}\n" for j in (i // 2, i // 3) if j != i)
        (src / f"m{i}.py").write_text(
            f"{imports}\n\ndef f{i}():\n    return {i}\n", encoding="utf-8"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--sessions", type=int, default=2_000)
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
        session = history(conn, project, args.sessions)
        conn.close()
        code(repo)
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
        base, login = url.split("/?")[0], url.split("code=")[1].split("&")[0]
        pages = [
            ("memories, first page", "/memories"),
            ("memories, page 1,000 (offset 50,000)", "/memories?offset=50000"),
            ("memories, one type", "/memories?type=decision"),
            ("memories, words", "/memories?q=checksum"),
            ("one memory", None),
            ("search (recall)", "/search?q=why+does+the+checksum+cache+fail"),
            ("review queue", "/review"),
            ("checkpoints", "/checkpoints"),
            ("overview (four charts)", "/overview"),
            ("sessions", "/sessions"),
            ("one session", f"/sessions/{session}"),
            ("code map, dependents", "/map?target=src/m0.py&depth=3"),
        ]
        subprocess.run([sys.executable, "-m", "waymark", "map", "refresh"], cwd=repo, env=env,
                       check=True, capture_output=True)  # fmt: skip
        with httpx.Client(base_url=base, timeout=30) as client:
            client.get(f"/?code={login}")
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
