"""Subagents, as both clients run them: a small packet or none, their edits count for the
parent's handoff, their own "seen", and a subagent's stop never asks."""

from __future__ import annotations

import json

import pytest

from test_hooks import context_of, hook, payload, remember
from test_pre_tool_use import before_edit
from waymark import settings
from waymark.handoff import checkpoints

CLIENTS = ["claude-code", "codex"]


def start_sub(client, repo, session="s1"):
    data = payload(client, "SubagentStart", cwd=str(repo), session_id=session)
    return hook("SubagentStart", data, client)


def prepared(conn, project):
    rule = remember(conn, project, "Money is integer cents", type="convention", pinned=True)
    other = remember(conn, project, "a plain note about the parser")
    checkpoints.create(
        conn,
        project,
        {"objective": "Refunds", "next_action": "write refund() next to charge()",
         "progress": ["charge() done"]},
    )  # fmt: skip
    return rule, other


@pytest.mark.parametrize("client", CLIENTS)
def test_a_subagent_gets_the_next_action_and_the_rules_only(conn, enabled, repo, client):
    rule, other = prepared(conn, enabled)
    text = context_of(start_sub(client, repo))
    assert "write refund() next to charge()" in text and rule.id in text
    assert "charge() done" not in text and other.id not in text  # small: no progress, no notes
    out = json.loads(start_sub(client, repo).stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SubagentStart"  # every subagent gets it: each is new


def test_the_setting_none_gives_a_subagent_nothing(conn, enabled, repo):
    prepared(conn, enabled)
    settings.set_value(conn, "packet.subagent", "none")
    done = start_sub("claude-code", repo)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    with pytest.raises(Exception, match="small, none"):
        settings.set_value(conn, "packet.subagent", "big")


def test_a_subagents_edits_count_for_the_parent_and_its_stop_never_asks(conn, enabled, repo):
    start = payload("claude-code", "SessionStart", cwd=str(repo), session_id="p1")
    hook("SessionStart", start)
    sub = payload("claude-code", "SubagentStart", cwd=str(repo), session_id="p1")
    agent = sub["agent_id"]
    write = payload("claude-code", "PostToolUse-write", cwd=str(repo), session_id="p1")
    write.update(agent_id=agent, agent_type="general-purpose",
                 tool_input={"file_path": str(repo / "src/pkg/core.py"), "content": "x"})  # fmt: skip
    hook("PostToolUse", write)
    sub_stop = payload("claude-code", "Stop", cwd=str(repo), session_id="p1")
    sub_stop.update(agent_id=agent, hook_event_name="SubagentStop")
    assert hook("Stop", sub_stop).stdout == b""  # even if a client sent it to Stop
    parent_stop = payload("claude-code", "Stop", cwd=str(repo), session_id="p1")
    assert json.loads(hook("Stop", parent_stop).stdout)["decision"] == "block"


def test_a_subagent_sees_a_files_warning_the_parent_already_saw(conn, enabled, repo):
    warning = remember(conn, enabled, "core.run() holds the GIL", type="warning", scope="file",
                       target="src/pkg/core.py")  # fmt: skip
    assert warning.id in before_edit(repo, session="p2").stdout.decode()
    data = payload("claude-code", "PreToolUse-write", cwd=str(repo), session_id="p2")
    data.update(agent_id="a1", tool_input={"file_path": str(repo / "src/pkg/core.py")})
    assert warning.id in hook("PreToolUse", data).stdout.decode()  # its context is its own
    assert hook("PreToolUse", data).stdout == b""  # once for the subagent too
    assert before_edit(repo, session="p2").stdout == b""  # and the parent's stays seen


def test_a_subagents_task_prompt_gets_no_second_packet(conn, enabled, repo):
    prepared(conn, enabled)
    ask = payload("codex", "UserPromptSubmit", cwd=str(repo), session_id="p3",
                  prompt="write refund() next to charge() in billing")  # fmt: skip
    ask.update(agent_id="01a23351-52ad", agent_type="default")
    assert hook("UserPromptSubmit", ask, "codex").stdout == b""


def test_a_subagent_id_shaped_like_a_secret_is_stored_redacted(conn, enabled, repo):
    # The id prefixes what the subagent was shown, so it lands in the store, backups and
    # exports: it goes through the redactor like every stored field.
    warning = remember(conn, enabled, "core.run() holds the GIL", type="warning", scope="file",
                       target="src/pkg/core.py")  # fmt: skip
    secret = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    data = payload("claude-code", "PreToolUse-write", cwd=str(repo), session_id="p4")
    data.update(agent_id=f"agent-{secret}", tool_input={"file_path": str(repo / "src/pkg/core.py")})
    assert warning.id in hook("PreToolUse", data).stdout.decode()
    assert hook("PreToolUse", data).stdout == b""  # still once: the redacted id still matches
    rows = conn.execute("SELECT * FROM session_injected WHERE session_id = 'p4'").fetchall()
    assert rows and secret not in repr(rows) and "[REDACTED:github_token]" in repr(rows)


def test_a_session_id_shaped_like_a_secret_is_stored_redacted(conn, enabled, repo):
    secret = "sk-proj-" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6"
    start = payload("claude-code", "SessionStart", cwd=str(repo), session_id=f"s-{secret}")
    assert hook("SessionStart", start).returncode == 0
    rows = conn.execute("SELECT id FROM sessions").fetchall()
    assert rows and secret not in repr(rows) and "[REDACTED:openai_key]" in repr(rows)
