"""Hook latency as a client sees it: each hook a real process, its payload on stdin.

For each size: a git repository whose files the memories scope to, capture enabled, the
synthetic corpus (bench/corpus.py) loaded into that path project with pinned rules, an active
checkpoint and pseudo-random vectors. Each hook runs as
`python -I -c "from waymark.hooks.<module> import main;main()" claude-code`, as installed (SessionStart startup, UserPromptSubmit
with varied prompts and with one whose words no memory holds (`(no match)`: the packet's own
floor), PreToolUse before Bash, before Write and before Codex's apply_patch sent through
its shell, PostToolUse after Bash and after
Write, PostToolUseFailure after a failed command whose error failed and was fixed before, so
each run looks it up and injects the hint), each run right after a
`python -I -c pass` floor run so both share the machine's noise. Then the real MCP server
(`python -m waymark mcp`) is started and every hook measured again on the warm
path (the server makes the packet, records the call; the hook relays).
Targets (p95 / floor p95, issue #30): UserPromptSubmit 2x up to 100k and 3x at a million;
SessionStart, PreToolUse and PostToolUse (and its failure variant) 1.5x up to 10k and 2x
above; the same for the path without the server and the warm one. PreToolUse (Bash) and (Write) run
in a fresh session each time: everything known is new, so each run injects and records, the
worst case; a few of the corpus's commands have failed before, so the failure lookup runs.
PreToolUse (again) is one session editing the same three files over and over: after the
warm-up runs there is nothing new to say, the common case.

    python bench/hooks.py [--sizes 10000,100000] [--runs 40] [--hooks EVENT,...] [--map]
                          [--map-files 50000]
                          [--profile] [--keep] [--reuse DIR]

WAYMARK_EMBED_MODEL_DIR defaults to ../shared/models/all-MiniLM-L6-v2-onnx when that exists.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from typing import IO

import corpus
from waymark import warm
from waymark.base import launch
from waymark.handoff import checkpoints, ledger
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.packets import prompt as prompt_packet
from waymark.projects import capture
from waymark.projects.resolve import resolve
from waymark.recall import ann, embed, semantic
from waymark.storage import connection as db

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_MODEL = ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
WARMUP = 3
# A prompt none of whose words any memory holds: the packet's floor (the query embedded and its
# neighbours ranked, nothing shown), what every prompt costs before its words are searched.
NO_MATCH = "zqxjv wvkpq blorft"
FAILURE_ERROR = "E   AssertionError: expected 2 got 3\nFAILED"
RULES = (
    ("convention", "Run `make lint` and `pytest -x -q` before every commit; CI runs the same."),
    ("warning", "Never run alembic downgrade against prod; write a forward migration instead."),
    ("convention", "Money is integer minor units everywhere; convert only at the API edge."),
    ("warning", "Do not log raw webhook payloads: they hold customer emails and addresses."),
    ("preference", "Small PRs, one concern each; squash merge with an imperative title."),
    ("decision", "Background work goes through Celery queues, never threads in web workers."),
)


def factor(hook: str, size: int) -> float:
    """The target: p95 at most this many times the floor's p95 (issue #30)."""
    if hook.startswith("UserPromptSubmit"):
        return 2.0 if size <= 100_000 else 3.0
    return 1.5 if size <= 10_000 else 2.0


def stats(seconds: list[float]) -> tuple[float, float]:
    """(p50, p95) in ms, nearest-rank."""
    ordered = sorted(seconds)
    rank = lambda q: ordered[max(0, math.ceil(q * len(ordered)) - 1)]  # noqa: E731
    return 1000 * rank(0.50), 1000 * rank(0.95)


def git(repo: pathlib.Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@example.com",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@example.com",
    )
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)


