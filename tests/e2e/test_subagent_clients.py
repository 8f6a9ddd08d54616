"""Subagents inside real Claude Code and Codex sessions (scripted stub model)."""

from __future__ import annotations

import json

import pytest

from waymark.handoff import checkpoints
from waymark.memories import store
from waymark.memories.draft import make_draft

from .test_pre_tool_use_clients import project_with_a_file_warning

CLIENTS = ["claude", "codex"]


def spawn(client: str) -> dict:
    if client == "claude":
        return {
            "tool": "Agent",
            "input": {
                "description": "refunds",
                "prompt": "Write refund().",
                "subagent_type": "general-purpose",
            },
        }
    return {
        "tool": "multi_agent_v1__spawn_agent",
        "input": {"message": "Write refund().", "task_name": "refunds"},
    }


@pytest.mark.parametrize("client", CLIENTS)
def test_a_subagent_gets_the_small_packet(clients, client, monkeypatch, tmp_path):
    run_dir = tmp_path / "run"
    conn, project = project_with_a_file_warning(clients, monkeypatch, run_dir)
    checkpoints.create(
        conn, project, {"objective": "Refunds", "next_action": "write refund() next to charge()"}
    )

    def pinned(content, agent):
        draft = make_draft(project, type="convention", content=content, pinned=True, agent=agent)
        return store.remember(conn, project, draft).memory

    # Claude Code names the subagent's type; its memories reach that subagent only.
    own = pinned("Subagents of this type write tests first", "general-purpose")
    other = pinned("Reviewers never edit files", "reviewer")
    # Turns go to requests in arrival order, and Codex exec exits when its main turn ends,
    # sub-agent or not: when the main agent asked before the sub-agent's first request (its
    # SubagentStart hook runs first; on a loaded machine, often), "Working." ended the run
    # before the sub-agent asked at all. The second turn is a pause instead: whoever takes
    # it, the sub-agent's first request comes while the main agent waits. A run that still
    # misses it is run again, at most twice; three in a row fail.
    tried = []
    for _ in range(3):
        result = clients.run(
            client,
            [spawn(client), {"shell": "sleep 2"}, {"text": "Sub done."}, {"text": "Done."}],
            run_dir=run_dir,
            hooks=clients.hooks(client),
        )
        bodies = [json.dumps(r["body"]) for r in result.main_requests]
        sub = [b for b in bodies if 'kind=\\"subagent\\"' in b]
        hooked = conn.execute("SELECT count(*) FROM injections WHERE hook = 'SubagentStart'")
        tried.append({**result.summary(), "subagent_packets": hooked.fetchone()[0]})
        if sub:
            break
    assert sub, f"no request carried the subagent packet: {json.dumps(tried, indent=1)}"
    assert "write refund() next to charge()" in sub[0]
    assert other.id not in sub[0]
    if client == "claude":
        assert own.id in sub[0]
        main = [b for b in bodies if 'kind=\\"session-start\\"' in b]
        assert main and all(own.id not in b for b in main)  # the main session reads no agent's
    row = conn.execute("SELECT hook, kind FROM injections WHERE hook = 'SubagentStart'").fetchone()
    assert tuple(row) == ("SubagentStart", "subagent")
