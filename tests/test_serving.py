"""The dashboard and the proxy stop on SIGTERM at any moment of their start: while the
background work they own starts (the warm socket, the loops) included, which a stop there
once left holding the process for good. Each stop is logged as an exit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest


@pytest.mark.parametrize("argv", [["ui", "--no-open"], ["proxy", "--port", "0"]])
def test_a_server_stopped_as_it_starts_exits_and_says_so(waymark_home, repo, argv):
    log = waymark_home / "server.log"
    for delay in (0.0, 0.02, 0.05, 0.1, 0.2):  # from the "start" line on, at moments through it
        proc = subprocess.Popen([sys.executable, "-m", "waymark", *argv], cwd=repo,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env={**os.environ})  # fmt: skip
        started = f"start pid={proc.pid}"
        deadline = time.monotonic() + 30
        while started not in (log.read_text() if log.exists() else ""):
            assert proc.poll() is None and time.monotonic() < deadline, "no start logged"
            time.sleep(0.005)
        time.sleep(delay)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise AssertionError(
                f"{argv[0]} held on after SIGTERM {delay} s into its start"
            ) from None
        assert f"exit pid={proc.pid}" in log.read_text()
