"""`waymark mcp` as a client meets it: a database it cannot open, a garbage line, a request
sent just before the end of input, a signal. Whatever happens, every request gets an answer,
the server leaves when it should, and `server.log` says when and why."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from waymark import home
from waymark.health import doctor
from waymark.storage import connection as db
from waymark.storage import migrations

HELLO = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "test", "version": "1"},
}


def messages(*extra: dict) -> bytes:
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *extra,
    ]
    return b"".join(json.dumps(m).encode() + b"\n" for m in lines)


def call(request_id: int, name: str, arguments: dict | None = None) -> dict:
    params = {"name": name, "arguments": arguments or {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def serve(cwd, data: bytes, *, direct: bool = False) -> tuple[list[dict], str, int]:
    """The whole input at once, then end of input: every reply, stderr, the exit code."""
    env = {**os.environ, **({"WAYMARK_MCP_DIRECT": "1"} if direct else {})}
    done = subprocess.run(
        [sys.executable, "-m", "waymark", "mcp"],
        cwd=cwd,
        input=data,
        capture_output=True,
        timeout=60,
        env=env,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return replies, done.stderr.decode(), done.returncode


def error_of(reply: dict) -> dict:
    text = reply["result"]["content"][0]["text"]
    return json.loads(text[text.index("{") :])["error"]


def _garbage(path: str) -> None:
    with open(path, "wb") as f:
        f.write(b"this is not a database" * 100)


def _too_new(path: str) -> None:
    conn = db.connect()
    conn.execute(f"PRAGMA user_version = {migrations.SCHEMA_VERSION + 3}")
    conn.close()


def _truncated(path: str) -> None:
    conn = db.connect()
    conn.execute("CREATE TABLE filler(x)")
    for _ in range(200):
        conn.execute("INSERT INTO filler VALUES (?)", (os.urandom(500).hex(),))
    db.checkpoint_wal(conn)
    conn.close()
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 3)


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        (_garbage, "database_unreadable"),
        (_too_new, "schema_too_new"),
        (_truncated, "database_corrupt"),
    ],
)
def test_a_database_the_server_cannot_open_answers_every_tool_call_and_exits_at_eof(
    repo, damage, code
):
    os.makedirs(home.data_home(), exist_ok=True)
    damage(home.db_path())
    before = pathlib.Path(home.db_path()).read_bytes()
    replies, stderr, rc = serve(
        repo, messages(call(2, "status"), call(3, "recall", {"query": "anything"}))
    )
    assert rc == 0
    by_id = {r.get("id"): r for r in replies}
    assert by_id[1]["result"]["serverInfo"]["name"] == "waymark"
    assert {error_of(by_id[2])["code"], error_of(by_id[3])["code"]} == {code}
    assert f"[{code}]" in stderr
    assert pathlib.Path(home.db_path()).read_bytes() == before  # left untouched
    log = pathlib.Path(home.data_home(), "server.log").read_text(encoding="utf-8")
    assert "start: Waymark" in log and f"refusing every tool call: [{code}]" in log
    assert "exit 0: end of input" in log


def test_a_garbage_line_gets_a_json_rpc_parse_error_and_the_server_goes_on(repo):
    data = messages() + b"not json at all\n" + json.dumps(call(2, "status")).encode() + b"\n"
    replies, _, rc = serve(repo, data)
    assert rc == 0
    parse = [r for r in replies if r.get("error", {}).get("code") == -32700]
    assert len(parse) == 1 and parse[0]["id"] is None
    status = next(r for r in replies if r.get("id") == 2)
    assert "isError" not in status["result"] or not status["result"]["isError"]


def test_a_request_sent_just_before_end_of_input_is_answered(repo):
    replies, _, rc = serve(
        repo, messages(call(7, "remember", {"content": "Use ruff", "type": "convention"}))
    )
    assert rc == 0
    answered = next(r for r in replies if r.get("id") == 7)
    assert not answered["result"].get("isError"), answered


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_server_and_the_log_says_so(repo, sig, code):
    proc = subprocess.Popen(
        [sys.executable, "-m", "waymark", "mcp"],
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        proc.stdin.write(messages(call(2, "status")))
        proc.stdin.flush()
        for _ in range(2):  # initialize and status answered: the server is up and serving
            assert proc.stdout.readline()
        proc.send_signal(sig)
        assert proc.wait(timeout=20) == code
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
        proc.stdout.close()
    log = pathlib.Path(home.data_home(), "server.log").read_text(encoding="utf-8")
    assert f"exit {code}: signal {signal.Signals(sig).name}" in log


def test_doctor_shows_the_servers_last_exits(repo):
    serve(repo, messages())
    found = doctor.server_log()
    assert found["check"] == "server log"
    assert "exit 0: end of input" in found["detail"]


def test_a_crash_is_logged_with_its_traceback_redacted(monkeypatch):
    from waymark.server import lifecycle

    os.makedirs(home.data_home(), exist_ok=True)
    exits: list[int] = []
    monkeypatch.setattr(lifecycle.os, "_exit", exits.append)
    life = lifecycle.Life(None)
    try:
        raise RuntimeError("boom sk-proj-" + "a1B2" * 12)
    except RuntimeError as exc:
        life.crashed(exc)
    assert exits == [1]
    log = pathlib.Path(home.data_home(), "server.log").read_text(encoding="utf-8")
    assert "crash: Traceback" in log and "RuntimeError" in log
    assert "a1B2a1B2" not in log and "[REDACTED" in log
    assert "exit 1: crash: RuntimeError" in log


def test_the_direct_server_also_exits_at_eof_on_a_database_it_cannot_open(repo):
    os.makedirs(home.data_home(), exist_ok=True)
    _garbage(home.db_path())
    started = time.monotonic()
    replies, _, rc = serve(repo, messages(), direct=True)
    assert rc == 0 and time.monotonic() - started < 30
    assert replies[0]["result"]["serverInfo"]["name"] == "waymark"
