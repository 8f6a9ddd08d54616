"""SQL for `team_events`: the team's event log, each event applied once by its id (the
sibling of `storage.events`)."""

from __future__ import annotations

import json
from typing import Any


def add_events(conn: Any, events: list[dict[str, Any]]) -> None:
    """Append the events the server has not seen (by `event_id`), in one round."""
    rows = [
        (e["event_id"], e["at"], e["op"], e["project_key"], e["memory_id"], e["machine"],
         e.get("client"), json.dumps(e.get("payload", {})))
        for e in events
    ]  # fmt: skip
    if rows:
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO team_events (event_id, at, op, project_key, memory_id, machine,"
                " client, payload) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (event_id) DO NOTHING",
                rows,
            )


def events_after(
    conn: Any, seq: int, limit: int, *, project_keys: list[str], machine: str
) -> list[dict[str, Any]]:
    """The team's events after `seq` for these projects, oldest first, but this machine's
    own (it has them): seq, event_id, at, op, project_key, memory_id, author, machine,
    client, payload."""
    keys = ("seq", "event_id", "at", "op", "project_key", "memory_id", "author", "machine",
            "client", "payload")  # fmt: skip
    rows = conn.execute(
        "SELECT seq, event_id, at, op, project_key, memory_id, author, machine, client, payload"
        " FROM team_events"
        " WHERE seq > %s AND project_key = ANY(%s) AND machine <> %s ORDER BY seq LIMIT %s",
        (seq, project_keys, machine, limit),
    ).fetchall()
    return [dict(zip(keys, row, strict=True)) for row in rows]


def last_seq(conn: Any) -> int:
    """The newest event's seq on the server (0: none yet)."""
    row = conn.execute("SELECT coalesce(max(seq), 0) FROM team_events").fetchone()
    return int(row[0])
