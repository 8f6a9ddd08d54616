"""Where a client ran no SessionStart hook (Codex's `exec` with its hooks not trusted, its
desktop app), the real MCP server gives the session's start packet beside its first tool
answer, once; never where the hook ran, nor where Waymark was installed without hooks."""

from __future__ import annotations

import asyncio
import json

from test_hooks import hook, payload, remember
from waymark.handoff import checkpoints

OPENING = '<waymark-memory kind="session-start">'


def two_calls(cwd, client: str = "codex-mcp-client") -> list[dict]:
    """Two recall answers (structured) from one server process, as one session of the client
    named `client` at `initialize` (Codex's name by default); each answer's text is its
    structured answer as JSON."""
    from mcp import Client
    from mcp.types import Implementation

    from waymark.server.app import build_server
    from waymark.server.state import State

    server, state = build_server(State(cwd=str(cwd)))

    async def go():
        async with Client(server, client_info=Implementation(name=client, version="1")) as c:
            return [await c.call_tool("recall", {"query": q}) for q in ("zebra", "lexer")]

    try:
        answers = asyncio.run(go())
    finally:
        state.close()
    for answer in answers:
        (text,) = answer.content
        assert json.loads(text.text) == answer.structured_content
    return [a.structured_content for a in answers]


def test_the_first_answer_brings_the_start_packet_once(conn, enabled, repo):
    checkpoints.create(conn, enabled, {"objective": "Port the zebra importer",
                                       "next_action": "run tests/test_zebra.py"})  # fmt: skip
    remember(conn, enabled, "The zebra importer streams rows", type="fact")
    first, second = two_calls(repo)
    assert first["session_start"].startswith(OPENING)
    assert "run tests/test_zebra.py" in first["session_start"]  # the handoff's next action
    assert first["results"] and "session_start" not in second


def test_not_for_a_client_that_runs_no_hooks(conn, enabled, repo):
    """opencode runs no hooks at all: the memory proxy brings its packets."""
    checkpoints.create(conn, enabled, {"objective": "Port the zebra importer",
                                       "next_action": "run tests/test_zebra.py"})  # fmt: skip
    first, _ = two_calls(repo, client="opencode")
    assert "session_start" not in first
    claude, _ = two_calls(repo, client="claude-code")
    assert "run tests/test_zebra.py" in claude["session_start"]


def test_not_where_the_sessionstart_hook_ran(conn, enabled, repo):
    checkpoints.create(conn, enabled, {"objective": "Port the zebra importer",
                                       "next_action": "run tests/test_zebra.py"})  # fmt: skip
    hook("SessionStart", payload("codex", "SessionStart", cwd=str(repo), session_id="h1"), "codex")
    first, _ = two_calls(repo)
    assert "session_start" not in first


def test_not_where_waymark_was_installed_without_hooks(conn, enabled, repo, tmp_path,
                                                        monkeypatch):  # fmt: skip
    from waymark.installers import install

    checkpoints.create(conn, enabled, {"objective": "Port the zebra importer",
                                       "next_action": "run tests/test_zebra.py"})  # fmt: skip
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "user" / ".codex"))
    (tmp_path / "user" / ".codex").mkdir(parents=True)
    install(["codex"], python="/usr/bin/python3", only="mcp")
    first, _ = two_calls(repo)
    assert "session_start" not in first
