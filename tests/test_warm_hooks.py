"""Hooks answered by the warm MCP server: with `waymark mcp` running, the prompt hook's
packet is made in the server (everything loaded) and relayed, the same packet a hook makes
alone; a server that does not answer, or refuses, leaves the work to the hook. The failure
hook's route is tested in test_failure_recall.py.
"""

from __future__ import annotations

import pytest

from test_server_process import serving, wait_for
from test_use import prompt
from waymark import warm
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.warm import server as warm_server

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
        request = {"prompt": PROMPT,
                   "event": {"cwd": str(repo), "session_id": "p-direct", "client": "claude-code",
                             "name": "UserPromptSubmit"}}  # fmt: skip
        assert wait_for(lambda: warm.ask("prompt", request, 0.5) is not None), (
            "the server never answered"
        )
        asked = {**request, "event": {**request["event"], "session_id": "p-asked"}}
        reply = warm.ask("prompt", asked, 5.0)
        assert reply is not None and reply["ok"] and remembered.id in reply["text"]
        relayed = prompt(repo, "p-warm", PROMPT)
        assert relayed is not None and remembered.id in relayed
        assert relayed.splitlines()[:2] == alone.splitlines()[:2]
        assert receipts(conn, "p-warm") == 1
        assert prompt(repo, "p-warm", PROMPT) is None  # shown once a session, as ever
        for wrong in ({"prompt": 3, "event": request["event"]},
                      {"prompt": PROMPT, "event": {"cwd": 1}}):  # fmt: skip
            refused = warm.ask("prompt", wrong, 5.0)
            assert refused is not None and refused["ok"] is False and refused["error"]


def test_a_server_that_refuses_or_stalls_leaves_the_prompt_to_the_hook(
    conn, enabled, repo, remembered
):
    import time

    refusing = warm_server.start(lambda request: {"ok": False, "error": "unknown op"})
    assert refusing is not None
    try:
        said = prompt(repo, "p-refused", PROMPT)
    finally:
        refusing.stop()
    assert said is not None and remembered.id in said and receipts(conn, "p-refused") == 1

    asked = []

    def stall(request):
        asked.append(request["op"])
        time.sleep(1.0)
        return {"ok": True, "text": "late"}

    stalling = warm_server.start(stall)
    assert stalling is not None
    try:
        started = time.monotonic()
        said = prompt(repo, "p-stalled", PROMPT)
        assert time.monotonic() - started < 5
    finally:
        stalling.stop()
    assert said is not None and remembered.id in said and "late" not in said
    assert asked == ["prompt"]  # one round trip: a busy server is not asked again


def test_with_the_server_running_pre_and_post_tool_use_answer_as_the_hooks_do(conn, enabled, repo):
    import json

    from test_hooks import hook, payload, remember
    from test_pre_tool_use import before_edit, before_run, context, guard, silent

    warning = remember(conn, enabled, "core.py is generated from core.tmpl", type="warning",
                       scope="file", target="src/pkg/core.py")  # fmt: skip
    guard(repo, '[guard]\nask_commands = ["git push --force*"]\n')
    with serving(repo):
        probe = {"paths": [], "command": None,
                 "event": {"cwd": str(repo), "session_id": "probe", "client": "claude-code",
                           "name": "PreToolUse"}}  # fmt: skip
        assert wait_for(lambda: warm.ask("tool", probe, 0.5) is not None), (
            "the server never answered"
        )
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
        refused = warm.ask("tool", wrong, 5.0)
        assert refused is not None and refused["ok"] is False


RULE = "Run make check before every push; CI runs the same target."


def started(repo, session: str, source: str = "startup") -> str | None:
    """What the SessionStart hook injects for `session`."""
    import json

    from test_hooks import hook, payload

    data = payload("claude-code", "SessionStart", cwd=str(repo), session_id=session,
                   source=source)  # fmt: skip
    done = hook("SessionStart", data)
    assert done.returncode == 0, done.stderr
    return (
        json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"] if done.stdout else None
    )


