"""Does a Claude Code hook of `"type": "mcp_tool"` (a call into the already-running MCP
server, no process) beat a command hook? Measured in the real client through the harness.

Each round runs `claude -p` twice on one store, with a UserPromptSubmit hook that is:
- command: Waymark's own prompt hook, as installed (`python -I -c "from waymark.hooks.user_prompt_submit
  import main;main()" claude-code`), the MCP server running beside it (the warm path);
- floor: `python -I -c pass`, what any command hook pays before doing anything;
- mcp_tool: Waymark's `recall` tool called by Claude Code itself with the prompt
  (`{"query": "${prompt}", "limit": 3, "include_session": false}`): the nearest thing to a
  prompt packet the server exposes without a ninth tool.
Claude Code's debug log gives each hook's time: "finished with status 0 (N ms)" for a command,
the time between "mcp_tool calling" and the hook's "success" line for the tool. One prompt per
session (`-p`), so the tool call is the server's first of its session.

    WAYMARK_E2E_HARNESS=../shared/harness HARNESS_NODE_MODULES=.cache/harness/node_modules \\
        python bench/mcp_tool_hook.py [--rounds 10]
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import sys
import tempfile
from datetime import datetime
from pathlib import Path

from tool_definitions import use_harness
from waymark.base import launch

HOOK = "user_prompt_submit"
DONE = re.compile(r"UserPromptSubmit \[.*\] finished with status 0 \((\d+)ms\)")


def hook_ms(run: str, mode: str) -> list[float]:
    logs = sorted(glob.glob(run + "/claude-config/debug/*.txt"), key=os.path.getmtime)
    lines = Path(logs[-1]).read_text(encoding="utf-8", errors="replace").splitlines()
    if mode != "mcp_tool":
        return [float(m.group(1)) for line in lines for m in [DONE.search(line)] if m]
    at = lambda line: datetime.fromisoformat(line[:23])  # noqa: E731
    starts = [at(line) for line in lines if "mcp_tool calling waymark/recall" in line]
    ends = [
        at(line) for line in lines if "Hook UserPromptSubmit (UserPromptSubmit) success" in line
    ]
    return [(e - s).total_seconds() * 1000 for s, e in zip(starts, ends, strict=False)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    use_harness()
    from run_claude import run_claude

    tmp = Path(tempfile.mkdtemp(prefix="waymark-mcp-hook-"))
    script = tmp / "script.json"
    script.write_text('{"turns": [{"text": "Done."}]}', encoding="utf-8")
    env = {"WAYMARK_HOME": str(tmp / "home")}
    py = sys.executable
    servers = {"waymark": {"command": py, "args": ["-m", "waymark", "mcp"], "env": env}}
    hooks = {
        "command": {"type": "command", "command": f'{py} -I -c "{launch.program(HOOK)}"'
                    " claude-code"},  # fmt: skip
        "floor": {"type": "command", "command": f"{py} -I -c pass"},
        "mcp_tool": {"type": "mcp_tool", "server": "waymark", "tool": "recall",
                     "input": {"query": "${prompt}", "limit": 3, "include_session": False}},
    }  # fmt: skip
    found: dict[str, list[float]] = {mode: [] for mode in hooks}
    for n in range(args.rounds):
        for mode, hook in hooks.items():
            run = str(tmp / f"{mode}-{n}")
            result = run_claude(
                "Where do invoices get generated?", str(script),
                hooks={"UserPromptSubmit": [{"hooks": [hook]}]}, mcp_servers=servers, env=env,
                extra_args=["--debug"], run_dir=run,
            )  # fmt: skip
            if result.returncode != 0:
                raise SystemExit(f"claude failed ({mode}): {result.stderr[-2000:]}")
            found[mode] += hook_ms(run, mode)
    print(f"UserPromptSubmit hook time in Claude Code (its debug log), {args.rounds} sessions each")
    for mode, times in found.items():
        times.sort()
        if not times:
            print(f"{mode:<9} no timing found")
            continue
        p50, worst = times[len(times) // 2], times[-1]
        print(f"{mode:<9} n={len(times):<3} p50 {p50:6.1f} ms  max {worst:6.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
