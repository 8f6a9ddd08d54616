"""The memory proxy with real agents: Claude Code and Codex with no Waymark hooks and no MCP
server, their base URL pointed at `waymark proxy`, which forwards to the harness's scripted
model. The model's requests carry the project's memory; the session's tool call is recorded
in the ledger; the agent finishes as it would without the proxy.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from .conftest import Clients, enabled_project, git_project

FILES = {"src/app.py": "def run():\n    return 1\n", "README.md": "# app\n"}
NEXT = "wire the retry queue into src/app.py"


class Proxy:
    """`waymark proxy` started in the project, as a user starts it."""

    def __init__(self, project: Path, upstream: str, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "waymark", "proxy", "--port", "0", "--upstream", upstream,
             "--json"],
            cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        lines: list[str] = []
        while not lines or lines[-1].rstrip() != "}":
            line = self.proc.stdout.readline() if self.proc.stdout else ""
            assert line, f"the proxy exited: {''.join(lines)}"
            lines.append(line)
        self.url = json.loads("".join(lines))["url"]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()


def _prepare(clients: Clients, monkeypatch, project: Path) -> None:
    from waymark.handoff import checkpoints

    git_project(project, FILES)
    conn, found = enabled_project(clients, monkeypatch, project)
    checkpoints.create(conn, found, {"objective": "Retries", "next_action": NEXT})
    conn.close()


def _check(clients: Clients, monkeypatch, result, session_client: str = "proxy") -> None:
    from stub_llm import request_text

    from waymark.storage import connection as db

    first = request_text(result.main_requests[0])
    assert 'waymark-memory kind=\\"session-start' in first and NEXT in first  # JSON-escaped
    monkeypatch.setenv("WAYMARK_HOME", str(clients.home))
    conn = db.connect()
    steps = conn.execute(
        "SELECT s.tool, s.target FROM session_steps s JOIN sessions x ON x.id = s.session_id"
        " WHERE x.client = ?",
        (session_client,),
    ).fetchall()
    conn.close()
    assert any("echo" in (target or "") for _, target in steps), steps


def _through_proxy(clients: Clients, monkeypatch, tmp_path: Path, client: str) -> None:
    """One real session of `client` with its base URL pointed at a proxy in its project."""
    proxies: list[Proxy] = []

    def point_at_proxy(run: Path, env: dict[str, str]) -> None:
        _prepare(clients, monkeypatch, run / "project")
        if client == "claude":
            proxy = Proxy(run / "project", env["ANTHROPIC_BASE_URL"], {**env, **clients.env()})
            env["ANTHROPIC_BASE_URL"] = proxy.url
        else:
            config = run / "codex-home" / "config.toml"
            text = config.read_text(encoding="utf-8")
            stub = re.search(r'base_url = "(http://127\.0\.0\.1:\d+)/v1"', text)
            assert stub, text
            proxy = Proxy(run / "project", stub.group(1), {**env, **clients.env()})
            config.write_text(text.replace(stub.group(0), f'base_url = "{proxy.url}/v1"'),
                              encoding="utf-8")  # fmt: skip
        proxies.append(proxy)

    turns = [{"shell": "echo hi"}, {"shell": "echo again"}, {"text": "All done."}]
    try:
        result = clients.run(client, turns, run_dir=tmp_path / f"{client}-run", mcp_servers={},
                             before_launch=point_at_proxy, prompt="Wire the retries.")  # fmt: skip
    finally:
        for proxy in proxies:
            proxy.stop()
    assert result.unused_turns == 0
    _check(clients, monkeypatch, result)


def test_claude_code_through_the_proxy_gets_memory_and_its_tool_call_is_recorded(
    clients: Clients, monkeypatch, tmp_path: Path
):
    _through_proxy(clients, monkeypatch, tmp_path, "claude")


def test_codex_through_the_proxy_gets_memory_and_its_tool_call_is_recorded(
    clients: Clients, monkeypatch, tmp_path: Path
):
    _through_proxy(clients, monkeypatch, tmp_path, "codex")
