"""Claude Code's prompt hook as a call into Waymark's MCP server (`"type": "mcp_tool"`, the
server's unlisted `hook` tool), as `waymark install` registers it beside the command hook."""

from __future__ import annotations

import glob
from pathlib import Path

from waymark.base import hookruns

from .test_hooks_clients import prepare, requests_text

WARNING = "charge() must stay idempotent"  # the file warning the prompt's packet carries
PROMPT = "Fix src/billing.py please"
CONTEXT = "UserPromptSubmit hook additional context"


def debug_log(result) -> str:
    (path,) = glob.glob(str(Path(result.run_dir) / "claude-config" / "debug" / "*.txt"))
    return Path(path).read_text(encoding="utf-8", errors="replace")


def prompt_runs() -> list[str]:
    return [r["outcome"] for r in hookruns.read() if r["event"] == "UserPromptSubmit"]


def run(clients, monkeypatch, tmp_path, hooks, **kw):
    run_dir = tmp_path / "run"
    prepare(clients, monkeypatch, run_dir)
    result = clients.run("claude", [{"text": "Looking."}], run_dir=run_dir, hooks=hooks,
                         prompt=PROMPT, extra_args=["--debug"], **kw)  # fmt: skip
    return requests_text(result)[0], debug_log(result)


def test_the_server_answers_the_prompt_hook_without_a_process(clients, monkeypatch, tmp_path):
    hooks = clients.hooks("claude", prompt_tool=True)
    hooks["UserPromptSubmit"][0]["hooks"] = [
        h for h in hooks["UserPromptSubmit"][0]["hooks"] if h["type"] == "mcp_tool"
    ]
    first, log = run(clients, monkeypatch, tmp_path, hooks)
    assert WARNING in first and first.count(CONTEXT) == 1
    assert "Hook UserPromptSubmit (waymark/hook) provided additionalContext" in log
    assert prompt_runs() == ["ok"]  # recorded as the hook's run, as a process records it


def test_with_both_routes_the_packet_arrives_once(clients, monkeypatch, tmp_path):
    first, log = run(clients, monkeypatch, tmp_path, clients.hooks("claude", prompt_tool=True))
    assert WARNING in first and first.count(CONTEXT) == 1
    assert "mcp_tool calling waymark/hook" in log
    assert sorted(prompt_runs()) == ["ok", "repeat"]  # one answered, the other stood down


def test_without_the_server_the_command_hook_still_brings_the_packet(
    clients, monkeypatch, tmp_path
):
    first, log = run(clients, monkeypatch, tmp_path, clients.hooks("claude", prompt_tool=True),
                     mcp_servers={})  # fmt: skip
    assert "MCP server 'waymark' not connected" in log
    assert WARNING in first and first.count(CONTEXT) == 1
    assert prompt_runs() == ["ok"]
