"""A project's history on one time axis: its sessions (from start to end, and whether
they handed off), checkpoint saves, decisions (made, and revised), and the changes git
showed reverted; a window of days at a time, newest last, with where older and newer
windows begin.

    timeline(conn, project, days=7, before=None) -> {since, until, events, older, newer}
"""

from __future__ import annotations

from waymark.base import clock
from waymark.base import jsonlite as json
from waymark.errors import InvalidArgument
from waymark.projects.resolve import Project
from waymark.storage import timeline as rows
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

WINDOWS = {"day": 1, "week": 7, "month": 30}
MOST = 500  # of each kind in one window: a busier one says so
END_OF_TIME = "9999-12-31T23:59:59.999Z"  # where the window of now ends


def timeline(
    conn: Connection, project: Project, *, days: int = 7, before: str | None = None
) -> dict[str, Any]:
    """The events of `days` days ending at `before` (default now), oldest first."""
    if days not in WINDOWS.values():
        raise InvalidArgument(f"a window of {', '.join(str(d) for d in WINDOWS.values())} days")
    until = clock.second(clock.epoch(before)) if before else clock.now()
    since = clock.second(clock.epoch(until) - days * 86400)
    # the current window ends at no time: what happens in the very millisecond asked is in it
    found = rows.entries(conn, project.id, since, until if before else END_OF_TIME, MOST)
    events = [_said(e) for e in found]
    first = rows.first_at(conn, project.id)
    counts = {kind: sum(1 for e in events if e["kind"] == kind)
              for kind in ("session", "checkpoint", "decision", "revert")}  # fmt: skip
    return {
        "since": since,
        "until": until,
        "days": days,
        "events": events,
        "counts": counts,
        "full": [kind for kind, n in counts.items() if n >= MOST],
        "older": since if first is not None and first < since else None,
        "newer": clock.second(clock.epoch(until) + days * 86400) if before else None,
    }


def _said(e: dict[str, Any]) -> dict[str, Any]:
    """One row in words: a checkpoint's objective and next action from its body, a decision
    revised, a session's client and how it ended."""
    out = dict(e)
    if e["kind"] == "checkpoint":
        try:
            body = json.loads(e["detail"] or "{}")
        except ValueError:
            body = {}
        out["detail"] = body.get("objective") or ""
        out["next"] = body.get("next_action") or ""
    elif e["kind"] == "decision":
        out["revises"] = e["detail"]
        out["detail"] = ""
    return out