def start_receipts(conn, session: str) -> int:
    found = conn.execute(
        "SELECT count(DISTINCT packet) FROM injections"
        " WHERE session_id = ? AND hook = 'SessionStart'",
        (session,),
    )
    return found.fetchone()[0]


@pytest.fixture
def ruled(conn, enabled):
    return store.remember(conn, enabled, make_draft(
        enabled, type="convention", content=RULE, priority=3,
    )).memory  # fmt: skip


def test_the_server_makes_the_session_start_packet_the_hook_would(conn, enabled, repo, ruled):
    """A second session, or a clear, compact or resume in this one, finds the server up: it
    opens the session and makes the packet there, the same one the hook makes alone."""
    alone = started(repo, "s-alone")
    assert alone is not None and RULE in alone
    compact_alone = started(repo, "s-alone", "compact")
    with serving(repo):
        request = {"source": "startup",
                   "event": {"cwd": str(repo), "session_id": "s-direct", "client": "claude-code",
                             "name": "SessionStart"}}  # fmt: skip
        assert wait_for(lambda: warm.ask("session_start", request, 0.5) is not None), (
            "the server never answered"
        )
        asked = {**request, "event": {**request["event"], "session_id": "s-asked"}}
        reply = warm.ask("session_start", asked, 5.0)
        assert reply is not None and reply["ok"] and RULE in reply["text"]
        assert reply["notes"] == []
        assert start_receipts(conn, "s-asked") == 1  # the session opened, its packet noted
        opened = conn.execute("SELECT client FROM sessions WHERE id = 's-asked'").fetchall()
        assert opened == [("claude-code",)]
        relayed = started(repo, "s-warm")
        assert relayed is not None and relayed.splitlines()[:2] == alone.splitlines()[:2]
        assert RULE in relayed and start_receipts(conn, "s-warm") == 1
        compacted = started(repo, "s-warm", "compact")
        assert compacted is not None and compact_alone is not None
        assert compacted.splitlines()[:2] == compact_alone.splitlines()[:2]
        resumed = started(repo, "s-warm", "resume")
        assert resumed is not None and "recall" in resumed and RULE not in resumed
        for wrong in ({**request, "source": 3}, {**request, "event": {"cwd": 1}}):
            refused = warm.ask("session_start", wrong, 5.0)
            assert refused is not None and refused["ok"] is False and refused["error"]


def test_the_session_start_hook_relays_the_servers_packet_and_logs_its_notes(
    conn, enabled, repo, ruled
):
    from waymark import home

    asked = []

    def answering(request):
        asked.append(request)
        return {"ok": True, "text": "made by the server", "notes": ["a note from the server"]}

    server = warm_server.start(answering)
    assert server is not None
    try:
        said = started(repo, "s-relayed", "clear")
    finally:
        server.stop()
    assert said == "made by the server"
    assert asked[0]["op"] == "session_start" and asked[0]["source"] == "clear"
    assert asked[0]["event"]["session_id"] == "s-relayed"
    import pathlib

    text = pathlib.Path(home.data_home(), "hooks.log").read_text(encoding="utf-8")
    assert "SessionStart" in text and "a note from the server" in text
    assert start_receipts(conn, "s-relayed") == 0  # the hook did not make one of its own


def test_a_server_that_refuses_leaves_the_session_start_to_the_hook(conn, enabled, repo, ruled):
    refusing = warm_server.start(lambda request: {"ok": False, "error": "unknown op"})
    assert refusing is not None
    try:
        said = started(repo, "s-refused")
    finally:
        refusing.stop()
    assert said is not None and RULE in said and start_receipts(conn, "s-refused") == 1


def test_a_server_that_took_the_start_and_answers_late_is_waited_for(conn, enabled, repo, ruled):
    """Past the warm deadline a server that took the request may be opening the session
    (waiting for the lock, say): the hook waits for its answer rather than open it twice."""
    import time

    def slow(request):
        time.sleep(0.8)
        return {"ok": True, "text": "made late by the server", "notes": []}

    server = warm_server.start(slow)
    assert server is not None
    try:
        said = started(repo, "s-late")
    finally:
        server.stop()
    assert said == "made late by the server"
    assert start_receipts(conn, "s-late") == 0
