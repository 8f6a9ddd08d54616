"""Waymark's hooks inside real Claude Code and Codex sessions (scripted stub model)."""

from __future__ import annotations

import json

import pytest

from waymark.handoff import checkpoints
from waymark.memories import store
from waymark.memories.draft import make_draft

from .conftest import enabled_project, git_project

CLIENTS = ["claude", "codex"]


def prepare(clients, monkeypatch, run_dir):
    """An enabled git project with a checkpoint, a pinned rule and a file warning."""
    project_dir = git_project(run_dir / "project", {"src/billing.py": "def charge(): ...\n"})
    conn, project = enabled_project(clients, monkeypatch, project_dir)
    store.remember(
        conn,
        project,
        make_draft(
            project,
            type="warning",
            content="billing.py: charge() must stay idempotent",
            scope="file",
            target="src/billing.py",
        ),
    )
    store.remember(
        conn,
        project,
        make_draft(
            project, type="convention", content="Money is always integer cents", pinned=True
        ),
    )
    checkpoints.create(
        conn,
        project,
        {"objective": "Add refunds", "next_action": "write refund() next to charge()"},
    )
    return conn, project


def requests_text(result) -> list[str]:
    from stub_llm import request_text

    return [request_text(r) for r in result.main_requests]


def edit_turn(client: str, late_s: float = 0) -> dict:
    """An edit of the project; with a server starting `late_s` late, Codex's edit takes long
    enough for it to come up (Codex asks the model without waiting for a starting server)."""
    if client == "claude":
        return {"tool": "Write", "input": {"file_path": "src/refund.py", "content": "x = 1\n"}}
    wait = f"sleep {late_s + 2}; " if late_s else ""
    return {"shell": f"{wait}echo 'x = 1' > src/refund.py"}


@pytest.mark.parametrize("client", CLIENTS)
def test_the_packets_reach_the_model(clients, client, monkeypatch, tmp_path):
    run_dir = tmp_path / "run"
    prepare(clients, monkeypatch, run_dir)
    result = clients.run(
        client,
        [{"text": "Looking."}],
        run_dir=run_dir,
        hooks=clients.hooks(client),
        prompt="Fix src/billing.py please",
    )
    first = requests_text(result)[0]
    assert "write refund() next to charge()" in first  # SessionStart: the checkpoint
    assert "Money is always integer cents" in first  # ... and the pinned rule
    assert "charge() must stay idempotent" in first  # UserPromptSubmit: the file's warning


@pytest.mark.parametrize("late_s", [0, 4, 8])
@pytest.mark.parametrize("client", CLIENTS)
def test_an_edit_is_blocked_once_at_stop_then_the_checkpoint_ends_the_session(
    clients, client, late_s, monkeypatch, tmp_path
):
    """Also with the MCP server starting 4 s and 8 s late: the checkpoint still lands."""
    run_dir = tmp_path / "run"
    conn, project = prepare(clients, monkeypatch, run_dir)
    current = checkpoints.active(conn, project)
    result = clients.run(
        client,
        [
            edit_turn(client, late_s),
            {"text": "Done."},
            {
                "tool": "mcp__waymark__checkpoint",
                "input": {
                    "operation": "revise",
                    "checkpoint_id": current.id,
                    "expected_revision_id": current.revision.id,
                    "progress": "refund.py written",
                    "next_action": "test refunds",
                },
            },
            {"text": "Checkpoint saved."},
        ],
        run_dir=run_dir,
        hooks=clients.hooks(client),
        mcp_servers=clients.mcp_servers(late_s),
    )
    texts = requests_text(result)
    asked = [t for t in texts if "Before stopping, call Waymark" in t]
    assert asked, "the Stop hook asked for a checkpoint"
    assert result.unused_turns == 0
    after = checkpoints.active(conn, project)
    assert after.revision.body["next_action"] == "test refunds"
    assert (
        conn.execute("SELECT count(*) FROM handoff_markers WHERE cleared_at IS NULL").fetchone()[0]
        == 0
    )


@pytest.mark.parametrize("client", CLIENTS)
def test_an_ignored_request_leaves_the_marker_for_the_next_session(
    clients, client, monkeypatch, tmp_path
):
    run_dir = tmp_path / "run"
    conn, project = prepare(clients, monkeypatch, run_dir)
    clients.run(
        client,
        [edit_turn(client), {"text": "Done."}, {"text": "Really done."}],
        run_dir=run_dir,
        hooks=clients.hooks(client),
    )
    pending = conn.execute(
        "SELECT count(*) FROM handoff_markers WHERE cleared_at IS NULL"
    ).fetchone()[0]
    assert pending == 1
    nxt = clients.run(client, [{"text": "Hello."}], run_dir=run_dir, hooks=clients.hooks(client))
    first = requests_text(nxt)[0]
    assert "Handoff needed" in first and "refund.py" in first


def test_resume_does_not_duplicate_the_packet(clients, monkeypatch, tmp_path):
    run_dir = tmp_path / "run"
    prepare(clients, monkeypatch, run_dir)
    first = clients.run(
        "claude", [{"text": "One."}], run_dir=run_dir, hooks=clients.hooks("claude")
    )
    session = first.output["session_id"]
    resumed = clients.run(
        "claude",
        [{"text": "Two."}],
        run_dir=run_dir,
        hooks=clients.hooks("claude"),
        extra_args=["--resume", session],
    )
    body = json.dumps(resumed.main_requests[-1]["body"])
    assert body.count("Money is always integer cents") == 1


def test_codex_resume_does_not_duplicate_the_packet(clients, monkeypatch, tmp_path):
    run_dir = tmp_path / "run"
    prepare(clients, monkeypatch, run_dir)
    clients.run("codex", [{"text": "One."}], run_dir=run_dir, hooks=clients.hooks("codex"))
    resumed = clients.run(
        "codex",
        [{"text": "Two."}],
        run_dir=run_dir,
        hooks=clients.hooks("codex"),
        extra_args=["resume", "--last"],
    )
    body = json.dumps(resumed.main_requests[-1]["body"])
    assert "One." in body  # really the same conversation
    assert body.count("Money is always integer cents") == 1
