"""The dashboard's pages at scale: `waymark ui` as a real process over a data home holding
--memories memories (the synthetic corpus, bench/corpus.py), each page asked --runs times
over HTTP with the session cookie, as a browser asks. Target: p95 under 200 ms per page at
100,000 memories.

    python bench/ui.py [--memories 100000] [--runs 40] [--sessions 2000] [--browser 10]

Beside the memories: --sessions sessions of five packets each (receipts), half the memories
pulled from a team (each with its authorship event), 5,000 links, 300 failed commands, a
full hook-run record (15,000 runs), and a code map of 200 files. With --browser, each page
is also loaded in Debian's chromium and its load event timed.
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
    from waymark.storage import command_failures, sessions
    from waymark.storage import connection as db
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
                    (
                        "rules",
                        ids[(i * 50 + k * 10 + j) % len(ids)],
                        "pinned",
                        12,
                        f"- [convention] a rule line as sent, number {j}",
                    )
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
    from waymark.storage.links import insert_link

    with db.write(conn):  # a linked neighbourhood for the memory graph: 5,000 links
        for n in range(5_000):
            a, b = ids[(n * 7) % len(ids)], ids[(n * 13 + 1) % len(ids)]
            if a != b:
                insert_link(conn, a, b, ("related", "solves", "causes")[n % 3], clock.now(), "user")
        for n in range(300):  # the error log: failed commands of the last days
            command_failures.add_command_failure(
                conn, project.id, f"bench-{n % count:06d}", clock.ago(n % 25), "0" * 40,
                f"pytest tests/test_{n % 40}.py", 1, "E   AssertionError: 2 != 3",
            )  # fmt: skip
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


def browser_loads(base: str, cookies, pages, some, runs: int):  # type: ignore[no-untyped-def]
    """Each page loaded `runs` times in Debian's chromium, signed in with the session
    cookie: the time from navigation to the load event (the page drawn, its stylesheet and
    script in), as the browser's own navigation timing says."""
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    out = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable,
                                             args=["--no-sandbox", "--disable-gpu"])  # fmt: skip
        context = browser.new_context()
        host = base.split("//")[1].split(":")[0]
        context.add_cookies([{"name": k, "value": v, "domain": host, "path": "/"}
                             for k, v in cookies.items()])  # fmt: skip
        page = context.new_page()
        for name, path in pages:
            times = []
            for i in range(runs):
                page.goto(base + (path or f"/memories/{some[i % len(some)]}"), wait_until="load")
                times.append(page.evaluate(
                    "() => { const t = performance.getEntriesByType('navigation')[0];"
                    " return t.loadEventEnd - t.startTime; }"))  # fmt: skip
            out.append((name, times))
        browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--sessions", type=int, default=2_000)
    parser.add_argument(
        "--browser",
        type=int,
        default=0,
        metavar="RUNS",
        help="also load each page RUNS times in chromium (the load event)",
    )
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
            ("health (the last check)", "/health"),
            ("timeline, a busy month", "/timeline?window=month&before=2026-12-01"),
            ("memory graph, where to start", "/graph"),
            ("memory graph, 3 steps", f"/graph?memory={some[0]}&depth=3"),
            ("next packet", "/next"),
            ("learning", "/learning"),
            ("settings", "/settings"),
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
            if args.browser:
                print(f"\n{'page, in chromium (load event)':40} {'runs':>5} {'p50 ms':>8}"
                      f" {'p95 ms':>8}")  # fmt: skip
                loads = browser_loads(base, client.cookies, pages, some, args.browser)
                for name, times in loads:
                    print(f"{name:40} {len(times):>5} {percentile(times, 50):>8.1f}"
                          f" {percentile(times, 95):>8.1f}", flush=True)  # fmt: skip
        server.terminate()
        server.wait(10)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
