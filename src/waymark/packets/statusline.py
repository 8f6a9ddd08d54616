"""Claude Code's status line: what Waymark did for this session, in one line.

`memory: 3 shown · 1 used · handoff saved 2 min ago`: the records the session's packets
showed, how many of those it used (settled at each Stop), and its handoff (saved, needed
since it changed files, or the project's last one). Run by `hooks/statusline.py` after each
assistant message, so it reads three indexed counts and imports nothing heavy.
"""

from __future__ import annotations

from waymark.base import clock

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.storage.connection import Connection

IDLE = "memory: ready"
SAID = {
    "m": "min"
}  # a unit of `clock.age` as the line spells it  # a session no hook has opened yet


def status_line(conn: Connection, session_id: str, now: float | None = None) -> str:
    from waymark.storage import checkpoints, sessions

    counts = sessions.shown_and_used(conn, session_id)
    if counts is None:
        return IDLE
    project_id, shown, used, unsaved = counts
    mine, newest, marked = checkpoints.last_saves(conn, project_id, session_id)
    needed = unsaved or marked
    said = [f"memory: {shown} shown", f"{used} used"]
    if needed:
        said.append("handoff needed")
    elif mine:
        said.append(f"handoff saved {ago(mine, now)}")
    elif newest:
        said.append(f"last handoff {ago(newest, now)}")
    else:
        said.append("no handoff yet")
    return " · ".join(said)


def ago(stamp: str, now: float | None = None) -> str:
    """`just now`, `2 min ago`, `3 h ago`, `4 d ago` (`clock.age`)."""
    found = clock.age(stamp, now)
    return f"{found[0]} {SAID.get(found[1], found[1])} ago" if found else "just now"
