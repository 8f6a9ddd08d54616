"""How `waymark mcp` ends, and the lines it leaves in `server.log` about it.

A server a client started dies unseen: its stderr goes wherever the client puts it. So its
start, its exit with the reason (end of input, a signal, a crash) and a crash's traceback
are lines of `server.log` in the data folder, redacted and bounded like `hooks.log`.

Leaving is always `os._exit`: a model still loading on a background thread must not hold
the exit (or crash it, as onnxruntime can when finalised mid-load), and the SDK's stdin
reader thread would hold a signal's exit forever. Nothing outlives the server.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from waymark import __version__
from waymark.base import logfile

LOG_NAME = "server.log"
SIGNALS = {"SIGINT": 130, "SIGTERM": 143, "SIGHUP": 129}


class Life:
    """One server process's start and end."""

    def __init__(self, before_exit: Callable[[], None] | None) -> None:
        self.before_exit = before_exit
        self.state: Any = None  # the server's State, closed on the way out
        self.started = time.monotonic()
        self._leaving = threading.Lock()
        self.note(f"start: Waymark {__version__}, cwd {os.getcwd()}")

    def trap_signals(self) -> None:
        """A signal ends the server at once, logged (the SDK would wait on its stdin)."""
        for name, code in SIGNALS.items():
            number = getattr(signal, name, None)
            if number is not None:
                signal.signal(number, self._on_signal(name, code))

    def note(self, message: str) -> None:
        logfile.append(LOG_NAME, "mcp", message)

    def _on_signal(self, name: str, code: int) -> Callable[[int, Any], None]:
        def handler(_number: int, _frame: Any) -> None:
            self.leave(code, f"signal {name}")

        return handler

    def crashed(self, exc: BaseException) -> None:
        if isinstance(exc, KeyboardInterrupt):
            return self.leave(130, "signal SIGINT")
        if isinstance(exc, SystemExit) and exc.code in (0, None):
            return self.leave(0, "end of input")
        trace = "".join(traceback.format_exception(exc)).replace("\n", " | ")
        logging.getLogger("waymark.server").error("crashed: %r", exc)
        self.note(f"crash: {trace}")
        self.leave(1, f"crash: {type(exc).__name__}")

    def leave(self, code: int, why: str) -> None:
        """Close, flush, log the exit and end the process (once, from any thread)."""
        if not self._leaving.acquire(blocking=False):
            return
        try:
            if self.state is not None:
                self.state.close()
        except Exception as exc:  # closing must not keep the process
            self.note(f"close: {exc!r}")
        self.note(f"exit {code}: {why}, after {time.monotonic() - self.started:.1f} s")
        logging.shutdown()
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        if self.before_exit is not None and code == 0:
            self.before_exit()  # the server's last replies reach the client
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()
        os._exit(code)
