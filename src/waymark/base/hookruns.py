"""Every hook run, one line: the proof that the hooks fire.

`<data home>/hookruns.tsv`, owner-only, one line per hook process as it exits:

    at (UTC ISO 8601, ms) TAB client TAB event TAB outcome TAB milliseconds

outcome is `ok`, `error` (an internal error, logged in hooks.log; the client went on),
`repeat` (the same delivery came twice; the second did nothing) or `empty` (no payload).
A run Waymark starts itself to test a hook (`waymark doctor`) is recorded as the client
`self-test`, never as the client it imitates. The time is the hook's own, from its entry to
its exit (the interpreter's start is not in it). One O_APPEND write (~20 us) and no database, so a hook that finds no project still says it ran. Past
MAX_BYTES the file moves to `hookruns.tsv.1` (one kept): the two hold the last ~15,000 runs
(weeks of steady use; reading them all takes ~20 ms).
"""

from __future__ import annotations

import os
import time

from waymark import home

NAME = "hookruns.tsv"
MAX_BYTES = 512 * 1024
OUTCOMES = ("ok", "error", "repeat", "empty")
KEYS = ("at", "client", "event", "outcome", "ms")
SELF_TEST, SELF_TEST_ENV = "self-test", "WAYMARK_SELF_TEST"  # Waymark's own test runs


def path() -> str:
    return os.path.join(home.data_home(), NAME)


def append(client: str, event: str, outcome: str, ms: float) -> None:
    """Record one run; nothing when the data home does not exist. Never raises."""
    try:
        where = path()
        if not os.path.isdir(os.path.dirname(where)):
            return
        t = time.time()
        at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"
        line = f"{at}\t{_field(client)}\t{_field(event)}\t{outcome}\t{ms:.1f}\n"
        fd = os.open(where, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > MAX_BYTES:
            os.replace(where, where + ".1")
    except Exception:  # the record is a diagnostic: it never costs the hook its answer
        pass


def _field(text: str) -> str:
    return text.replace("\t", " ").replace("\n", " ")[:40]


def read() -> list[dict[str, object]]:
    """Every recorded run, oldest first: {at, client, event, outcome, ms}."""
    return [dict(zip(KEYS, run, strict=True)) for run in runs()]


def runs() -> list[tuple[str, str, str, str, float]]:
    """Every recorded run, oldest first, as (at, client, event, outcome, ms). A line that
    is not one (cut by a crash mid-write) is skipped."""
    out: list[tuple[str, str, str, str, float]] = []
    known = set(OUTCOMES)
    for name in (path() + ".1", path()):
        try:
            with open(name, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        for line in text.split("\n"):
            parts = line.split("\t")
            if len(parts) != 5 or parts[3] not in known:
                continue
            try:
                out.append((parts[0], parts[1], parts[2], parts[3], float(parts[4])))
            except ValueError:
                continue
    return out
