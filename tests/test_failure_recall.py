"""Failure-time recall: a command fails, and the hook says what fixed the same error before.

Hooks as real processes with the clients' own payload shapes (Claude Code's
PostToolUseFailure, Codex's PostToolUse with a non-zero exit), over a real database.
"""

from __future__ import annotations

import json
import time
import uuid

import pytest

from test_hooks import hook, payload
from waymark.curation import mistakes, signature
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.storage import command_failures, sessions
from waymark.storage import connection as db

MISSING = "E   ModuleNotFoundError: No module named 'requests_mock'"
TRACE = "tests/test_api.py:{n}: in <module>\n    import requests_mock\n" + MISSING + "\n1 error"


def failed(client: str, cwd, session: str, command: str, error: str) -> tuple[str, dict]:
    """(the hook's event, its payload) for a command that failed, as each client sends it."""
    if client == "claude-code":
        data = payload(client, "PostToolUseFailure", cwd=str(cwd), session_id=session)
        data.update(tool_input={"command": command}, error=f"Exit code 1\n{error}")
        return "PostToolUseFailure", data
    data = payload(client, "PostToolUse-failed", cwd=str(cwd), session_id=session)
    data.update(tool_input={"command": command}, tool_response={"exit_code": 1, "stderr": error})
    return "PostToolUse", data


def ran(client: str, cwd, session: str, command: str) -> dict:
    data = payload(client, "PostToolUse-bash", cwd=str(cwd), session_id=session)
    data["tool_input"] = {"command": command}
    if client == "codex":
        data["tool_response"] = {"exit_code": 0, "stdout": "ok"}
    return data


