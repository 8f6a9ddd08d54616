"""What Waymark's MCP tool definitions cost in every model request, as the real clients send
them: Claude Code and Codex (../shared/harness, its pinned CLIs) each run one turn with the
server registered; the tool entries of the first model request (name, description, schema,
as each client shapes them) are counted at the tokenizer-calibrated JSON_CHARS_PER_TOKEN,
per tool and in all. Target (#30): at most 1,000 tokens in each client.

    WAYMARK_E2E_HARNESS=../shared/harness HARNESS_NODE_MODULES=.cache/harness/node_modules \\
        python bench/tool_definitions.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from waymark.packets.sessions import JSON_CHARS_PER_TOKEN

TARGET = 1000


def ours(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Waymark's entries among a request's tools (Codex groups MCP tools in a namespace)."""
    return [t for t in body.get("tools") or () if "waymark" in str(t.get("name", ""))]


def tokens(value: Any) -> int:
    sent = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return int(-(-len(sent) // JSON_CHARS_PER_TOKEN))


def per_tool(client: str, entries: list[dict[str, Any]]) -> dict[str, int]:
    if client == "codex":
        entries = [sub for t in entries for sub in t.get("tools") or [t]]
    return {str(t.get("name", "?")).rsplit("__", 1)[-1]: tokens(t) for t in entries}


def use_harness() -> None:
    """Put ../shared/harness (WAYMARK_E2E_HARNESS) on the path, or exit saying how."""
    harness = os.environ.get("WAYMARK_E2E_HARNESS", "")
    if not harness or not Path(harness, "run_claude.py").is_file():
        raise SystemExit("WAYMARK_E2E_HARNESS must name ../shared/harness (and "
                         "HARNESS_NODE_MODULES an `npm ci` of it; see .ci/run)")  # fmt: skip
    sys.path.insert(0, harness)


def main() -> None:
    use_harness()
    from run_claude import run_claude
    from run_codex import run_codex

    tmp = Path(tempfile.mkdtemp(prefix="waymark-tools-"))
    script = tmp / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "Nothing to do."}]}), encoding="utf-8")
    env = {"WAYMARK_HOME": str(tmp / "home")}
    servers = {"waymark": {"command": sys.executable, "args": ["-m", "waymark", "mcp"],
                           "env": env}}  # fmt: skip
    print(f"Waymark's MCP tool definitions per request, tokens ({JSON_CHARS_PER_TOKEN:.2f} JSON "
          "characters a token)")  # fmt: skip
    for client, runner in (("claude", run_claude), ("codex", run_codex)):
        result = runner("Say nothing.", str(script), mcp_servers=servers, env=env,
                        run_dir=str(tmp / client))  # fmt: skip
        if result.returncode != 0 or not result.main_requests:
            raise SystemExit(f"{client} did not run: {result.stderr[-2000:]}")
        entries = ours(result.main_requests[0]["body"])
        each = per_tool(client, entries)
        total = tokens(entries)
        said = ", ".join(f"{name} {n}" for name, n in each.items())
        verdict = "PASS" if total <= TARGET else "MISS"
        print(f"{client:<7} {total:>5} tokens (target {TARGET}: {verdict}); {said}")
        if os.environ.get("WAYMARK_TOOLS_DUMP"):
            Path(os.environ["WAYMARK_TOOLS_DUMP"], f"{client}.json").write_text(
                json.dumps(entries, indent=1), encoding="utf-8"
            )


if __name__ == "__main__":
    main()