def setup(
    size: int, tmp: pathlib.Path, seed: int, code_map: bool = False, map_files: int = 0
) -> dict:
    """The repository and database for one size; returns what the runs need. With
    `code_map`, the repository's code map is built first (`waymark map refresh`): SessionStart
    then refreshes it and shows its section, PreToolUse and prompts read dependents.
    `map_files` adds that many generated source files (bench/map.py) under `lib/`, mapped
    too: SessionStart with a fleet-sized repository."""
    data = corpus.make_corpus(size, seed)
    repo = tmp / f"repo-{size}"
    corpus.materialise(data.tree, str(repo))
    if map_files:
        import map as map_bench

        map_bench.make_files(repo / "lib", map_files, seed)
    git(repo, "-c", "init.defaultBranch=main", "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "initial import")
    hot = data.scoped_files[0]
    with open(repo / hot, "a", encoding="utf-8") as f:
        f.write("# work in progress\n")  # a dirty tree, as during real work
    os.environ["WAYMARK_HOME"] = str(tmp / f"home-{size}")  # hook processes inherit it
    conn = db.connect()
    project = resolve(conn, str(repo))
    capture.set_enabled(conn, project, True)
    load_s = corpus.load(conn, project, data.records)
    for kind, text in RULES:
        store.remember(conn, project, make_draft(project, type=kind, content=text, pinned=True))
    checkpoints.create(
        conn,
        project,
        {
            "objective": "Make invoice webhooks idempotent across retries",
            "next_action": f"Add the idempotency-key check to {hot} and rerun its tests",
            "progress": ["Unique index on webhook_deliveries(delivery_id) migrated"],
            "decisions": [{"decision": "Key on delivery_id", "why": "the provider resends it"}],
            "failed_approaches": [{"approach": "Redis SETNX lock", "why_failed": "lost on evict"}],
            "lessons": ["Retries after a timeout can follow a successful send"],
            "relevant_files": data.scoped_files[:3],
            "evidence": [{"path": data.scoped_files[1]}],
        },
    )
    for i, template in enumerate(corpus.COMMANDS[:6]):  # earlier failures PreToolUse finds
        command, session = bench_command(template, data), f"bench-failures-{i}"
        ledger.record_tool(
            conn, project, session, "claude-code", command=command,
            failed=True, exit_code=1, error=FAILURE_ERROR,
        )  # fmt: skip
        if i < 3:  # fixed: a package installed, then the command passed (what a hint names)
            for then in ("pip install -e .[dev]", command):
                ledger.record_tool(conn, project, session, "claude-code", command=then,
                                   failed=False, exit_code=0)  # fmt: skip
    n_vectors, _ = corpus.fill_vectors(conn, project.id, seed)
    # A large store's approximate vector index, as `waymark index` leaves it (none below
    # 50,000 vectors): else the warm server would build it during the timed runs.
    graph = ann.refresh(conn, embed.ENGLISH.id, embed.ENGLISH.dim, threads=os.cpu_count() or 1)
    if graph.get("file"):
        print(f"vector index: {graph['vectors']:,} vectors in {graph['seconds']:.0f} s", flush=True)
    if code_map:
        from waymark.codemap import snapshot

        mapped = snapshot.refresh(conn, project)
        print(f"code map: {mapped['files']:,} files in {mapped['seconds']:.2f} s", flush=True)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return {
        "repo": repo,
        "project": project,
        "corpus": data,
        "load_s": load_s,
        "vectors": n_vectors,
        "prompts": corpus.make_prompts(data, 400, seed + 1),
    }


def payloads(env: dict, hook: str, n: int, rng: random.Random) -> list[bytes]:
    """`n` payloads of one hook in Claude Code's recorded shape (tests/fixtures/payloads),
    each unique as real ones are (ids), so the runtime's duplicate-delivery check never
    skips a run."""
    repo, data = env["repo"], env["corpus"]
    out = []
    tool_session = f"bench-tools-{uuid.uuid4()}"
    for i in range(n):
        session = str(uuid.uuid4())  # fresh: prompts dedup what a session has seen
        base = {
            "session_id": session,
            "transcript_path": f"/tmp/bench-transcripts/{session}.jsonl",
            "cwd": str(repo),
        }
        if hook == "SessionStart":
            body = {"hook_event_name": "SessionStart", "source": "startup"}
        elif hook.startswith("UserPromptSubmit"):
            body = {
                "hook_event_name": "UserPromptSubmit",
                "prompt_id": str(uuid.uuid4()),
                "permission_mode": "default",
                "prompt": NO_MATCH if hook.endswith("(no match)") else
                env["prompts"][i % len(env["prompts"])],
            }  # fmt: skip
        elif hook == "PreToolUse (Bash)":
            body = {
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_use_id": f"toolu_{uuid.uuid4().hex[:24]}",
                "tool_input": {"command": bench_command(rng.choice(corpus.COMMANDS), data, rng)},
            }
        elif hook == "PreToolUse (Codex patch)":
            # Codex's edit: an apply_patch sent through its shell, reported to PreToolUse only
            rel = data.scoped_files[i % 20]
            patch = f"*** Begin Patch\n*** Update File: {rel}\n@@\n-a\n+b\n*** End Patch\n"
            body = {
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_use_id": f"call_{uuid.uuid4().hex[:24]}",
                "tool_input": {"command": f"apply_patch <<'EOF'\n{patch}EOF\n"},
            }
        elif hook in ("PreToolUse (Write)", "PreToolUse (again)"):
            # again: three files, so the warm-up runs show all there is and the rest find none
            path = repo / data.scoped_files[i % (3 if hook == "PreToolUse (again)" else 20)]
            body = {
                **({"session_id": tool_session} if hook == "PreToolUse (again)" else {}),
                "hook_event_name": "PreToolUse",
                "tool_name": "Write",
                "tool_use_id": f"toolu_{uuid.uuid4().hex[:24]}",
                "tool_input": {"file_path": str(path), "content": "# edited\n" * 40},
            }
        elif hook == "PostToolUse (Bash)":
            command = bench_command(rng.choice(corpus.COMMANDS), data, rng)
            body = {
                "session_id": tool_session,
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_use_id": f"toolu_{uuid.uuid4().hex[:24]}",
                "tool_input": {"command": command, "description": "run it"},
                "tool_response": {"stdout": "ok\n" * 20, "stderr": "", "interrupted": False},
            }
        elif hook == "PostToolUseFailure (Bash)":
            # A fresh session each time and an error failed and fixed before: every run
            # looks it up and injects its hint, the worst case.
            body = {
                "hook_event_name": "PostToolUseFailure",
                "tool_name": "Bash",
                "tool_use_id": f"toolu_{uuid.uuid4().hex[:24]}",
                "tool_input": {"command": bench_command(rng.choice(corpus.COMMANDS), data, rng)},
                "error": f"Exit code 1\n{FAILURE_ERROR}",
            }
        else:
            path = repo / data.scoped_files[i % 20]
            body = {
                "session_id": tool_session,
                "hook_event_name": "PostToolUse",
                "tool_name": "Write",
                "tool_use_id": f"toolu_{uuid.uuid4().hex[:24]}",
                "tool_input": {"file_path": str(path), "content": "# edited\n" * 40},
                "tool_response": {"type": "update", "filePath": str(path), "content": "..."},
            }
        out.append(json.dumps({**base, **body}).encode())
    return out


def bench_command(template: str, data=None, rng: random.Random | None = None) -> str:
    """One of the corpus's commands, filled in (the first test file when no `rng`)."""
    tests = data.tree.tests if data is not None else ["tests/test_webhooks.py"]
    return template.format(
        test=rng.choice(tests) if rng else tests[0],
        method="retry_webhook",
        domain="billing",
        Domain="Billing",
        verb="sync",
        noun="invoice",
        table="billing_invoices",
        col="invoice_id",
    )


MODULES = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "UserPromptSubmit (no match)": "user_prompt_submit",
    "PreToolUse (Bash)": "pre_tool_use",
    "PreToolUse (Write)": "pre_tool_use",
    "PreToolUse (again)": "pre_tool_use",
    "PreToolUse (Codex patch)": "pre_tool_use",
    "PostToolUse (Bash)": "post_tool_use",
    "PostToolUse (Write)": "post_tool_use",
    "PostToolUseFailure (Bash)": "post_tool_use_failure",
}


