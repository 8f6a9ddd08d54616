"""`waymark mcp` as a real process: it owns warm recall, stays a client when another server
does, and exits with its client, leaving nothing behind."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from waymark import home
from waymark.recall import warm


def start_server(cwd):
    return subprocess.Popen(
        [sys.executable, "-m", "waymark", "mcp"],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


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
            lambda: (
                warm.ask({"op": "semantic", "project_id": "x", "queries": ["q"]}, 0.5) is not None
            )
        ), "first server never answered"
        sock = os.path.join(home.data_home(), warm.SOCK_FILE)
        second = start_server(repo)
        time.sleep(1.0)
        assert second.poll() is None  # still serving MCP, as a client of warm recall
        second.stdin.close()
        assert second.wait(timeout=20) == 0
        # The first still owns the endpoint (while it loads the model, a reply can take >0.5 s).
        assert wait_for(
            lambda: (
                warm.ask({"op": "semantic", "project_id": "x", "queries": ["q"]}, 0.5) is not None
            ),
            5.0,
        ), "the first server stopped answering when the second exited"
        first.stdin.close()  # the client goes away: so does the server
        assert first.wait(timeout=20) == 0
        assert first.stdout.read() == b""  # nothing but protocol, and no protocol was asked
        assert not os.path.exists(sock)
        assert warm.ask({"op": "semantic", "project_id": "x", "queries": ["q"]}, 0.2) is None
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
            if proc is not None:
                for stream in (proc.stdout, proc.stderr, proc.stdin):
                    if stream and not stream.closed:
                        stream.close()
