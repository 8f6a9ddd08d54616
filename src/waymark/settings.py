"""User settings, stored in the database as JSON values under dotted keys.

Defaults live here, in one table; `waymark config` reads and writes them.
"""

from __future__ import annotations

import apsw

from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.errors import InvalidArgument
from waymark.storage import connection as db

TYPE_CHECKING = False  # typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

DEFAULTS: dict[str, Any] = {
    "recall.half_life_days": 90.0,
    "recall.int8_queries": True,  # queries through the int8 copy of the model (quantize.py)
    "capture.all_git_repos": False,
    "packet.session_start_tokens": 1750,
    "packet.prompt_tokens": 1300,
    "checkpoint.budget_tokens": 600,
}


def get(conn: apsw.Connection, key: str) -> Any:
    if key not in DEFAULTS:
        raise InvalidArgument(f"unknown setting {key!r}; settings: {', '.join(sorted(DEFAULTS))}")
    row = conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
    return DEFAULTS[key] if row is None else json.loads(row[0])


def set_value(conn: apsw.Connection, key: str, value: Any) -> Any:
    default = get(conn, key) if key in DEFAULTS else DEFAULTS.get(key)
    kind = type(DEFAULTS[key])
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise InvalidArgument(f"{key} takes a {kind.__name__} (default {default!r})")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 0:
        raise InvalidArgument(f"{key} must be positive")
    with db.write(conn):
        conn.execute(
            "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO"
            " UPDATE SET value = excluded.value",
            (key, json.dumps(value)),
        )
    return value


def all_values(conn: apsw.Connection) -> dict[str, Any]:
    stored = {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM settings")}
    return {k: stored.get(k, default) for k, default in DEFAULTS.items()}