# The hooks the warm MCP server answers when it runs: all of them, SessionStart where a
# server is up already (a second session; a clear, compact or resume in this one). A first
# session's start comes before its server, so SessionStart is timed on both paths.
WARM = ("SessionStart", "UserPromptSubmit", "UserPromptSubmit (no match)", "PostToolUseFailure (Bash)", "PreToolUse (Bash)", "PreToolUse (Write)",
        "PreToolUse (again)", "PreToolUse (Codex patch)", "PostToolUse (Bash)",
        "PostToolUse (Write)")  # fmt: skip
CLIENT = {"PreToolUse (Codex patch)": "codex"}  # the client each hook runs as: else Claude Code


def timed(argv: list[str], data: bytes | None) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run(argv, input=data, capture_output=True, timeout=60)
    return time.perf_counter() - started, done


def run_hooks(env: dict, hooks: list[str], runs: int, rng: random.Random) -> dict[str, dict]:
    """Warm-up, then `runs` rounds: each hook once (order rotating), each after a floor run."""
    floor = [sys.executable, "-I", "-c", "pass"]
    results = {h: {"hook": [], "floor": [], "output": 0, "errors": []} for h in hooks}
    data = {h: payloads(env, h, WARMUP + runs, rng) for h in hooks}
    for n in range(WARMUP + runs):
        for k in range(len(hooks)):
            hook = hooks[(n + k) % len(hooks)]
            argv = launch.argv(sys.executable, MODULES[hook], CLIENT.get(hook, "claude-code"))
            floor_s, _ = timed(floor, None)
            hook_s, done = timed(argv, data[hook][n])
            if n < WARMUP:
                continue
            r = results[hook]
            r["floor"].append(floor_s)
            r["hook"].append(hook_s)
            r["output"] += bool(done.stdout.strip())
            if done.returncode != 0 or done.stderr:
                r["errors"].append(f"exit {done.returncode}: {done.stderr[-300:]!r}")
    return results


