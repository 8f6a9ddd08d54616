"""The clock and ids: UTC stamps as sortable text, and ULIDs.

No datetime import: hooks pay for every module.
"""

from __future__ import annotations

import os
import time


def now() -> str:
    """UTC time as sortable ISO 8601 with milliseconds."""
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


def second(t: float | None = None) -> str:
    """UTC time `t` (default now) as sortable ISO 8601 to the second, `.000Z`: the form
    compared with `valid_until`, so that a packet does not change within a second."""
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() if t is None else t))


def ago(days: float) -> str:
    """UTC time `days` before now, in `now()`'s form."""
    t = time.time() - days * 86400
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


def later(seconds: float) -> str:
    """UTC time `seconds` after now, in `now()`'s form."""
    t = time.time() + seconds
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


def compact() -> str:
    """UTC time now as `20261130T041502Z`, for file names."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_id() -> str:
    """A ULID: 26 characters, sortable by creation time, unique without coordination."""
    n = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    return "".join(_CROCKFORD[(n >> shift) & 31] for shift in range(125, -1, -5))


def epoch(stamp: str) -> float:
    """Seconds since 1970 of a UTC 'YYYY-MM-DDTHH:MM:SS...' string."""
    y, mo, d = int(stamp[0:4]), int(stamp[5:7]), int(stamp[8:10])
    h = int(stamp[11:13]) if len(stamp) >= 13 else 0
    mi = int(stamp[14:16]) if len(stamp) >= 16 else 0
    s = int(stamp[17:19]) if len(stamp) >= 19 else 0
    y -= mo <= 2  # days from the civil calendar (H. Hinnant's algorithm)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (mo + (-3 if mo > 2 else 9)) + 2) // 5 + d - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    return float(days * 86400 + h * 3600 + mi * 60 + s)


AGE_UNITS = (("y", 365 * 86400), ("mo", 30 * 86400), ("d", 86400), ("h", 3600), ("m", 60))


def age(stamp: str, now: float | None = None) -> tuple[int, str] | None:
    """How long ago `stamp` was, in its largest whole unit of AGE_UNITS: (3, "d"); None
    under a minute."""
    seconds = max(0.0, (time.time() if now is None else now) - epoch(stamp))
    for unit, size in AGE_UNITS:
        if seconds >= size:
            return int(seconds // size), unit
    return None
