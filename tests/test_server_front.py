"""`waymark mcp` answers the handshake before its heavy imports, exactly as the real server
would, and passes every other message through to it, so an early tool call still works."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from waymark.server import front

posix_only = pytest.mark.skipif(os.name != "posix", reason="the front needs POSIX pipes")


def start(cwd, env=None):
    return subprocess.Popen(
        [sys.executable, "-m", "waymark", "mcp"],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )


def stop(proc):
    """Close the server's stdin (the client leaves), wait for it, close its pipes."""
    if not proc.stdin.closed:
        proc.stdin.close()
    try:
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def send(proc, message):
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def initialize(protocol="2025-06-18", id=1):
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": {
            "protocolVersion": protocol,
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }


def replies(proc, count, timeout=60.0):
    """The next `count` messages the server writes (each a line)."""
    out = []
    deadline = time.monotonic() + timeout
    while len(out) < count:
        assert time.monotonic() < deadline, f"only {out} before the timeout"
        line = proc.stdout.readline()
        assert line, f"the server closed its output after {out}"
        out.append(json.loads(line))
    return out


def test_the_recorded_handshake_is_what_the_real_server_answers(tmp_path):
    recorded = json.loads(Path(front.HANDSHAKE).read_text(encoding="utf-8"))
    assert front._recorded() == recorded  # this Waymark's, this SDK's
    assert set(recorded["initialize"]) == set(recorded["tools"])
    assert len(recorded["tools"][recorded["latest"]]["tools"]) == 5
    for protocol in recorded["initialize"]:
        live = front.ask_direct(protocol, subprocess)
        assert live == (recorded["initialize"][protocol], recorded["tools"][protocol]), (
            "handshake.json is stale: run `python -m waymark.server.front --record`"
        )


@posix_only
def test_the_handshake_is_answered_before_the_real_server_has_loaded(repo):
    proc = start(repo)
    try:
        began = time.monotonic()
        send(proc, initialize())
        (answer,) = replies(proc, 1)
        took = time.monotonic() - began
        assert answer["id"] == 1
        assert answer["result"]["serverInfo"]["name"] == "waymark"
        send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        (tools,) = replies(proc, 1)
        names = {t["name"] for t in tools["result"]["tools"]}
        assert {"recall", "remember", "checkpoint", "status"} <= names
        # The SDK alone takes longer than this to import; the answer did not wait for it.
        assert took < 0.6, f"the handshake took {took:.2f} s"
    finally:
        stop(proc)


@posix_only
def test_a_tool_call_sent_at_once_is_answered_by_the_real_server(repo, waymark_home):
    proc = start(repo)
    try:
        send(proc, initialize())
        send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        send(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "status", "arguments": {}},
            },
        )
        got = {r["id"]: r for r in replies(proc, 3)}
        assert sorted(got) == [1, 2, 3]  # and nothing for the front's own replayed initialize
        assert got[3]["result"].get("isError") is not True, got[3]
        report = got[3]["result"]["structuredContent"]
        assert report["project"]["root"] == str(repo)
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        assert proc.stdout.read() == b""
    finally:
        stop(proc)


@posix_only
def test_an_unknown_protocol_version_gets_the_latest_one_as_the_real_server_would(repo):
    recorded = json.loads(Path(front.HANDSHAKE).read_text(encoding="utf-8"))
    proc = start(repo)
    try:
        send(proc, initialize(protocol="1999-01-01"))
        (answer,) = replies(proc, 1)
        assert answer["result"] == recorded["initialize"][recorded["latest"]]
    finally:
        stop(proc)


def test_without_a_recording_for_this_version_the_real_server_answers_everything(
    monkeypatch, tmp_path
):
    stale = tmp_path / "handshake.json"
    data = json.loads(Path(front.HANDSHAKE).read_text(encoding="utf-8"))
    stale.write_text(json.dumps({**data, "mcp": "0.0.1"}), encoding="utf-8")
    monkeypatch.setattr(front, "HANDSHAKE", str(stale))
    assert front._recorded() is None
    stale.write_text("{not json", encoding="utf-8")
    assert front._recorded() is None


def test_every_tool_publishes_a_typed_output_schema():
    recorded = json.loads(Path(front.HANDSHAKE).read_text(encoding="utf-8"))
    for tool in recorded["tools"][recorded["latest"]]["tools"]:
        schema = tool["outputSchema"]
        assert schema["type"] == "object" and schema["properties"], tool["name"]
        assert not schema["title"].endswith("DictOutput"), f"{tool['name']} returns a bare dict"


def test_the_tools_offer_exactly_the_librarys_choices():
    """The MCP schemas spell out the closed sets the library checks: one list each."""
    from typing import get_args

    from waymark.cli.checkpoint import OPERATIONS
    from waymark.handoff.checkpoints import EVENT_TYPES
    from waymark.memories.kinds import TYPES
    from waymark.memories.links import KINDS
    from waymark.memories.scope import SCOPES
    from waymark.server import checkpoint_tool, memory_tools

    assert get_args(memory_tools.MemoryType) == TYPES
    assert get_args(memory_tools.Scope) == SCOPES
    assert memory_tools.LINKS.startswith("[{id, kind: " + "|".join(KINDS) + "}]")
    assert get_args(checkpoint_tool.EventKind) == tuple(EVENT_TYPES)
    from waymark.cli.task import OPERATIONS as TASK_OPERATIONS

    # the tool's operations: `waymark checkpoint`'s, then `waymark task`'s (its `subtask` makes
    # one subtask, `split` several; the board and `done` are the command line's reading)
    ours = get_args(checkpoint_tool.Operation)
    assert ("show", *ours[: len(OPERATIONS) - 1]) == OPERATIONS
    assert ours[len(OPERATIONS) - 1 :] == ("claim", "release", "assign", "subtask")
    assert set(TASK_OPERATIONS) == {"list", "claim", "release", "assign", "split", "done"}


@posix_only
def test_run_by_hand_it_says_what_it_waits_for_and_ends_at_eof(repo):
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "waymark", "mcp"],
        cwd=repo,
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(follower)
    try:
        os.write(leader, b"\x04")  # Ctrl-D: end of input
        assert proc.wait(timeout=30) == 0
        assert b"waiting for an MCP client" in proc.stderr.read()
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