def start_server(project_id: str, log: IO[str]) -> tuple[subprocess.Popen, float]:
    """The real MCP server, stdin a pipe we keep open; returns once it answers semantically
    and has gone idle (its background index check finished)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "waymark", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    request = {"project_id": project_id, "queries": ["x"], "k": 5}
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"the MCP server exited with {proc.returncode}; see {log.name}")
        reply = warm.ask("semantic", request, 1.0)
        if reply and reply.get("ok"):
            break
        if time.perf_counter() - started > 300:
            stop_server(proc)
            raise SystemExit(f"the MCP server was not ready after 300 s: {reply}")
        time.sleep(0.2)
    ready = time.perf_counter() - started
    wait_idle(proc.pid)
    return proc, ready


def wait_idle(pid: int, limit_s: float = 120.0) -> None:
    """Until the process uses under 2% of a core over half a second (Linux /proc)."""
    stat = pathlib.Path(f"/proc/{pid}/stat")
    if not stat.exists():
        time.sleep(3)
        return
    tick = os.sysconf("SC_CLK_TCK")
    cpu = lambda: sum(int(x) for x in stat.read_text().rsplit(")", 1)[1].split()[11:13]) / tick  # noqa: E731
    deadline = time.monotonic() + limit_s
    before = cpu()
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = cpu()
        if now - before < 0.01:
            return
        before = now


def stop_server(proc: subprocess.Popen) -> str:
    """Close stdin (the client leaving) and make sure the process is gone."""
    started = time.perf_counter()
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(timeout=15)
        how = f"exited with {proc.returncode} {time.perf_counter() - started:.1f} s after stdin closed"
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            proc.wait(timeout=5)
            how = "did NOT exit on stdin close; terminated"
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            how = "did NOT exit on stdin close or SIGTERM; killed"
    return how


def ask_times(env: dict, n: int) -> dict:
    """warm.ask as the hook sends it, timed in this process with a generous deadline."""
    times, ok = [], 0
    for prompt in env["prompts"][:n]:
        request = {
            "project_id": env["project"].id,
            "queries": [prompt],
            "k": semantic.CANDIDATES,
            "max_tokens": prompt_packet.PROMPT_SEMANTIC_TOKENS,
        }
        started = time.perf_counter()
        reply = warm.ask("semantic", request, 1.0)
        times.append(time.perf_counter() - started)
        ok += bool(reply and reply.get("ok"))
    in_time = sum(t <= semantic.WARM_DEADLINE_S for t in times)
    return {"times": times, "ok": ok, "in_time": in_time}


PROFILE = """
import cProfile, os, pstats, runpy, sys
module = sys.argv[1]
sys.argv = [module, "claude-code"]
def leave(code):  # a hook ends with os._exit (runtime.leave): here it returns to the profile
    raise SystemExit(code)
