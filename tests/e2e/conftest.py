"""Real Claude Code and Codex sessions against a scripted stub model (../shared/harness).

WAYMARK_E2E_HARNESS points at the harness folder and HARNESS_NODE_MODULES at an `npm ci` of
its package.json (`.ci/run` does both). Without them these tests skip, saying why.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

HARNESS = os.environ.get("WAYMARK_E2E_HARNESS", "")
NODE_MODULES = os.environ.get("HARNESS_NODE_MODULES", "")


def missing() -> str | None:
    if not HARNESS or not Path(HARNESS, "run_claude.py").is_file():
        return "WAYMARK_E2E_HARNESS is not set to ../shared/harness (real-client tests need it)"
    if not NODE_MODULES or not Path(NODE_MODULES, ".bin").is_dir():
        return "HARNESS_NODE_MODULES is not set to an `npm ci` of the harness (see .ci/run)"
    return None


@dataclass
class Clients:
    """Runs one real session of either client with Waymark's MCP server registered."""

    home: Path
    tmp: Path

    def mcp_servers(self, late_s: float = 0) -> dict[str, Any]:
        """Waymark's server as the client starts it; `late_s`: the server starts that late,
        as on a busy machine or beside ten other servers starting."""
        env = {"WAYMARK_HOME": str(self.home)}
        if os.environ.get("WAYMARK_EMBED_MODEL_DIR"):
            env["WAYMARK_EMBED_MODEL_DIR"] = os.environ["WAYMARK_EMBED_MODEL_DIR"]
        args = ["-m", "waymark", "mcp"]
        if late_s:
            code = (f"import os, sys, time; time.sleep({late_s}); "
                    "os.execv(sys.executable, [sys.executable, '-m', 'waymark', 'mcp'])")  # fmt: skip
            args = ["-c", code]
        return {"waymark": {"command": sys.executable, "args": args, "env": env}}

    def env(self) -> dict[str, str]:
        """The client's environment additions; hooks inherit them."""
        env = {"WAYMARK_HOME": str(self.home)}
        if os.environ.get("WAYMARK_EMBED_MODEL_DIR"):
            env["WAYMARK_EMBED_MODEL_DIR"] = os.environ["WAYMARK_EMBED_MODEL_DIR"]
        return env

    def hooks(self, client: str, *, prompt_tool: bool = False) -> dict[str, Any]:
        """Waymark's hooks in the clients' shared hooks schema, as `waymark install` writes
        them (its events, matchers and timeouts), run by this interpreter; `prompt_tool`
        adds the prompt hook's call to the MCP server (Claude Code)."""
        from waymark.installers.commands import CLAUDE_ONLY, HOOKS, hook_command, tool_hook

        name = "claude-code" if client == "claude" else "codex"
        out: dict[str, Any] = {}
        for spec in HOOKS:
            if client != "claude" and spec.event in CLAUDE_ONLY:
                continue
            handler = {
                "type": "command",
                "timeout": 10,
                "command": hook_command(sys.executable, spec.module, name),
            }
            group: dict[str, Any] = {"matcher": spec.matcher} if spec.matcher else {}
            handlers = [handler]
            if prompt_tool and spec.event == "UserPromptSubmit":
                handlers.append(tool_hook(10))
            out[spec.event] = [{**group, "hooks": handlers}]
        return out

    def script(self, name: str, turns: list[dict[str, Any]]) -> str:
        path = self.tmp / f"{name}.json"
        path.write_text(json.dumps({"turns": turns}), encoding="utf-8")
        return str(path)

    def run(self, client: str, turns: list[dict[str, Any]], *, run_dir: Path, **kw: Any) -> Any:
        from run_claude import run_claude
        from run_codex import run_codex

        # a name of its own: two sessions started at once must never share a script
        script = self.script(f"{client}-{uuid.uuid4().hex}", turns)
        kw.setdefault("mcp_servers", self.mcp_servers())
        kw["env"] = {**self.env(), **kw.get("env", {})}
        runner = run_claude if client == "claude" else run_codex
        prompt = kw.pop("prompt", "Continue the task.")
        check = kw.pop("check", True)  # False: the test ends the session itself
        result = runner(prompt, script, run_dir=str(run_dir), **kw)
        assert result.returncode == 0 or not check, result.stderr[-3000:]
        return result


