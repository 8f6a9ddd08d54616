"""Edits and failed commands a hook could not record because the database was locked: kept
in a small spool in the data folder and recorded by the next hook, so no captured work is
lost and Stop still sees what the session changed.

A spooled event is what `ledger.record_tool` would have been given, its command and error
redacted and cut exactly as the ledger does (nothing unredacted touches disk), one owner-only
JSON file each, written atomically. Every hook first records what waits, oldest first; while
the database stays locked they wait on; one that fails for another reason is renamed
`.bad` (and logged), never replayed in a loop.
"""

from __future__ import annotations

import os
import time

from waymark import home
from waymark.base import jsonlite as json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .event import Event

SPOOL_DIR = "spool"
KEPT_MAX = 1000  # past this many waiting events, the oldest are dropped (and logged)


def busy(exc: BaseException) -> bool:
    """The database was locked by another process (apsw's BusyError or LockedError)."""
    return type(exc).__name__ in ("BusyError", "LockedError")


def folder() -> str:
    return os.path.join(home.data_home(), SPOOL_DIR)


def keep(event: Event, kwargs: dict[str, Any]) -> str:
    """Spool one event's `record_tool` arguments; the file's path."""
    from waymark.base import redact
    from waymark.handoff.ledger import COMMAND_MAX, ERROR_TAIL

    kept = dict(kwargs)
    if kept.get("command"):
        kept["command"] = redact.scrub_cut(kept["command"], COMMAND_MAX)[0]
    if kept.get("error"):
        kept["error"] = redact.scrub_cut(kept["error"], ERROR_TAIL, tail=True)[0]
    kept["paths"] = list(kept.get("paths") or ())
    record = {
        "client": event.client, "name": event.name, "session_id": event.session_id,
        "cwd": event.cwd, "kwargs": kept,
    }  # fmt: skip
    where = folder()
    os.makedirs(where, mode=0o700, exist_ok=True)
    name = f"{time.time_ns():020d}-{os.getpid()}.json"
    tmp = os.path.join(where, "." + name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, json.dumps(record).encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    path = os.path.join(where, name)
    os.replace(tmp, path)
    return path


def waiting() -> list[str]:
    """The spooled events, oldest first ([] without a spool: one failed stat)."""
    try:
        names = os.listdir(folder())
    except OSError:
        return []
    return [os.path.join(folder(), n) for n in sorted(names) if n.endswith(".json")]


def replay(log: Callable[[str, str], None], context: Callable[[Event], Any]) -> int:
    """Record what waits (oldest first) until the database is locked again; how many.
    `context` makes the hook's Context for an event (runtime's, handed in: no circle)."""
    found = waiting()
    if not found:
        return 0
    for stale in found[:-KEPT_MAX] if len(found) > KEPT_MAX else []:
        log("spool", f"dropped {os.path.basename(stale)}: more than {KEPT_MAX} waiting")
        os.unlink(stale)
    done = 0
    for path in found[-KEPT_MAX:]:
        try:
            _record(path, context)
        except BaseException as exc:
            if busy(exc):
                break  # still locked: they wait for the next hook
            log("spool", f"{os.path.basename(path)} could not be recorded: {exc!r}")
            os.replace(path, path + ".bad")
            continue
        os.unlink(path)
        done += 1
    return done


def _record(path: str, context: Callable[[Event], Any]) -> None:
    from waymark.handoff.ledger import record_tool

    from .event import Event

    with open(path, encoding="utf-8") as f:
        data = json.loads(f.read())
    event = Event(client=data["client"], name=data["name"], session_id=data["session_id"],
                  cwd=data["cwd"])  # fmt: skip
    ctx = context(event)
    try:
        if ctx.capturing() and ctx.records:
            record_tool(ctx.conn, ctx.project, event.session_id, event.client, **data["kwargs"])
    finally:
        ctx.close()