os._exit = leave
profile = cProfile.Profile()
profile.enable()
try:
    runpy.run_module(module, run_name="__main__", alter_sys=True)
except SystemExit:
    pass
profile.disable()
stats = pstats.Stats(profile, stream=sys.stderr).sort_stats("cumulative")
stats.print_stats(r"waymark/|execute|fetch|_find_and_load\b|subprocess.py.*run", 22)
"""


def profile(env: dict, hooks: list[str], rng: random.Random) -> None:
    """One run of each hook under cProfile (with its overhead): where the time goes."""
    for hook in hooks:
        module = f"waymark.hooks.{MODULES[hook]}"
        done = subprocess.run(
            [sys.executable, "-I", "-c", PROFILE, module],
            input=payloads(env, hook, 1, rng)[0],
            capture_output=True,
            timeout=60,
        )
        text = done.stderr.decode("utf-8", "replace")
        print(f"--- cProfile: {hook}, {len(env['corpus'].records):,} memories")
        print(text[text.find("ncalls") :].rstrip() if "ncalls" in text else text)


def reopen(size: int, tmp: pathlib.Path, seed: int) -> dict:
    """What `setup` returned, for the store and repository a `--keep` run left in `tmp`
    (the corpus is made again from the seed; nothing is loaded)."""
    data = corpus.make_corpus(size, seed)
    repo = tmp / f"repo-{size}"
    os.environ["WAYMARK_HOME"] = str(tmp / f"home-{size}")
    conn = db.connect()
    project = resolve(conn, str(repo))
    vectors = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    conn.close()
    return {"repo": repo, "project": project, "corpus": data, "load_s": 0.0, "vectors": vectors,
            "prompts": corpus.make_prompts(data, 400, seed + 1)}  # fmt: skip


def measure(size: int, tmp: pathlib.Path, args: argparse.Namespace) -> dict:
    started = time.perf_counter()
    if (tmp / f"home-{size}").is_dir():  # `--reuse`: the store an earlier run kept
        env = reopen(size, tmp, args.seed)
    else:
        env = setup(size, tmp, args.seed, args.map or args.map_files > 0, args.map_files)
    print(
        f"{size:,} memories loaded in {env['load_s']:.0f} s ({env['vectors']:,} vectors);"
        f" setup {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    rng = random.Random(args.seed)
    hooks = [h for h in MODULES if not args.hooks or h.split(" (")[0] in args.hooks.split(",")]
    lexical = run_hooks(env, hooks, args.runs, rng)
    if args.profile:
        profile(env, hooks, rng)
    with open(tmp / f"mcp-{size}.log", "w", encoding="utf-8") as log:
        proc, ready_s = start_server(env["project"].id, log)
        try:
            warm_runs = run_hooks(env, [h for h in WARM if h in hooks] or WARM[:1], args.runs, rng)
            asks = ask_times(env, args.asks)
        finally:
            how = stop_server(proc)
    return {"lexical": lexical, "warm": warm_runs, "asks": asks, "ready_s": ready_s, "stop": how}


def print_tables(results: dict[int, dict]) -> None:
    print()
    print(corpus.VECTOR_NOTE)
    print("floor = `python -I -c pass`, run just before each hook run; times are wall ms")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores; load average (1, 5, 15 min) at the end: {load}")
    print()
    head = (
        f"{'hook':<20} {'size':>8} {'path':<8} {'runs':>4} {'p50':>7} {'p95':>7}"
        f" {'floor p50':>9} {'floor p95':>9} {'p95/floor':>9} {'target':>7}  result  output"
    )
    print(head)
    print("-" * len(head))
    errors = []
    for size, r in results.items():
        for path in ("lexical", "warm"):
            for hook, x in r[path].items():
                p50, p95 = stats(x["hook"])
                f50, f95 = stats(x["floor"])
                ratio, goal = p95 / f95, factor(hook, size)
                print(
                    f"{hook:<20} {size:>8,} {path:<8} {len(x['hook']):>4} {p50:>7.1f} {p95:>7.1f}"
                    f" {f50:>9.1f} {f95:>9.1f} {ratio:>8.2f}x {goal:>6.1f}x  "
                    f"{'PASS' if ratio <= goal else 'MISS':<6}  {x['output']}/{len(x['hook'])}"
                )
                errors += [f"{hook} {size} {path}: {e}" for e in x["errors"][:3]]
    print()
    head = (
        f"{'size':>8}  {'warm.ask n':>10} {'ok':>4} {'<=50 ms':>8} {'p50 ms':>7} {'p95 ms':>7}"
        f" {'max ms':>7}  {'server ready s':>14}  server shutdown"
    )
    print(head)
    print("-" * (len(head) + 30))
    for size, r in results.items():
        a = r["asks"]
        p50, p95 = stats(a["times"])
        print(
            f"{size:>8,}  {len(a['times']):>10} {a['ok']:>4} {a['in_time']:>8} {p50:>7.1f}"
            f" {p95:>7.1f} {1000 * max(a['times']):>7.1f}  {r['ready_s']:>14.1f}  {r['stop']}"
        )
    print()
    print(
        "output = runs that printed context; warm.ask = the hook's semantic request (one prompt,"
        f" k={semantic.CANDIDATES}) from this process, 1 s deadline; <=50 ms = would have"
        " arrived within the hook's deadline."
    )
    for line in errors:
        print("error:", line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated corpus sizes")
    parser.add_argument("--runs", type=int, default=40, help="measured runs per hook (30+)")
    parser.add_argument("--asks", type=int, default=50, help="in-process warm.ask timings")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument(
        "--reuse", default="", help="the folder a --keep run left: its stores are measured again"
    )
    parser.add_argument(
        "--profile", action="store_true", help="also print a cProfile of one run per hook"
    )
    parser.add_argument("--map", action="store_true", help="build the repository's code map first")
    parser.add_argument(
        "--map-files", type=int, default=0,
        help="add this many generated source files to the repository, mapped first (--map)",
    )  # fmt: skip
    parser.add_argument(
        "--hooks", default="", help="only these events, comma-separated (PostToolUseFailure,...)"
    )
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if not os.environ.get(embed.ENV_MODEL_DIR) and DEFAULT_MODEL.is_dir():
        os.environ[embed.ENV_MODEL_DIR] = str(DEFAULT_MODEL)
    ok, why = embed.semantic_available()
    if not ok:
        raise SystemExit(f"the warm path needs the model: {why}")
    tmp = pathlib.Path(args.reuse or tempfile.mkdtemp(prefix="waymark-hooks-"))
    results = {}
    try:
        for size in [int(s) for s in args.sizes.split(",") if s.strip()]:
            results[size] = measure(size, tmp, args)
            log = pathlib.Path(os.environ["WAYMARK_HOME"], "hooks.log")
            if log.exists():
                print(f"hooks.log for {size:,}:", log.read_text(encoding="utf-8")[-1500:])
    finally:
        if args.keep or args.reuse:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print_tables(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
