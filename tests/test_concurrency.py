"""Concurrent writers as real processes on one file (a small run of bench/concurrency.py)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

BENCH = pathlib.Path(__file__).parents[1] / "bench" / "concurrency.py"


def test_racing_writer_processes_lose_nothing_and_conflict_cleanly():
    out = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--workers",
            "4",
            "--writes",
            "60",
            "--chains",
            "2",
            "--window-ms",
            "3",
        ],  # each supersede waits 3 ms after reading the head: they race
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )
    figures = dict(line.split(None, 1) for line in out.stdout.splitlines() if line.strip())
    assert out.returncode == 0, out.stdout + out.stderr
    assert figures["lost"] == "0" and figures["unexpected_errors"] == "0"
    assert figures["forked_chains"] == "0" and figures["integrity_check"] == "ok"
    assert int(figures["writes_acknowledged"]) == int(figures["rows_found"]) > 0
    assert int(figures["conflicts_expected"]) > 0  # the races really happened
