"""An install made before the hooks and installers moved to the top level keeps working.

`fixtures/installed-before-layout` holds what `waymark install` wrote for Claude Code and
Codex at commit 201dceb (the last one with src/waymark/hooks and src/waymark/install), with
the interpreter, home and data paths as placeholders: the commands in those files must still
run, a re-run of `waymark install` must only add the hooks added since, and `waymark uninstall` must
remove exactly what that manifest recorded.
"""

from __future__ import annotations

import hashlib
import io
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from waymark.cli import main
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.projects import capture
from waymark.projects.resolve import resolve
from waymark.storage import connection as db

FIXTURE = Path(__file__).parent / "fixtures" / "installed-before-layout"
FILES = (".claude/settings.json", ".claude.json", ".codex/config.toml", ".codex/hooks.json")


@pytest.fixture
def old_install(tmp_path, monkeypatch, waymark_home):
    """HOME and the data folder as the old `waymark install` left them."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))

    def fill(text: str) -> str:
        return (
            text.replace("@PYTHON@", sys.executable)
            .replace("@HOME@", str(home))
            .replace("@DATA@", str(waymark_home))
        )

    for rel in FILES:
        target = home / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(fill((FIXTURE / "home" / rel).read_text(encoding="utf-8")), "utf-8")
    manifest = json.loads(fill((FIXTURE / "data" / "install-manifest.json").read_text("utf-8")))
    for entry in manifest["files"]:  # the hashes of the files as written at this path
        entry["sha256_after"] = hashlib.sha256(Path(entry["path"]).read_bytes()).hexdigest()
    waymark_home.mkdir(parents=True, exist_ok=True)
    (waymark_home / "install-manifest.json").write_text(json.dumps(manifest), "utf-8")
    return home


def claude_commands(home: Path) -> dict[str, str]:
    settings = json.loads((home / ".claude" / "settings.json").read_text("utf-8"))
    return {
        event: handler["command"]
        for event, groups in settings["hooks"].items()
        for group in groups
        for handler in group["hooks"]
    }


def test_the_hook_commands_an_old_install_wrote_still_run(old_install, repo, waymark_home):
    conn = db.connect()
    project = resolve(conn, str(repo))
    capture.set_enabled(conn, project, True)
    draft = make_draft(project, type="convention", content="Run make lint first", pinned=True)
    store.remember(conn, project, draft)
    conn.close()
    commands = claude_commands(old_install)
    assert set(commands) >= {"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}
    for event, command in commands.items():
        payload = {
            "session_id": "old-install",
            "cwd": str(repo),
            "hook_event_name": event,
            "source": "startup",
            "prompt": "how do we lint?",
            "tool_name": "Bash",
            "tool_input": {"command": "true"},
            "tool_response": {"stdout": ""},
        }
        done = subprocess.run(
            shlex.split(command), input=json.dumps(payload).encode(), capture_output=True
        )
        assert done.returncode == 0, (event, done.stderr)
        if event == "SessionStart":
            context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
            assert "Run make lint first" in context
    assert not (waymark_home / "hooks.log").exists() or "Error" not in (
        waymark_home / "hooks.log"
    ).read_text("utf-8")


def test_the_mcp_server_an_old_install_registered_still_answers(old_install):
    server = json.loads((old_install / ".claude.json").read_text("utf-8"))["mcpServers"]["waymark"]
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}},
    }
    done = subprocess.run(
        [server["command"], *server["args"]],
        input=(json.dumps(request) + "\n").encode(),
        capture_output=True,
        timeout=60,
    )
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "waymark"


def test_reinstalling_over_an_old_install_only_adds_the_hooks_added_since(old_install, capsys):
    """The old install predates PreToolUse, SubagentStart, PostCompact and SubagentStop and
    ran hooks with `-m`: a re-run adds those, moves the old hooks to today's `-c` launch, and
    touches nothing else."""
    before = {rel: (old_install / rel).read_bytes() for rel in FILES}
    old_claude = claude_commands(old_install)
    assert main(["install", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    changed = {f["path"] for f in report["files"] if f["status"] != "unchanged"}
    hooks = {str(old_install / ".claude/settings.json"), str(old_install / ".codex/hooks.json")}
    assert changed == hooks
    for rel in FILES:
        if str(old_install / rel) not in hooks:
            assert (old_install / rel).read_bytes() == before[rel]
    new_claude = claude_commands(old_install)
    assert set(new_claude) - set(old_claude) == {"PreToolUse", "SubagentStart", "PostCompact",
                                                 "SubagentStop"}  # fmt: skip
    for event, command in old_claude.items():
        module = command.split("-m waymark.hooks.")[1].split()[0]
        assert new_claude[event] == command.replace(
            f"-m waymark.hooks.{module}", f'-c "from waymark.hooks.{module} import main;main()"'
        )
    codex = json.loads((old_install / ".codex/hooks.json").read_text("utf-8"))["hooks"]
    assert "PreToolUse" in codex
    assert main(["install", "--json"]) == 0  # and a second re-run finds nothing to change
    again = json.loads(capsys.readouterr().out)
    assert {f["status"] for f in again["files"]} == {"unchanged"}


def test_uninstall_removes_what_an_old_manifest_recorded(old_install, capsys):
    assert main(["uninstall", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {f["status"] for f in report["files"]} == {"deleted"}
    assert [rel for rel in FILES if (old_install / rel).exists()] == []
