"""Does a Claude Code hook of `"type": "mcp_tool"` (a call into the already-running MCP
server, no process) beat a command hook? Measured in the real client through the harness.

One store per size (bench/hooks.py's: the synthetic corpus, rules, a checkpoint, vectors, a
git repository with capture on). For each route, sessions of real Claude Code (`claude -p
--input-format stream-json`, Waymark's MCP server connected) get one warm-up prompt, wait
for the server to hold the model, then `--prompts` more prompts, one after another, each
answered by the scripted model. The UserPromptSubmit hook is:
- command: Waymark's prompt hook as installed (`python -I -c "..." claude-code`), which
  relays to the running server (the warm path);
- mcp_tool: `{"type": "mcp_tool", "server": "waymark", "tool": "hook", ...}`, the server's
  unlisted `hook` tool answering the same packet, no process;
- floor: `python -I -c pass`, what any command hook pays before doing anything;
- both: the tool and the command hook side by side, as installed (the command the fallback
  when the server is not connected: whichever reaches Waymark first answers, the other
  says nothing);
- none: no UserPromptSubmit hook at all, what the client spends on a prompt anyway.
From Claude Code's own debug log, per prompt: `submit`, the whole prompt submission ("prompt.submit
settled in N ms", the client's hooks included), and `hook`, the hook alone (a command's
"finished with status 0 (N ms)"; for the tool, from "mcp_tool calling" to its "success"
line). Each timed prompt's model request is checked to carry the packet.

    WAYMARK_E2E_HARNESS=../shared/harness HARNESS_NODE_MODULES=.cache/harness/node_modules \\
        python bench/mcp_tool_hook.py [--sizes 10000,100000] [--sessions 3] [--prompts 8]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import pathlib
import random
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime

import hooks as hooks_bench
from tool_definitions import use_harness
from waymark.base import launch

ROUTES = ("none", "floor", "command", "mcp_tool", "both")
DONE = re.compile(r"UserPromptSubmit \[.*\] finished with status 0 \((\d+)ms\)")
SUBMIT = re.compile(r"prompt\.submit settled in ([\d.]+)ms")
MARK = "Waymark"  # every prompt packet names itself


def handlers(route: str) -> list[dict]:
    py = sys.executable
    if route == "floor":
        return [{"type": "command", "command": f"{py} -I -c pass"}]
    program = launch.program("user_prompt_submit")
    command = {"type": "command", "command": f'{py} -I -c "{program}" claude-code'}
    tool = {"type": "mcp_tool", "server": "waymark", "tool": "hook", "input": {
        "event": "UserPromptSubmit", "prompt": "${prompt}", "prompt_id": "${prompt_id}",
        "session_id": "${session_id}", "cwd": "${cwd}"}}  # fmt: skip
    return {"command": [command], "mcp_tool": [tool], "both": [tool, command]}.get(route, [])


def session(route: str, repo: pathlib.Path, home: str, prompts: list[str], run: pathlib.Path
            ) -> tuple[list[float], list[float], list[bool]]:  # fmt: skip
    """One Claude Code session: two warm-up prompts (a pause between them lets the server
    load), then `prompts`; per timed prompt the
    submission's and the hook's milliseconds and whether its request carried a packet."""
    from _harness import find_bin
    from run_claude import CLAUDE_CANDIDATES, claude_env
    from stub_llm import StubServer, request_text

    run.mkdir(parents=True)
    (run / "claude-config").mkdir()
    env = {"WAYMARK_HOME": home}
    if os.environ.get("WAYMARK_EMBED_MODEL_DIR"):
        env["WAYMARK_EMBED_MODEL_DIR"] = os.environ["WAYMARK_EMBED_MODEL_DIR"]
    hooks = handlers(route)
    settings = {"hooks": {"UserPromptSubmit": [{"hooks": hooks}]}} if hooks else {}
    (run / "settings.json").write_text(json.dumps(settings))
    server = {"command": sys.executable, "args": ["-m", "waymark", "mcp"], "env": env}
    (run / "mcp.json").write_text(json.dumps({"mcpServers": {"waymark": server}}))
    turns = [{"text": "Done."} for _ in range(len(prompts) + 2)]
    log = run / "stub_requests.jsonl"
    stub = StubServer({"turns": turns}, str(log))
    cmd = [find_bin("CLAUDE_BIN", CLAUDE_CANDIDATES), "-p", "--input-format", "stream-json",
           "--output-format", "stream-json", "--verbose", "--debug",
           "--settings", str(run / "settings.json"), "--mcp-config", str(run / "mcp.json"),
           "--strict-mcp-config", "--permission-mode", "bypassPermissions"]  # fmt: skip
    stub.start()
    proc = subprocess.Popen(
        cmd, cwd=repo, env=claude_env(run, stub.base_url, env), stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for n, text in enumerate(["Where are we?", "What is left to do?", *prompts]):
            message = {"type": "user", "message": {"role": "user", "content": text}}
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            for line in proc.stdout:
                if line.startswith("{") and json.loads(line).get("type") == "result":
                    break
            else:
                raise SystemExit(f"claude ended early ({route}); see {run}")
            if n == 0:
                time.sleep(8.0)  # the server loads the model and its vectors after the first
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        stub.stop()
    return _timings(run, route, len(prompts), request_text)


def _timings(run: pathlib.Path, route: str, n: int, request_text) -> tuple[list, list, list]:  # type: ignore[no-untyped-def]
    logs = sorted(glob.glob(str(run / "claude-config/debug/*.txt")), key=os.path.getmtime)
    lines = pathlib.Path(logs[-1]).read_text(encoding="utf-8", errors="replace").splitlines()
    submit = [float(m.group(1)) for line in lines for m in [SUBMIT.search(line)] if m]
    if route in ("mcp_tool", "both"):
        hook, start = [], None
        for line in lines:  # from the call to its answer (or, with nothing to add, the end)
            if "mcp_tool calling waymark/hook" in line:
                start = datetime.fromisoformat(line[:23])
            elif start and ("(UserPromptSubmit) success" in line or SUBMIT.search(line)):
                hook.append((datetime.fromisoformat(line[:23]) - start).total_seconds() * 1000)
                start = None
    else:
        hook = [float(m.group(1)) for line in lines for m in [DONE.search(line)] if m]
    requests = [json.loads(line) for line in (run / "stub_requests.jsonl").open()]
    main = [r for r in requests if r.get("kind") == "main"]
    carried = [MARK in _last_user(request_text(r)) for r in main]
    return submit[-n:], hook[-n:], carried[-n:]


def _last_user(text: str) -> str:
    """The request's text from its last prompt on (where the prompt's packet goes)."""
    return text[text.rfind("UserPromptSubmit hook additional context") :] if text else ""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--routes", default=",".join(ROUTES))
    args = parser.parse_args()
    use_harness()
    if not os.environ.get("WAYMARK_EMBED_MODEL_DIR") and hooks_bench.DEFAULT_MODEL.is_dir():
        os.environ["WAYMARK_EMBED_MODEL_DIR"] = str(hooks_bench.DEFAULT_MODEL)
    routes = args.routes.split(",")
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="waymark-mcp-hook-"))
    for size in (int(s) for s in args.sizes.split(",")):
        made = hooks_bench.setup(size, tmp, seed=7)
        home, repo = os.environ["WAYMARK_HOME"], made["repo"]
        rng = random.Random(size)
        found = {r: ([], [], []) for r in routes}  # type: dict[str, tuple[list, list, list]]
        for s in range(args.sessions):
            for route in routes:  # alternating, so each route meets the same machine
                prompts = rng.sample(made["prompts"], args.prompts)
                got = session(route, repo, home, prompts, tmp / f"{size}-{route}-{s}")
                for mine, more in zip(found[route], got, strict=True):
                    mine.extend(more)
        print(f"\n{size:,} memories: UserPromptSubmit in Claude Code (its debug log), "
              f"{args.sessions} sessions x {args.prompts} warm prompts per route")  # fmt: skip
        print(f"{'route':<9} {'submit p50':>10} {'p95':>7} {'hook p50':>9} {'p95':>7}  packets")
        for route, (submit, hook, carried) in found.items():
            packets = f"{sum(carried)}/{len(carried)}" if route not in ("none", "floor") else "-"
            print(f"{route:<9} {pct(submit, .5):>10.1f} {pct(submit, .95):>7.1f} "
                  f"{pct(hook, .5):>9.1f} {pct(hook, .95):>7.1f}  {packets}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
