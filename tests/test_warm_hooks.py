"""Hooks answered by the warm MCP server: with `waymark mcp` running, the prompt hook's
packet is made in the server (everything loaded) and relayed, the same packet a hook makes
alone; a server that does not answer, or refuses, leaves the work to the hook. The failure
hook's route is tested in test_failure_recall.py.
"""

from __future__ import annotations

import pytest

from test_server_process import serving, wait_for
from test_use import prompt
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.recall import warm

PROMPT = "How do the webhook retries back off?"


@pytest.fixture
def remembered(conn, enabled):
    kept = store.remember(conn, enabled, make_draft(
        enabled, type="decision",
        content="Webhook retries back off exponentially through the Celery retry queue.",
    )).memory  # fmt: skip
    for other in (
        "Lunch orders go in the kitchen channel",
        "The office plants need water",
        "Parking permits renew in March",
        "Run ruff format before committing",
    ):
        store.remember(conn, enabled, make_draft(enabled, type="fact", content=other))
    return kept


def receipts(conn, session: str) -> int:
    found = conn.execute(
        "SELECT count(*) FROM injections WHERE session_id = ? AND hook = 'UserPromptSubmit'",
        (session,),
    )
    return found.fetchone()[0]


def test_the_server_makes_the_prompt_packet_the_hook_would_and_records_it_once(
    conn, enabled, repo, remembered
):
    alone = prompt(repo, "p-alone", PROMPT)
    assert alone is not None and remembered.id in alone
    with serving(repo):
        request = {"op": "prompt", "prompt": PROMPT,
                   "event": {"cwd": str(repo), "session_id": "p-direct", "client": "claude-code",
                             "name": "UserPromptSubmit"}}  # fmt: skip
        assert wait_for(lambda: warm.ask(request, 0.5) is not None), "the server never answered"
        reply = warm.ask({**request, "event": {**request["event"], "session_id": "p-asked"}}, 5.0)
        assert reply is not None and reply["ok"] and remembered.id in reply["text"]
        relayed = prompt(repo, "p-warm", PROMPT)
        assert relayed is not None and remembered.id in relayed
        assert relayed.splitlines()[:2] == alone.splitlines()[:2]
        assert receipts(conn, "p-warm") == 1
        assert prompt(repo, "p-warm", PROMPT) is None  # shown once a session, as ever
        for wrong in ({"op": "prompt", "prompt": 3, "event": request["event"]},
                      {"op": "prompt", "prompt": PROMPT, "event": {"cwd": 1}}):  # fmt: skip
            refused = warm.ask(wrong, 5.0)
            assert refused is not None and refused["ok"] is False and refused["error"]


def test_a_server_that_refuses_or_stalls_leaves_the_prompt_to_the_hook(
    conn, enabled, repo, remembered
):
    import time

    refusing = warm.start(lambda request: {"ok": False, "error": "unknown op"})
    assert refusing is not None
    try:
        said = prompt(repo, "p-refused", PROMPT)
    finally:
        refusing.stop()
    assert said is not None and remembered.id in said and receipts(conn, "p-refused") == 1

    def stall(request):
        time.sleep(1.0)
        return {"ok": True, "text": "late"}

    stalling = warm.start(stall)
    assert stalling is not None
    try:
        started = time.monotonic()
        said = prompt(repo, "p-stalled", PROMPT)
        assert time.monotonic() - started < 5
    finally:
        stalling.stop()
    assert said is not None and remembered.id in said and "late" not in said


def test_with_the_server_running_pre_and_post_tool_use_answer_as_the_hooks_do(conn, enabled, repo):
    import json

    from test_hooks import hook, payload, remember
    from test_pre_tool_use import before_edit, before_run, context, guard, silent

    warning = remember(conn, enabled, "core.py is generated from core.tmpl", type="warning",
                       scope="file", target="src/pkg/core.py")  # fmt: skip
    guard(repo, '[guard]\nask_commands = ["git push --force*"]\n')
    with serving(repo):
        probe = {"op": "tool", "paths": [], "command": None,
                 "event": {"cwd": str(repo), "session_id": "probe", "client": "claude-code",
                           "name": "PreToolUse"}}  # fmt: skip
        assert wait_for(lambda: warm.ask(probe, 0.5) is not None), "the server never answered"
        said = context(before_edit(repo, session="t1"))
        assert warning.id in said
        assert silent(before_edit(repo, session="t1"))  # once a session, as ever
        first = json.loads(before_run(repo, "git push --force origin main", session="t1",
                                      client="codex").stdout)  # fmt: skip
        assert first["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert silent(before_run(repo, "git push --force origin main", session="t1",
                                 client="codex"))  # fmt: skip
        write = payload("claude-code", "PostToolUse-write", cwd=str(repo), session_id="t1")
        write["tool_input"] = {"file_path": str(repo / "src/pkg/core.py"), "content": "x"}
        done = hook("PostToolUse", write)
        assert done.returncode == 0 and done.stdout == b""
        edits = conn.execute("SELECT path FROM session_ledger WHERE session_id = 't1'"
                             " AND kind = 'edit'").fetchall()  # fmt: skip
        assert edits == [("src/pkg/core.py",)]
        wrong = {**probe, "paths": "src/pkg/core.py"}
        refused = warm.ask(wrong, 5.0)
        assert refused is not None and refused["ok"] is False
