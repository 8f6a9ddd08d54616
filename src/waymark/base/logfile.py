"""Waymark's own log files in the data folder (`hooks.log`, `server.log`): one line per call,
redacted, owner-only, rotated once at a size bound. Writing a line never raises: a log that
cannot be written must not become an error of its own.

Hooks import this on every event, so it needs only `os`; the redactor (which brings `re`)
loads with the first line written, which a healthy hook never writes.
"""

from __future__ import annotations

import os

from waymark import home
from waymark.base import clock

MAX_BYTES = 512 * 1024
LINE_CHARS = 2000


def append(filename: str, name: str, message: str, *, max_bytes: int = MAX_BYTES) -> None:
    """`<time> <name> pid=<pid> <message>` as one redacted line of `filename`."""
    try:
        folder = home.data_home()
        if not os.path.isdir(folder):
            return
        from waymark.base.redact import scrub

        path = os.path.join(folder, filename)
        if os.path.exists(path) and os.path.getsize(path) > max_bytes:
            os.replace(path, path + ".1")
        text, _ = scrub(f"{name} pid={os.getpid()} {message}")
        line = f"{clock.now()} {text}".replace("\r", " ").replace("\n", " ")[:LINE_CHARS]
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (line + "\n").encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:  # see the module docstring
        pass


def tail(filename: str, lines: int) -> list[str]:
    """The last `lines` lines of `filename`, its rotated copy included."""
    path = os.path.join(home.data_home(), filename)
    found: list[str] = []
    for candidate in (path + ".1", path):
        try:
            with open(candidate, encoding="utf-8", errors="replace") as f:
                found += f.read().splitlines()
        except OSError:
            continue
    return found[-lines:]