def context(done) -> str | None:
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return None
    out = json.loads(done.stdout)
    assert set(out) == {"hookSpecificOutput"}  # Codex rejects any other key
    assert set(out["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    return out["hookSpecificOutput"]["additionalContext"]


def fail(client, cwd, session, command, error) -> str | None:
    event, data = failed(client, cwd, session, command, error)
    done = hook(event, data, client)
    said = context(done)
    if said is not None:
        assert json.loads(done.stdout)["hookSpecificOutput"]["hookEventName"] == event
    return said


def succeed(client, cwd, session, command) -> None:
    assert context(hook("PostToolUse", ran(client, cwd, session, command), client)) is None


@pytest.mark.parametrize("client", ["claude-code", "codex"])
def test_a_failure_fixed_in_one_session_is_offered_in_the_next_at_the_same_failure(
    conn, enabled, repo, client
):
    first, second = f"s1-{uuid.uuid4().hex[:6]}", f"s2-{uuid.uuid4().hex[:6]}"
    # Session 1: the tests fail on a missing module, a package install fixes it.
    assert (
        fail(client, repo, first, "python -m pytest tests/test_api.py", TRACE.format(n=3)) is None
    )
    succeed(client, repo, first, "ls tests")  # a reader: never taken for the fix
    succeed(client, repo, first, "pip install requests-mock")
    succeed(client, repo, first, "python -m pytest tests/test_api.py")
    # Session 2: another run, other arguments, other line numbers: the same error.
    said = fail(client, repo, second, "python -m pytest -x -q", TRACE.format(n=41))
    assert said is not None and said.startswith('<waymark-memory kind="failure">')
    assert "## This error came up before" in said
    assert "`pip install requests-mock`" in said and "`ls tests`" not in said
    assert "`python -m pytest tests/test_api.py` passed after running" in said
    (row,) = conn.execute(
        "SELECT id FROM command_failures WHERE session_id = ?", (first,)
    ).fetchall()
    assert f"[failure:{row[0]}]" in said  # cited
    # Once per signature per session; a different error says nothing.
    assert fail(client, repo, second, "python -m pytest", TRACE.format(n=7)) is None
    other = "E   ImportError: cannot import name 'Client' from 'api'"
    assert fail(client, repo, second, "python -m pytest", other) is None
    # The receipt names what was shown, under the hook that showed it.
    hook_name = "PostToolUseFailure" if client == "claude-code" else "PostToolUse"
    receipts = conn.execute(
        "SELECT hook, kind, item FROM injections WHERE session_id = ?", (second,)
    ).fetchall()
    assert receipts == [(hook_name, "failure", f"failure:{row[0]}")]


def test_a_lesson_naming_the_error_is_offered_with_its_id(conn, enabled, repo):
    lesson = store.remember(
        conn,
        enabled,
        make_draft(
            enabled,
            type="lesson",
            content="The API tests need requests_mock from the dev extras: pip install -e .[dev]",
        ),
    )
    unrelated = store.remember(
        conn, enabled, make_draft(enabled, type="lesson", content="Use requests for HTTP calls.")
    )
    said = fail("claude-code", repo, "s-lesson", "pytest", TRACE.format(n=1))
    assert said is not None and f"id {lesson.memory.id}" in said and unrelated.memory.id not in said
    assert "requests_mock from the dev extras" in said
    # No earlier failure: only the lesson, no failure line.
    assert "[failure:" not in said
    assert len([line for line in said.splitlines() if line.startswith("- ")]) == 1


def test_an_unfixed_failure_from_another_session_says_it_never_passed(conn, enabled, repo):
    assert fail("claude-code", repo, "a1", "make build", "fatal: missing header foo.h") is None
    said = fail("claude-code", repo, "a2", "make build", "fatal: missing header foo.h")
    assert said is not None and "failed the same way once before" in said
    assert "never passed on a later run" in said


def test_the_same_session_failing_again_unfixed_is_not_news(conn, enabled, repo):
    assert fail("claude-code", repo, "b1", "make build", "fatal: missing header foo.h") is None
    assert fail("claude-code", repo, "b1", "make build -j4", "fatal: missing header foo.h") is None


def test_a_fix_command_is_kept_redacted_and_the_hint_never_shows_the_secret(conn, enabled, repo):
    token = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
    assert fail("claude-code", repo, "r1", "npm test", "Error: 401 Unauthorized") is None
    succeed("claude-code", repo, "r1", f"npm config set //registry/:_authToken={token}")
    succeed("claude-code", repo, "r1", "npm test")
    (tried,) = conn.execute("SELECT tried FROM command_failures").fetchone()
    assert token not in tried and "npm config set" in tried
    said = fail("claude-code", repo, "r2", "npm test", "Error: 401 Unauthorized")
    assert said is not None and "npm config set" in said and token not in said


def test_a_signature_is_the_one_the_insights_use(conn, enabled, repo):
    command, error = "python -m pytest tests/test_api.py", TRACE.format(n=3)
    fail("claude-code", repo, "i1", command, error)
    (stored, cmd, tail) = conn.execute(
        "SELECT signature, command, error_tail FROM command_failures"
    ).fetchone()
    assert (
        stored
        == signature.of(cmd, tail)
        == "python: ModuleNotFoundError: No module named 'requests_mock'"
    )
    assert [e["signature"] for e in mistakes.log(conn, enabled) if e["kind"] == "failure"] == [
        stored
    ]


def test_failures_stored_before_signatures_are_signed_and_found(conn, enabled, repo):
    with db.write(conn):
        sessions.insert_session(conn, "old", "claude-code", enabled.id, "2026-11-01T10:00:00Z",
                                None, None)  # fmt: skip
        command_failures.add_command_failure(
            conn, enabled.id, "old", "2026-11-01T10:00:00Z", "pytest", "pytest", 1,
            MISSING, None,
        )  # fmt: skip
        conn.execute("UPDATE command_failures SET passed_at = '2026-11-01T10:05:00Z',"
                     " passed_session = 'old', fix = '[\"pyproject.toml\"]'")  # fmt: skip
    said = fail("claude-code", repo, "new", "pytest -q", MISSING)
    assert said is not None and "editing pyproject.toml" in said
    assert (
        conn.execute("SELECT count(*) FROM command_failures WHERE signature IS NULL").fetchone()[0]
        == 0
    )


def test_the_packet_stays_within_its_budget(conn, enabled, repo):
    for i in range(4):
        store.remember(
            conn,
            enabled,
            make_draft(enabled, type="warning",
                       content=f"requests_mock note {i}: " + "long explanation " * 40),
        )  # fmt: skip
    fail("claude-code", repo, "c1", "pytest", MISSING)
    succeed("claude-code", repo, "c1", "pip install requests-mock")
    succeed("claude-code", repo, "c1", "pytest")
    said = fail("claude-code", repo, "c2", "pytest", MISSING)
    assert said is not None
    from waymark.base.tokens import estimate

    assert estimate(said) <= 200
    assert 1 <= len([line for line in said.splitlines() if line.startswith("- ")]) <= 3


def _rows(conn, session: str) -> tuple[int, int]:
    """(command_failures rows, ledger failure rows) of one session."""
    cf = conn.execute("SELECT count(*) FROM command_failures WHERE session_id = ?", (session,))
    ledger = conn.execute(
        "SELECT count(*) FROM session_ledger WHERE session_id = ? AND kind = 'failure'", (session,)
    )
    return cf.fetchone()[0], ledger.fetchone()[0]


@pytest.mark.parametrize("client", ["claude-code", "codex"])
def test_with_the_mcp_server_running_it_records_the_failure_once_and_gives_the_hint(
    conn, enabled, repo, client
):
    from test_server_process import serving, wait_for
    from waymark import warm

    with serving(repo):
        refused = {"event": {}, "given": {}}  # answered without the model
        assert wait_for(lambda: warm.ask("tool_result", refused, 0.5) is not None), (
            "the server never answered"
        )
        first, second = f"w1-{uuid.uuid4().hex[:6]}", f"w2-{uuid.uuid4().hex[:6]}"
        assert fail(client, repo, first, "python -m pytest", TRACE.format(n=3)) is None
        succeed(client, repo, first, "pip install requests-mock")
        succeed(client, repo, first, "python -m pytest")
        said = fail(client, repo, second, "python -m pytest -x", TRACE.format(n=9))
        assert said is not None and "`pip install requests-mock`" in said
        assert _rows(conn, first) == (1, 1) and _rows(conn, second) == (1, 1)
        # The server's own answer to the same request shape, straight from the socket.
        event, data = failed(client, repo, "w3", "python -m pytest", TRACE.format(n=2))
        request = {
                        "event": {"cwd": str(repo), "session_id": "w3", "client": client, "name": event},
            "given": {"command": "python -m pytest", "failed": True, "tool_name": "Bash",
                      "exit_code": 1, "error": TRACE.format(n=2), "cwd": str(repo),
                      "key": "test-w3"},
        }  # fmt: skip
        reply = warm.ask("tool_result", request, 5.0)
        assert reply is not None and reply["ok"] and reply["recorded"] is True
        assert "`pip install requests-mock`" in reply["text"]
        again = warm.ask("tool_result", request, 5.0)  # the same delivery key: recorded once
        assert again == {"ok": True, "recorded": False, "text": None}
        assert _rows(conn, "w3") == (1, 1)


def test_a_server_reply_that_misses_the_hooks_deadline_never_records_the_failure_twice(
    conn, enabled, repo
):
    """The server takes the request in time and records the call, then answers after the
    hook's deadline: the hook finds the call recorded and shows the server's packet, which
    comes on the same connection (a hint was lost this way under load)."""
    from waymark.packets import failure
    from waymark.warm import server as warm_server

    assert fail("claude-code", repo, "early", "make build", "fatal: missing header foo.h") is None

    def slow(request):  # records it, then answers after the hook stopped waiting
        own = db.connect()
        try:
            reply = failure.answer(own, request)
        finally:
            own.close()
        time.sleep(1.0)
        return reply

    server = warm_server.start(slow)
    assert server is not None
    try:
        started = time.monotonic()
        said = fail("claude-code", repo, "late", "make build", "fatal: missing header foo.h")
        took = time.monotonic() - started
    finally:
        server.stop()
    assert said is not None and "never passed on a later run" in said
    assert 1.0 <= took < 5
    assert _rows(conn, "late") == (1, 1)
    keys = [k for (k,) in conn.execute("SELECT key FROM hook_deliveries")]
    assert len(keys) == 1 and keys[0].startswith("PostToolUseFailure-")
    seen = conn.execute("SELECT count(*) FROM injections WHERE session_id = 'late'").fetchone()
    assert seen[0] >= 1  # the server noted what it said; the hook said it


def test_a_server_that_fails_after_recording_leaves_the_hook_silent_not_stuck(conn, enabled, repo):
    from waymark.packets import failure
    from waymark.warm import server as warm_server

    def fails(request):  # records it, then fails late: the hook gets the error, not a packet
        own = db.connect()
        try:
            failure.answer(own, request)
        finally:
            own.close()
        time.sleep(0.5)
        raise RuntimeError("the packet could not be made")

    server = warm_server.start(fails)
    assert server is not None
    try:
        started = time.monotonic()
        assert fail("claude-code", repo, "gone", "make build", "fatal: missing header x.h") is None
        assert time.monotonic() - started < 5
    finally:
        server.stop()
    assert _rows(conn, "gone") == (1, 1)


def test_a_server_that_refuses_leaves_the_failure_to_the_hook(conn, enabled, repo):
    from waymark.warm import server as warm_server

    server = warm_server.start(lambda request: {"ok": False, "error": "unknown op"})
    assert server is not None
    try:
        assert fail("claude-code", repo, "r1", "make build", "fatal: missing header foo.h") is None
        said = fail("claude-code", repo, "r2", "make build", "fatal: missing header foo.h")
    finally:
        server.stop()
    assert said is not None and "never passed on a later run" in said
    assert _rows(conn, "r1") == (1, 1) and _rows(conn, "r2") == (1, 1)


def test_a_malformed_failure_request_is_refused_and_records_nothing(conn, enabled, repo):
    from waymark.packets import failure

    event = {"cwd": str(repo), "session_id": "m", "client": "codex", "name": "PostToolUse"}
    for given in ({}, {"key": "k", "command": 3}, {"key": "k", "paths": "a.py"},
                  {"key": "k", "exit_code": True}, {"key": "k", "sql": "x"}):  # fmt: skip
        reply = failure.answer(conn, {"op": "tool_result", "event": event, "given": given})
        assert reply["ok"] is False and reply["error"]
    reply = failure.answer(conn, {"op": "tool_result", "event": {"cwd": 1}, "given": {"key": "k"}})
    assert reply["ok"] is False
    assert _rows(conn, "m") == (0, 0)
