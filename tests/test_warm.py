"""Warm recall over the local socket: real sockets, real processes where ownership is tested."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from waymark import warm
from waymark.warm.server import MAX_CONNECTIONS, _runtime_dir
from waymark.warm.server import start as server_start

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets and file modes")

# A server process for ownership tests: says whether it owns the endpoint, then serves until
# its stdin closes, as the MCP server lives as long as its client's pipe.
SERVER_SCRIPT = """
import os, sys
from waymark.warm.server import start
server = start(lambda request: {"pid": os.getpid()})
print("owner" if server else "client", flush=True)
sys.stdin.read()
"""


def echo(request):
    return {"echo": request}


@pytest.fixture
def serve():
    started = []

    def start(handler=echo, **options):
        server = server_start(handler, **options)
        assert server is not None
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def timed_ask(fields, timeout_s=0.05):
    began = time.monotonic()
    reply = warm.ask("echo", fields, timeout_s)
    return reply, time.monotonic() - began


def eventually(check, within_s=5.0) -> bool:
    deadline = time.monotonic() + within_s
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def raw_request(address, payload: bytes, family=None) -> bytes:
    """Send raw bytes and return everything the server sends back before closing."""
    family = family or (socket.AF_INET if isinstance(address, tuple) else socket.AF_UNIX)
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(address)
        sock.sendall(payload)
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except ConnectionResetError:  # closed with our bytes unread: a drop, like EOF
            pass
    return b"".join(chunks)


def frame(message: dict) -> bytes:
    data = json.dumps(message).encode("utf-8")
    return len(data).to_bytes(4, "big") + data


def unframe(data: bytes) -> dict:
    assert int.from_bytes(data[:4], "big") == len(data) - 4
    return json.loads(data[4:])


def run_server_process():
    return subprocess.Popen(
        [sys.executable, "-c", SERVER_SCRIPT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


def test_ask_returns_none_quickly_when_no_server_listens():
    reply, elapsed = timed_ask({"query": "x"})
    assert reply is None
    assert elapsed < 1.0


@posix_only
def test_ask_treats_a_stale_socket_file_as_no_server(waymark_home):
    waymark_home.mkdir(mode=0o700)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(str(waymark_home / warm.SOCK_FILE))  # closed without unlinking, like a crash
    reply, elapsed = timed_ask({"query": "x"})
    assert reply is None
    assert elapsed < 1.0


def test_ask_round_trips_a_request_without_the_protocol_fields(serve):
    serve()
    reply = warm.ask("echo", {"query": "sqlite wal", "limit": 3}, 2)
    assert reply == {"ok": True, "echo": {"query": "sqlite wal", "limit": 3, "op": "echo"}}


def test_a_request_reached_after_its_asker_stopped_waiting_is_refused_undone(serve):
    """A hook that gave up does the work itself: the server must not do it as well."""
    done = []
    server = serve(lambda request: done.append(request) or {"did": True})
    stale = frame({"v": 1, "op": "tool_result", "until": time.time() - 0.01})
    late = unframe(raw_request(server.address, stale))
    assert late == {"v": 1, "ok": False, "error": "too late: the asker stopped waiting"}
    assert done == []
    assert warm.ask("tool_result", {}, 2) == {"ok": True, "did": True}
    assert done == [{"op": "tool_result"}]  # `until` is the protocol's, not the handler's


def test_handler_exception_becomes_an_error_reply_and_the_server_keeps_serving(serve):
    def handler(request):
        if request.get("boom"):
            raise RuntimeError("model not loaded")
        return {"fine": True}

    serve(handler)
    assert warm.ask("echo", {"boom": True}, 2) == {
        "ok": False,
        "error": "RuntimeError: model not loaded",
    }
    assert warm.ask("echo", {}, 2) == {"ok": True, "fine": True}


def test_handler_returning_an_unsendable_reply_becomes_an_error_reply(serve):
    serve(lambda request: {"blob": "x" * warm.MAX_MESSAGE} if request.get("big") else [1])
    big = warm.ask("echo", {"big": True}, 2)
    assert big["ok"] is False and "exceeds" in big["error"]
    assert warm.ask("echo", {}, 2) == {
        "ok": False,
        "error": "TypeError: handler returned list, not dict",
    }


def test_oversize_request_is_refused_and_the_server_keeps_serving(serve):
    server = serve()
    assert warm.ask("echo", {"blob": "x" * warm.MAX_MESSAGE}, 2) is None
    # A peer announcing more than the cap is dropped before the server reads the body.
    claim = (warm.MAX_MESSAGE + 1).to_bytes(4, "big") + b"{}"
    assert raw_request(server.address, claim) == b""
    assert warm.ask("echo", {"after": 1}, 2) == {"ok": True, "echo": {"after": 1, "op": "echo"}}


def test_garbled_request_gets_an_error_reply(serve):
    server = serve()
    data = b"\xff not json"
    reply = unframe(raw_request(server.address, len(data).to_bytes(4, "big") + data))
    assert reply == {"v": 1, "ok": False, "error": "request is not a UTF-8 JSON object"}


def test_protocol_version_mismatch_is_refused_cleanly(serve):
    server = serve()
    reply = unframe(raw_request(server.address, frame({"v": 2, "query": "x"})))
    assert reply["ok"] is False
    assert "protocol version 2 not supported" in reply["error"]


@contextlib.contextmanager
def one_connection(home, answer):
    """A bare listener at the warm socket's path that takes one connection and hands it
    and the bytes it sent to `answer` on a thread."""
    home.mkdir(mode=0o700)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(home / warm.SOCK_FILE))
        listener.listen(1)

        def serve_once():
            conn, _ = listener.accept()
            with conn:
                answer(conn, conn.recv(65536))

        thread = threading.Thread(target=serve_once)
        thread.start()
        yield
        thread.join(5)


@posix_only
def test_ask_returns_none_for_a_reply_in_another_protocol_version(waymark_home):
    with one_connection(waymark_home, lambda conn, _: conn.sendall(frame({"v": 2, "ok": True}))):
        assert warm.ask("echo", {"query": "x"}, 2) is None


@posix_only
def test_send_says_when_its_asker_stops_waiting_and_fields_cannot_move_it(waymark_home):
    """`until` is the client's, from its deadline: a field of that name does not replace it,
    nor can one replace the op."""
    seen = []
    before = time.time()
    with one_connection(waymark_home, lambda _, data: seen.append(unframe(data))):
        pending = warm.send("prompt", {"prompt": "hi", "until": 0, "op": "other"}, 0.5)
    assert pending is not None
    pending.close()
    (request,) = seen
    assert request["op"] == "prompt" and request["prompt"] == "hi" and request["v"] == 1
    assert before + 0.5 <= request["until"] <= time.time() + 0.5


def test_slow_handler_makes_ask_give_up_at_its_deadline_and_the_server_survives(serve):
    release = threading.Event()

    def handler(request):
        if request.get("slow"):
            release.wait(5)
        return {"slow": bool(request.get("slow"))}

    serve(handler)
    reply, elapsed = timed_ask({"slow": True}, timeout_s=0.1)
    assert reply is None
    assert elapsed < 1.0
    assert warm.ask("echo", {"slow": False}, 2) == {"ok": True, "slow": False}
    release.set()


def test_requests_beyond_the_connection_cap_are_refused_at_once_not_queued(serve):
    release, blocked = threading.Event(), threading.Semaphore(0)

    def handler(request):
        if request.get("slow"):
            blocked.release()
            release.wait(5)
        return {}

    serve(handler)
    for _ in range(MAX_CONNECTIONS):
        assert warm.ask("echo", {"slow": True}, 0.05) is None
    for _ in range(MAX_CONNECTIONS):
        assert blocked.acquire(timeout=5)  # every worker is now busy
    reply, elapsed = timed_ask({}, timeout_s=2)
    assert reply is None
    assert elapsed < 1.0  # refused, not left waiting for the deadline
    release.set()
    assert eventually(lambda: warm.ask("echo", {}, 2) == {"ok": True})  # once the workers are free


def test_ask_with_an_unserialisable_request_returns_none_instead_of_raising(serve):
    serve()
    assert warm.ask("echo", {"when": object()}, 2) is None


def test_second_start_in_the_same_process_stays_a_client(serve):
    serve()
    assert server_start(echo) is None


@posix_only
def test_second_server_process_stays_client_then_takes_over_after_the_owner_is_killed(
    waymark_home,
):
    with run_server_process() as owner:
        assert owner.stdout.readline().strip() == "owner"
        second = subprocess.run(
            [sys.executable, "-c", SERVER_SCRIPT],
            input="",
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=30,
        )
        assert second.stdout.strip() == "client"
        assert warm.ask("echo", {}, 2) == {"ok": True, "pid": owner.pid}
        owner.kill()
        owner.wait(10)

    assert (waymark_home / warm.SOCK_FILE).exists()  # the crash left a stale socket behind
    reply, elapsed = timed_ask({})
    assert reply is None
    assert elapsed < 1.0

    with run_server_process() as successor:
        assert successor.stdout.readline().strip() == "owner"
        assert warm.ask("echo", {}, 2) == {"ok": True, "pid": successor.pid}
        successor.stdin.close()
        assert successor.wait(10) == 0
    assert not (waymark_home / warm.SOCK_FILE).exists()  # stopped at exit without stop()


def test_exactly_one_of_several_processes_starting_at_once_owns_the_endpoint():
    processes = [run_server_process() for _ in range(4)]
    try:
        roles = sorted(p.stdout.readline().strip() for p in processes)
        assert roles == ["client", "client", "client", "owner"]
    finally:
        for p in processes:
            p.stdin.close()
            p.wait(10)
            p.stdout.close()


@posix_only
def test_socket_file_is_owner_only_and_removed_on_stop(serve, waymark_home):
    server = serve()
    path = waymark_home / warm.SOCK_FILE
    assert server.address == str(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(waymark_home).st_mode) == 0o700
    server.stop()
    server.stop()  # idempotent
    assert not path.exists()
    assert warm.ask("echo", {}, 2) is None
    again = server_start(echo)  # ownership was released
    assert again is not None
    again.stop()


def test_tcp_transport_round_trips_with_the_token(serve, waymark_home):
    server = serve(transport="tcp")
    host, port = server.address
    assert host == "127.0.0.1"
    assert json.loads((waymark_home / warm.ADDR_FILE).read_text(encoding="utf-8")) == {"port": port}
    assert len((waymark_home / warm.TOKEN_FILE).read_text(encoding="utf-8")) == 64
    if sys.platform != "win32":
        assert stat.S_IMODE(os.stat(waymark_home / warm.TOKEN_FILE).st_mode) == 0o600
    assert warm.ask("echo", {"query": "x"}, 2) == {"ok": True, "echo": {"query": "x", "op": "echo"}}
    server.stop()
    assert not (waymark_home / warm.ADDR_FILE).exists()
    assert not (waymark_home / warm.TOKEN_FILE).exists()


def test_tcp_transport_rejects_a_wrong_or_missing_token(serve, waymark_home):
    server = serve(transport="tcp")
    wrong = unframe(raw_request(server.address, frame({"v": 1, "token": "0" * 64})))
    missing = unframe(raw_request(server.address, frame({"v": 1})))
    for reply in (wrong, missing):
        assert reply["ok"] is False and reply["error"].startswith("bad token")
    (waymark_home / warm.TOKEN_FILE).write_text("f" * 64, encoding="utf-8")
    assert warm.ask("echo", {}, 2)["error"].startswith("bad token")


def test_environment_variable_forces_the_tcp_transport(serve, monkeypatch):
    monkeypatch.setenv("WAYMARK_WARM_TRANSPORT", "tcp")
    server = serve()
    assert server.transport == "tcp"
    assert warm.ask("echo", {"n": 1}, 2) == {"ok": True, "echo": {"n": 1, "op": "echo"}}


@pytest.fixture
def short_runtime_dir(monkeypatch):
    path = tempfile.mkdtemp(prefix="wm")
    monkeypatch.setenv("XDG_RUNTIME_DIR", path)
    yield path
    shutil.rmtree(path)


@posix_only
def test_long_data_home_path_falls_back_to_a_private_runtime_socket(
    serve, monkeypatch, tmp_path, short_runtime_dir
):
    home = tmp_path / ("deep-" * 25)
    monkeypatch.setenv("WAYMARK_HOME", str(home))
    server = serve()
    socket_dir = os.path.dirname(server.address)
    assert socket_dir.startswith(short_runtime_dir)
    assert stat.S_IMODE(os.stat(socket_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(server.address).st_mode) == 0o600
    assert json.loads((home / warm.ADDR_FILE).read_text(encoding="utf-8")) == {
        "unix": server.address
    }
    assert warm.ask("echo", {"n": 2}, 2) == {"ok": True, "echo": {"n": 2, "op": "echo"}}
    server.stop()
    assert not os.path.exists(socket_dir)
    assert not (home / warm.ADDR_FILE).exists()


@posix_only
def test_runtime_dir_that_others_can_enter_is_refused(monkeypatch, tmp_path, short_runtime_dir):
    home = tmp_path / ("deep-" * 25)
    monkeypatch.setenv("WAYMARK_HOME", str(home))
    loose = _runtime_dir(str(home))
    os.chmod(loose, 0o755)
    with pytest.raises(PermissionError, match="not a private directory"):
        server_start(echo)
    os.chmod(loose, 0o700)
    server = server_start(echo)  # the failed start released the lock
    assert server is not None
    server.stop()