def git_project(project_dir: Path, files: dict[str, str]) -> Path:
    """A git repository with `files` committed: the project a session works in."""
    for rel, text in files.items():
        (project_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (project_dir / rel).write_text(text, encoding="utf-8")
    git = ["git", "-C", str(project_dir), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    return project_dir


def enabled_project(clients: Clients, monkeypatch: Any, project_dir: Path) -> Any:
    """Point this test at the clients' data home and enable capture in `project_dir`."""
    from waymark.projects import capture
    from waymark.projects.resolve import resolve
    from waymark.storage import connection as db

    monkeypatch.setenv("WAYMARK_HOME", str(clients.home))
    conn = db.connect()
    project = resolve(conn, str(project_dir))
    capture.set_enabled(conn, project, True)
    return conn, project


def tool_texts(result: Any) -> list[str]:
    from stub_llm import tool_results

    return [text for rec in result.main_requests for _, text in tool_results(rec)]


def make_clients(tmp: Path) -> Clients:
    """Clients whose data home and scripts are under `tmp` (skips without the harness)."""
    reason = missing()
    if reason:
        pytest.skip(reason)
    if HARNESS not in sys.path:
        sys.path.insert(0, HARNESS)
    return Clients(home=tmp / "waymark-home", tmp=tmp)


@pytest.fixture
def clients(tmp_path: Path) -> Clients:
    return make_clients(tmp_path)


def two_worktrees(tmp_path: Path) -> tuple[Path, Path]:
    """The repository in one run's project folder, and a worktree of it (branch `two`) in the
    other's: the folders the harness runs each client in."""
    one = git_project(tmp_path / "one" / "project", {"src/app.py": "def main():\n    return 1\n"})
    two = tmp_path / "two" / "project"
    two.parent.mkdir(parents=True)
    subprocess.run(["git", "-C", str(one), "worktree", "add", "-q", "-b", "two", str(two)],
                   check=True)  # fmt: skip
    return one, two


KILLED = "test_a_killed_sessions_lease_lapses_and_another_agent_takes_its_task"


@dataclass
class Killed:
    """A Claude Code session that claimed a task, saved where it got to, and was killed."""

    clients: Clients
    one: Path
    two: Path
    task_id: str
    step: str  # the next action it saved
    returncode: int
    claim: dict[str, Any]  # the task's claim right after the kill


@pytest.fixture(scope="session", autouse=True)
def killed_first(request: Any, tmp_path_factory: Any) -> Iterator[Killed | None]:
    """The session tests/e2e/test_lease_clients.py kills, started and killed before the first
    real-client test: its lease (a minute, the shortest the setting allows) runs out while
    the others run, so that test waits only for what is left of it. Nothing when that test
    is not among those selected."""
    if not any(item.name == KILLED for item in request.session.items) or missing():
        yield None
        return
    from waymark import settings
    from waymark.handoff import checkpoints, tasks

    tmp = tmp_path_factory.mktemp("killed")
    clients = make_clients(tmp)
    one, two = two_worktrees(tmp)
    with pytest.MonkeyPatch.context() as patch:
        conn, project = enabled_project(clients, patch, one)
        settings.set_value(conn, "task.lease_minutes", 1)
        task = checkpoints.create(conn, project, {"objective": "Port the importer"},
                                  checkpoints.Origin(actor="user", client="cli"), open_task=True)  # fmt: skip
    step = "wire the lexer's EOF check into the importer"
    pids = tmp / "pids"
    script = [
        {"tool": "mcp__waymark__checkpoint",
         "input": {"operation": "claim", "checkpoint_id": task.id}},
        {"tool": "mcp__waymark__checkpoint",
         "input": {"operation": "revise", "checkpoint_id": task.id,
                   "expected_revision_id": task.revision.id,
                   "progress": "the importer reads the old format", "next_action": step}},
        # the client's process is the shell's parent; the shell is in a session of its own
        {"shell": f"echo $PPID $$ > {pids}.tmp && mv {pids}.tmp {pids} && sleep 170"},
        {"text": "Done."},
    ]  # fmt: skip
    died: dict[str, Any] = {}

    def holder() -> None:
        died["result"] = clients.run("claude", script, run_dir=one.parent, check=False,
                                     hooks=clients.hooks("claude"), timeout=175)  # fmt: skip

    session = threading.Thread(target=holder)
    session.start()
    for _ in range(1200):  # the shell turn comes after the claim and the save
        if pids.exists() or not session.is_alive():
            break
        time.sleep(0.1)
    if pids.exists():
        client_pid, shell_pid = (int(p) for p in pids.read_text().split())
        os.killpg(os.getpgid(client_pid), signal.SIGKILL)  # the client, its hooks and servers
        os.killpg(os.getpgid(shell_pid), signal.SIGKILL)
    session.join(180)
    claim = tasks.claim_view(conn, task.id)
    conn.close()
    result = died.get("result")
    yield Killed(clients, one, two, task.id, step, result.returncode if result else -1, claim)
