"""The `hook` tool: Claude Code's `mcp_tool` hook calls it with the prompt, and it answers
what the command prompt hook prints, from inside the server; it is never listed."""

from __future__ import annotations

import asyncio
import json

import pytest
from mcp import Client

from test_use import prompt
from test_warm_hooks import PROMPT, receipts, remembered  # noqa: F401 (a fixture)
from waymark.base import hookruns
from waymark.server.app import build_server
from waymark.server.state import State


@pytest.fixture
def server(repo):
    server, state = build_server(State(cwd=str(repo)))
    yield server
    state.close()


def calls(server, *arguments):
    async def go():
        async with Client(server) as client:
            listed = [t.name for t in (await client.list_tools()).tools]
            return listed, [await client.call_tool("hook", args) for args in arguments]

    return asyncio.run(go())


def hooked(repo, session, text=PROMPT, prompt_id="prompt-1"):
    return {"event": "UserPromptSubmit", "prompt": text, "session_id": session,
            "prompt_id": prompt_id, "cwd": str(repo)}  # fmt: skip


def test_the_hook_tool_answers_the_prompt_hooks_output_and_is_not_listed(
    conn,
    enabled,
    repo,
    server,
    remembered,  # noqa: F811
):
    alone = prompt(repo, "p-alone", PROMPT)
    listed, (first, again) = calls(server, hooked(repo, "p-mcp"), hooked(repo, "p-mcp"))
    assert "hook" not in listed and "recall" in listed
    assert not first.is_error, first.content
    out = json.loads(first.content[0].text)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert remembered.id in out["additionalContext"]
    assert alone is not None and out["additionalContext"].splitlines()[:2] == alone.splitlines()[:2]
    assert receipts(conn, "p-mcp") == 1
    assert not again.is_error and again.content[0].text == ""  # the same prompt: once
    runs = [r for r in hookruns.read() if r["event"] == "UserPromptSubmit"]
    assert [r["outcome"] for r in runs[-2:]] == ["ok", "repeat"]
    assert runs[-1]["client"] == "claude-code"
    _, (subagent,) = calls(server, {**hooked(repo, "p-sub"), "agent_id": "agent-7"})
    assert not subagent.is_error and subagent.content[0].text == ""  # SubagentStart's packet


def test_the_command_hook_and_the_tool_answer_one_prompt_once_whichever_comes_first(
    conn,
    enabled,
    repo,
    server,
    remembered,  # noqa: F811
):
    said = prompt(repo, "p-both", PROMPT, prompt_id="id-1")  # the command hook first
    assert said is not None and remembered.id in said
    _, (after,) = calls(server, hooked(repo, "p-both", prompt_id="id-1"))
    assert not after.is_error and after.content[0].text == ""
    _, (first,) = calls(server, hooked(repo, "p-both2", prompt_id="id-2"))  # the tool first
    assert remembered.id in first.content[0].text
    assert prompt(repo, "p-both2", PROMPT, prompt_id="id-2") is None
    assert receipts(conn, "p-both") == 1 and receipts(conn, "p-both2") == 1


def test_the_hook_tool_says_nothing_outside_a_captured_project_and_refuses_other_events(
    repo, server, tmp_path
):
    plain = tmp_path / "plain"
    plain.mkdir()
    _, (nothing, wrong) = calls(
        server,
        {**hooked(repo, "p-plain"), "cwd": str(plain)},
        {**hooked(repo, "p-x"), "event": "Stop"},
    )
    assert not nothing.is_error and nothing.content[0].text == ""
    assert wrong.is_error and "invalid_argument" in wrong.content[0].text


def test_without_a_prompt_id_the_two_routes_agree_on_the_prompts_text(
    conn,
    enabled,
    repo,
    server,
    remembered,  # noqa: F811
):
    from test_hooks import hook, payload

    _, (first,) = calls(server, hooked(repo, "p-noid", prompt_id=""))
    assert remembered.id in first.content[0].text
    data = payload("claude-code", "UserPromptSubmit", cwd=str(repo), session_id="p-noid",
                   prompt=PROMPT)  # fmt: skip
    del data["prompt_id"]  # a client that sends none
    done = hook("UserPromptSubmit", data, fresh=False)
    assert done.returncode == 0 and done.stdout == b""  # the tool answered this prompt
    assert receipts(conn, "p-noid") == 1
