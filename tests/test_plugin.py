"""The plugin files for both clients, and the launcher they share."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

from waymark.installers.commands import HOOKS

ROOT = pathlib.Path(__file__).parents[1]
PLUGIN = ROOT / "plugin"
MODULES = {spec.event: spec.module for spec in HOOKS}
MATCHERS = {spec.event: spec.matcher for spec in HOOKS}


def load(path: pathlib.Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_manifests_and_marketplaces_agree():
    claude = load(PLUGIN / ".claude-plugin" / "plugin.json")
    codex = load(PLUGIN / ".codex-plugin" / "plugin.json")
    assert claude["name"] == codex["name"] == "waymark"
    assert claude["version"] == codex["version"]
    assert "hooks" not in claude  # Claude Code loads hooks/hooks.json itself; naming it doubles
    assert codex["hooks"] == "./hooks/codex-hooks.json"
    assert codex["mcpServers"] == "./.codex.mcp.json"
    market = load(ROOT / ".claude-plugin" / "marketplace.json")
    assert market["plugins"][0]["source"] == "./plugin"
    agents = load(ROOT / ".agents" / "plugins" / "marketplace.json")
    assert agents["plugins"][0]["source"] == {"source": "local", "path": "./plugin"}


def test_each_client_gets_its_own_events_and_client_name():
    for name, client, events in (
        ("hooks.json", "claude-code", set(MODULES)),
        ("codex-hooks.json", "codex", set(MODULES) - {"PostToolUseFailure"}),
    ):
        hooks = load(PLUGIN / "hooks" / name)["hooks"]
        assert set(hooks) == events
        for event, groups in hooks.items():
            command = groups[0]["hooks"][0]["command"]
            assert command == (
                f'sh "${{CLAUDE_PLUGIN_ROOT}}/scripts/waymark-run" {MODULES[event]} {client}'
            )
            assert 0 < groups[0]["hooks"][0]["timeout"] <= 10
            assert groups[0].get("matcher") == MATCHERS[event]


def test_mcp_entries_start_the_server_without_a_plugin_root_in_codex():
    claude = load(PLUGIN / ".mcp.json")["mcpServers"]["waymark"]
    assert claude["args"] == ["${CLAUDE_PLUGIN_ROOT}/scripts/waymark-run", "mcp"]
    codex = load(PLUGIN / ".codex.mcp.json")["mcpServers"]["waymark"]
    assert "CLAUDE_PLUGIN_ROOT" not in json.dumps(codex)  # Codex does not expand it there
    assert "cwd" not in codex  # the server must run in the session's project
    assert "WAYMARK_HOME" in codex["env_vars"]


def run_launcher(*args, env):
    return subprocess.run(
        ["sh", str(PLUGIN / "scripts" / "waymark-run"), *args],
        input=b"{}",
        capture_output=True,
        env=env,
        timeout=30,
        cwd=env["HOME"],  # no repository: nothing to capture
    )


def test_the_launcher_runs_a_hook_with_waymarks_python(tmp_path):
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "WAYMARK_PYTHON": sys.executable,
        "WAYMARK_HOME": str(tmp_path / "home"),
    }
    done = run_launcher("session_start", "claude-code", env=env)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_without_waymark_installed_hooks_fail_open_and_mcp_says_why(tmp_path):
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    hook = run_launcher("stop", "codex", env=env)
    assert (hook.returncode, hook.stdout) == (0, b"") and b"install.sh" in hook.stderr
    mcp = run_launcher("mcp", env=env)
    assert mcp.returncode == 1 and b"not installed" in mcp.stderr
