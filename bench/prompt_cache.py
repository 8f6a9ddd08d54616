"""What Waymark does to the provider's prompt cache, in the real clients and through the proxy.

One scripted session of three prompts (the second and third resume the first) with reads,
edits, commands, a failure, a subagent and a save, run in real Claude Code and real Codex
through ../shared/harness against its scripted model: once with Waymark installed (its hooks
and MCP server, a project with memories that every hook has something to say about: a file
warning, a decision, an active checkpoint, a command that failed before) and once without.
For each model request, the share of its bytes that repeat the previous request of the same
conversation (what a prompt cache can reuse), and where the two first differ
(bench/cache_prefix.py). Resuming is one more pair: the last request before it against the
first after it. Then the memory proxy the same way, with no hooks: Claude Code (Anthropic
Messages) and Codex (OpenAI Responses) with their base URL at `waymark proxy`, and a scripted
append-only conversation in Chat Completions (the upstream: tests/upstream.py).

    python bench/prompt_cache.py [--only claude,codex,proxy] [--keep]

Goal (issue #49): with Waymark no request differs from the previous one before the point
where the client itself appends (every pair appends, as without it), the same on resume.
Needs WAYMARK_E2E_HARNESS and HARNESS_NODE_MODULES as the tests do (.ci/run sets both).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Any

import cache_prefix

ROOT = pathlib.Path(__file__).resolve().parents[1]
HARNESS = os.environ.get("WAYMARK_E2E_HARNESS", str(ROOT.parent / "shared" / "harness"))
FILES = {
    "src/billing.py": "def total(cents):\n    return sum(cents)\n",
    "tests/test_billing.py": "from src.billing import total\nassert total([1, 2]) == 3\n",
    "README.md": "# shop\n",
}
WARNING = "billing.py: totals are integer cents, never floats"
DECISION = "Money is always integer cents in billing; floats were rejected for rounding"
NEXT = "make billing totals round half to even"
FAILED = "ls ./no-such-dir-xyz"
PROMPTS = ("Fix the rounding in billing totals.", "Add a test for the rounding.",
           "What is left for billing?")  # fmt: skip


def edit(client: str, path: str, text: str) -> dict[str, Any]:
    if client == "claude":
        return {"tool": "Write", "input": {"file_path": path, "content": text}}
    lines = "".join(f"+{line}\n" for line in text.splitlines())
    patch = (
        f"*** Begin Patch\n*** Delete File: {path}\n*** Add File: {path}\n{lines}*** End Patch\n"
    )
    return {"shell": f"apply_patch <<'EOF'\n{patch}EOF\n"}


def save(waymark: bool, n: int) -> dict[str, Any]:
    """The handoff (Waymark's tool), or a plain command in its place without Waymark."""
    if not waymark:
        return {"shell": "true"}
    return {"tool": "mcp__waymark__checkpoint",
            "input": {"operation": "create", "objective": "Billing rounding",
                      "progress": f"step {n} done", "next_action": NEXT}}  # fmt: skip


def scripts(client: str, waymark: bool) -> list[list[dict[str, Any]]]:
    """The three prompts' turns, in the order the requests come (a subagent's two among
    them: it starts together with a pause of its lead's, so its requests come first)."""
    sub = ({"tool": "Agent", "input": {"description": "review", "prompt": "Review billing.",
                                       "subagent_type": "general-purpose"}}
           if client == "claude" else
           {"tool": "spawn_agent", "input": {"message": "Review billing."}})  # fmt: skip
    return [
        [
            {"shell": "cat src/billing.py"},
            edit(client, "src/billing.py", "def total(cents):\n    return int(sum(cents))\n"),
            {"shell": FAILED},
            {"shell": "python3 -c 'print(1)'"},
            {"calls": [sub, {"shell": "sleep 5"}]},
            {"shell": "cat README.md"},  # the subagent
            {"text": "Reviewed."},  # the subagent
            save(waymark, 1),
            {"text": "Fixed the rounding."},
        ],
        [
            edit(client, "tests/test_billing.py", "assert round(2.5) == 2\n"),
            {"shell": "python3 tests/test_billing.py"},
            save(waymark, 2),
            {"text": "Added the test."},
        ],
        [{"shell": "git status --short"}, {"text": "The rounding is done."}],
    ]


def project(tmp: pathlib.Path, waymark: bool) -> tuple[pathlib.Path, dict[str, str]]:
    """The project folder (in the harness's run folder) and the environment for the client."""
    run = tmp / "run"
    repo = run / "project"
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    git = ["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    home = tmp / "waymark-home"
    env = {"WAYMARK_HOME": str(home)}
    if not waymark:
        return repo, env
    before = os.environ.get("WAYMARK_HOME")
    os.environ["WAYMARK_HOME"] = str(home)
    try:
        seed(repo)
    finally:
        if before is None:
            os.environ.pop("WAYMARK_HOME", None)
        else:
            os.environ["WAYMARK_HOME"] = before
    return repo, env


def seed(repo: pathlib.Path) -> None:
    """Capture on, and something for every hook to say: a file warning, a decision, an
    active checkpoint, a command that failed in an earlier session."""
    from waymark.handoff import checkpoints, ledger
    from waymark.memories import store
    from waymark.memories.draft import make_draft
    from waymark.projects import capture
    from waymark.projects.resolve import resolve
    from waymark.storage import connection as db

    conn = db.connect()
    proj = resolve(conn, str(repo))
    capture.set_enabled(conn, proj, True)
    store.remember(conn, proj, make_draft(proj, type="warning", content=WARNING, scope="file",
                                          target="src/billing.py"))  # fmt: skip
    store.remember(conn, proj, make_draft(proj, type="decision", content=DECISION))
    checkpoints.create(conn, proj, {"objective": "Billing rounding", "next_action": NEXT})
    ledger.record_tool(conn, proj, "an-earlier-session", "claude-code", command=FAILED,
                       failed=True, exit_code=2, tool_name="Bash",
                       error="ls: cannot access './no-such-dir-xyz': No such file or directory")  # fmt: skip
    conn.close()


def hooks(client: str) -> dict[str, Any]:
    """Waymark's hooks as `waymark install` writes them, run by this interpreter."""
    from waymark.installers.commands import CLAUDE_ONLY, HOOKS, hook_command

    name = "claude-code" if client == "claude" else "codex"
    out: dict[str, Any] = {}
    for spec in HOOKS:
        if client != "claude" and spec.event in CLAUDE_ONLY:
            continue
        handler = {"type": "command", "timeout": 10,
                   "command": hook_command(sys.executable, spec.module, name)}  # fmt: skip
        out[spec.event] = [{**({"matcher": spec.matcher} if spec.matcher else {}),
                            "hooks": [handler]}]  # fmt: skip
    return out


def session(client: str, tmp: pathlib.Path, waymark: bool, via: str | None = None) -> dict:
    """The three prompts in one session; `via`: "proxy" points the client at `waymark proxy`
    (no hooks, no MCP server). The requests of each run, in order."""
    from run_claude import run_claude
    from run_codex import run_codex

    repo, env = project(tmp, waymark or via == "proxy")
    servers = {"waymark": {"command": sys.executable, "args": ["-m", "waymark", "mcp"],
                           "env": env}} if waymark and via is None else {}  # fmt: skip
    runs: list[list[dict]] = []
    proxies: list[subprocess.Popen] = []

    def point_at_proxy(run: pathlib.Path, client_env: dict[str, str]) -> None:
        if via != "proxy":
            return
        from proxy import start_proxy  # bench/proxy.py

        if client == "claude":
            proc, url = start_proxy(repo, client_env["ANTHROPIC_BASE_URL"], {**client_env, **env})
            client_env["ANTHROPIC_BASE_URL"] = url
        else:
            config = run / "codex-home" / "config.toml"
            text = config.read_text(encoding="utf-8")
            stub = re.search(r'base_url = "(http://127\.0\.0\.1:\d+)/v1"', text)
            assert stub, text
            proc, url = start_proxy(repo, stub.group(1), {**client_env, **env})
            config.write_text(text.replace(stub.group(0), f'base_url = "{url}/v1"'),
                              encoding="utf-8")  # fmt: skip
        proxies.append(proc)

    session_id = None
    for n, turns in enumerate(scripts(client, waymark and via is None)):
        script = tmp / f"script{n}.json"
        script.write_text(json.dumps({"turns": turns}), encoding="utf-8")
        extra: list[str] = []
        if n and client == "claude":
            extra = ["--resume", str(session_id)]
        elif n:
            extra = ["resume", "--last"]
        runner = run_claude if client == "claude" else run_codex
        kw: dict[str, Any] = {"hooks": hooks(client)} if waymark and via is None else {}
        try:
            done = runner(PROMPTS[n], str(script), run_dir=str(tmp / "run"), env=env,
                          mcp_servers=servers, extra_args=extra, before_launch=point_at_proxy,
                          **kw)  # fmt: skip
        finally:
            for proc in proxies:
                proc.terminate()
                proc.wait(timeout=20)
            proxies.clear()
        if done.returncode != 0:
            raise SystemExit(f"{client} run {n} failed: {done.stderr[-2000:]}")
        if client == "claude" and n == 0:
            session_id = done.output["session_id"]
        runs.append([r["body"] for r in done.main_requests])
    return {"runs": runs}


def chat_through_proxy(tmp: pathlib.Path, turns: int = 8) -> dict:
    """A Chat Completions conversation that only appends, through `waymark proxy` to a
    scripted upstream: what the upstream got, in order, as one run."""
    import httpx

    sys.path.insert(0, str(ROOT / "tests"))
    from proxy import start_proxy  # bench/proxy.py
    from upstream import Upstream

    repo, env = project(tmp, True)
    upstream = Upstream()
    proc, url = start_proxy(repo, upstream.url, {**os.environ, **env})
    history: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    asked = [PROMPTS[n % len(PROMPTS)] + f" ({n})" for n in range(turns)]
    try:
        with httpx.Client(timeout=30) as client:
            for prompt in asked:
                history.append({"role": "user", "content": prompt})
                body = {"model": "m", "stream": False, "messages": history}
                answer = client.post(f"{url}/v1/chat/completions", json=body).json()
                history.append(answer["choices"][0]["message"])
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        upstream.stop()
    return {"runs": [upstream.bodies()]}


def measured(runs: list[list[dict]]) -> dict[str, Any]:
    """Pairs within the session's conversations, and each resume as one more pair: the last
    request of the conversation the run began against the next run's first request."""
    bodies = [b for run in runs for b in run]
    found = cache_prefix.pairs(bodies)
    resumes = []
    start = 0
    for n in range(1, len(runs)):
        start += len(runs[n - 1])
        lead = cache_prefix.conversation(runs[n - 1][0])
        last = [b for b in runs[n - 1] if cache_prefix.conversation(b) == lead][-1]
        resumes.append(cache_prefix.compare(start, cache_prefix.segments(last),
                                            cache_prefix.segments(runs[n][0])))  # fmt: skip
    return {"requests": len(bodies), **cache_prefix.summary(found),
            "resume": cache_prefix.summary(resumes)}  # fmt: skip


def row(name: str, found: dict[str, Any]) -> str:
    resume = found["resume"]
    resumed = f"{resume['appends']}/{resume['pairs']}" if resume["pairs"] else "-"
    breaks = "; ".join(f"#{i} {where} ({whose}, kept {kept:.0%})"
                       for i, where, whose, kept in found["breaks"] + resume["breaks"])  # fmt: skip
    return (f"{name:<26} {found['requests']:>8} {found['appends']:>4}/{found['pairs']:<4} "
            f"{found['kept']:>7.1%} {found['least']:>7.1%} {resumed:>7}  {breaks or '-'}")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="claude,codex,proxy")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    nodes = os.environ.get("HARNESS_NODE_MODULES", "")
    if not pathlib.Path(HARNESS, "run_claude.py").is_file() or not nodes:
        raise SystemExit("set WAYMARK_E2E_HARNESS (../shared/harness) and HARNESS_NODE_MODULES"
                         " (an `npm ci` of its package.json), as .ci/run does")  # fmt: skip
    sys.path.insert(0, HARNESS)
    wanted = args.only.split(",")
    cases: list[tuple[str, Any]] = []
    for client in ("claude", "codex"):
        if client in wanted:
            cases.append((f"{client} without Waymark", lambda t, c=client: session(c, t, False)))
            cases.append((f"{client} with Waymark", lambda t, c=client: session(c, t, True)))
    if "proxy" in wanted:
        cases.append(("claude via the proxy", lambda t: session("claude", t, False, "proxy")))
        cases.append(("codex via the proxy", lambda t: session("codex", t, False, "proxy")))
        cases.append(("chat via the proxy", chat_through_proxy))
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="waymark-cache-"))
    print("kept: of the bytes of each request, those the next request of its conversation "
          "repeats from its start (what a prompt cache reuses); appends: pairs where that is "
          "all of it; resumed: the same for each resume")  # fmt: skip
    print(f"{'session':<26} {'requests':>8} {'appends':>9} {'kept':>7} {'least':>7} "
          f"{'resumed':>7}  first difference of the others (request, segment, whose)")  # fmt: skip
    try:
        for n, (name, run) in enumerate(cases):
            print(row(name, measured(run(tmp / f"case{n}")["runs"])), flush=True)
    finally:
        if args.keep:
            print(f"kept: {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
