"""`waymark mcp` as a real process: it owns warm recall, stays a client when another server
does, and exits with its client, leaving nothing behind."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time

from waymark import home, warm


def start_server(cwd):
    return subprocess.Popen(
        [sys.executable, "-m", "waymark", "mcp"],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@contextlib.contextmanager
def serving(cwd):
    """`waymark mcp` running in `cwd` until the block ends (its client goes away)."""
    server = start_server(cwd)
    try:
        yield server
    finally:
        server.stdin.close()
        server.wait(timeout=20)
        for stream in (server.stdout, server.stderr):
            stream.close()


def wait_for(predicate, seconds=20.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_the_server_owns_warm_recall_and_exits_with_its_client(repo):
    first = start_server(repo)
    second = None
    try:
        assert wait_for(
            lambda: warm.ask("semantic", {"project_id": "x", "queries": ["q"]}, 0.5) is not None
        ), "first server never answered"
        sock = os.path.join(home.data_home(), warm.SOCK_FILE)
        second = start_server(repo)
        time.sleep(1.0)
        assert second.poll() is None  # still serving MCP, as a client of warm recall
        second.stdin.close()
        assert second.wait(timeout=20) == 0
        # The first still owns the endpoint (while it loads the model, a reply can take >0.5 s).
        assert wait_for(
            lambda: warm.ask("semantic", {"project_id": "x", "queries": ["q"]}, 0.5) is not None,
            5.0,
        ), "the first server stopped answering when the second exited"
        first.stdin.close()  # the client goes away: so does the server
        assert first.wait(timeout=20) == 0
        assert first.stdout.read() == b""  # nothing but protocol, and no protocol was asked
        assert not os.path.exists(sock)
        assert warm.ask("semantic", {"project_id": "x", "queries": ["q"]}, 0.2) is None
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
            if proc is not None:
                for stream in (proc.stdout, proc.stderr, proc.stdin):
                    if stream and not stream.closed:
                        stream.close()


def _stop(proc):
    proc.stdin.close()
    assert proc.wait(timeout=20) == 0
    for stream in (proc.stdout, proc.stderr):
        stream.close()


def test_the_server_builds_a_captured_projects_first_code_map_in_the_background(
    conn, enabled, repo
):
    from waymark.codemap import snapshot

    server = start_server(repo)
    try:
        assert wait_for(lambda: snapshot.rows.latest_seq(conn, enabled.id) is not None, 30.0), (
            "the server built no first map"
        )
        seq = snapshot.rows.latest_seq(conn, enabled.id)
        assert wait_for(lambda: snapshot.rows.resolved(conn, seq), 30.0)
        files = snapshot.rows.files_of(conn, seq)
        assert "src/pkg/core.py" in files  # the repository, as `waymark map refresh` maps it
    finally:
        _stop(server)


def test_the_server_builds_no_map_when_told_not_to_or_where_capture_is_off(conn, enabled, repo):
    from waymark import settings
    from waymark.codemap import snapshot
    from waymark.projects import capture

    settings.set_value(conn, "map.server_builds_first", False)
    server = start_server(repo)
    time.sleep(3.0)
    _stop(server)
    assert snapshot.rows.latest_seq(conn, enabled.id) is None
    settings.set_value(conn, "map.server_builds_first", True)
    capture.set_enabled(conn, enabled, False)
    server = start_server(repo)
    time.sleep(3.0)
    _stop(server)
    assert snapshot.rows.latest_seq(conn, enabled.id) is None
