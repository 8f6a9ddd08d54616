"""Waymark's MCP server inside real Claude Code and Codex sessions."""

from __future__ import annotations

import json

import pytest

from waymark.handoff import checkpoints
from waymark.projects.resolve import resolve
from waymark.storage import connection as db

from .conftest import tool_texts


def payload(text: str) -> dict:
    """A tool result's JSON (Codex wraps it in 'Wall time ... Output:')."""
    return json.loads(text[text.index("{") :])


@pytest.mark.parametrize("late_s", [0, 4])
@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_checkpoint_saved_in_one_session_is_recalled_in_the_next(
    clients, client, late_s, monkeypatch, tmp_path
):
    """Also with the server starting 4 s late (a busy machine, many servers starting
    together): Claude Code probes `server/discover` for about 3 s, then initializes. 8 s
    late is the handoff test's (test_hooks_clients.py): the same start, 36 s less a run."""
    run_dir = tmp_path / "run"
    servers = clients.mcp_servers(late_s)
    # Codex asks the model without waiting for a server still starting: a first turn of
    # other work, then the tool, as a model would meet it.
    wait = [{"shell": f"sleep {late_s + 2}"}] if client == "codex" and late_s else []
    first = clients.run(
        client,
        [
            *wait,
            {
                "tool": "mcp__waymark__checkpoint",
                "input": {
                    "operation": "create",
                    "objective": "Port the zebra importer",
                    "next_action": "run tests/test_zebra.py",
                    "progress": "parser done",
                },
            },
            {"text": "Checkpoint saved."},
        ],
        run_dir=run_dir,
        mcp_servers=servers,
    )
    saved = payload(next(t for t in tool_texts(first) if "saved_revision_id" in t))
    stale = saved["saved_revision_id"]
    checkpoint_id = saved["checkpoint"]["id"]

    # Another client moves the checkpoint on, so the first revision id is now stale.
    monkeypatch.setenv("WAYMARK_HOME", str(clients.home))
    conn = db.connect()
    project = resolve(conn, str(run_dir / "project"))
    current = checkpoints.revise(conn, project, checkpoint_id, stale, {"progress": ["lexer done"]})
    conn.close()

    second = clients.run(
        client,
        [
            *wait,
            {"tool": "mcp__waymark__recall", "input": {"query": "zebra importer"}},
            {
                "tool": "mcp__waymark__checkpoint",
                "input": {
                    "operation": "revise",
                    "checkpoint_id": checkpoint_id,
                    "expected_revision_id": stale,
                    "next_action": "overwrite",
                },
            },
            {"text": "Done."},
        ],
        run_dir=run_dir,
        mcp_servers=servers,
    )
    from stub_llm import offered_tools

    if client == "claude" or not late_s:  # Codex asks the model before a late server is up
        assert "mcp__waymark__checkpoint" in offered_tools(first.main_requests[0])
    texts = tool_texts(second)
    recalled = payload(next(t for t in texts if '"checkpoint"' in t and "zebra" in t))
    assert recalled["checkpoint"]["next_action"] == "run tests/test_zebra.py"
    assert "Port the zebra importer" in recalled["checkpoint"]["text"]
    conflict = next(t for t in texts if "conflict" in t)
    assert current.revision.id in conflict  # the error names the current revision


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_the_five_tools_browse_link_and_read_a_history_in_the_real_clients(
    clients, client, tmp_path
):
    """What `list`, `history` and `relate` did, through `recall` and `remember` as each
    client sends them (their definitions as the clients shape them: no defaults, bare lists)."""
    run_dir = tmp_path / "run"
    first = clients.run(
        client,
        [
            {
                "tool": "mcp__waymark__remember",
                "input": {
                    "type": "incident",
                    "content": "The zebra import ran out of memory",
                    "tags": ["zebra", "oom"],
                },
            },
            {"text": "Saved."},
        ],  # fmt: skip
        run_dir=run_dir,
    )
    incident = payload(next(t for t in tool_texts(first) if '"memory"' in t))["memory"]["id"]
    second = clients.run(
        client,
        [
            {
                "tool": "mcp__waymark__remember",
                "input": {
                    "type": "solution",
                    "content": "Stream the zebra rows in batches of 500",
                    "links": [{"id": incident, "kind": "solves"}],
                },
            },
            {"tool": "mcp__waymark__recall", "input": {"limit": 5, "detail": "compact"}},
            {"tool": "mcp__waymark__recall", "input": {"id": incident}},
            {"text": "Done."},
        ],  # fmt: skip
        run_dir=run_dir,
    )
    texts = [payload(t) for t in tool_texts(second) if "{" in t]
    solved = next(t for t in texts if "links" in t and "memory" in t)
    assert solved["links"] == [{"dst": incident, "kind": "solves", "created": True}]
    browsed = next(t for t in texts if "has_more" in t)
    assert [m["type"] for m in browsed["results"]] == ["solution", "incident"]
    history = next(t for t in texts if "chain" in t)
    assert history["chain"][0]["id"] == incident
    assert history["links"][0]["kind"] == "solves" and history["links"][0]["dst"] == incident
