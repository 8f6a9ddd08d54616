"""Retention: what a sweep archives (a zone recall leaves out, reversible) and purges (a
tombstone), and why. Nothing happens unless asked: `waymark sweep` (with `--dry-run` to see
the plan), or the schedule a user sets (`retention.schedule`), which the MCP server keeps.

Salience is remem-mcp's: exp(-λ·age) + σ·ln(1 + uses)·exp(-μ·days since last use), with λ
from `recall.half_life_days` (the same half-life recall decays by), σ = 0.5, μ from a
30-day half-life. An active memory is archived when it is past its `valid_until` (a hard
stop), or when nothing used it for `retention.archive_after_days` and its salience is under
`retention.salience_floor`. An archived memory is purged (its payload erased, a tombstone
kept) once it has stayed archived and unused for `retention.purge_after_days`.

Exempt from both, except expiry: pinned memories, decisions and conventions, anything a
person raised (priority above 0) or tagged `verified`, anything whose latest observation
reports it implemented or passing (`waymark observe`), and anything whose evidence names a
file that still exists in the project (fresh evidence).
"""

from __future__ import annotations

import math
import os

from waymark.base import clock
from waymark.projects.resolve import Project
from waymark.projects.sharing import is_shared
from waymark.storage import connection as db
from waymark.storage.connection import Connection
from waymark.storage.events import last_event_at, log_event
from waymark.storage.memories import is_personal, retention_rows
from waymark.storage.observations import reported_built

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

SIGMA = 0.5
USE_HALF_LIFE_DAYS = 30.0
EXEMPT_TYPES = ("decision", "convention")
DAY = 86400.0
PERIODS = {"daily": DAY, "weekly": 7 * DAY}


def salience(age_days: float, uses: int, since_use_days: float, half_life_days: float) -> float:
    lam = math.log(2) / half_life_days
    mu = math.log(2) / USE_HALF_LIFE_DAYS
    return math.exp(-lam * age_days) + SIGMA * math.log1p(uses) * math.exp(-mu * since_use_days)


def _knobs(conn: Connection) -> dict[str, float]:
    from waymark import settings

    return {
        "half_life_days": float(settings.get(conn, "recall.half_life_days")),
        "archive_after_days": float(settings.get(conn, "retention.archive_after_days")),
        "salience_floor": float(settings.get(conn, "retention.salience_floor")),
        "purge_after_days": float(settings.get(conn, "retention.purge_after_days")),
    }


def _exempt(memory: dict[str, Any], root: str | None, built: set[str]) -> str | None:
    """Why a memory is kept whatever its salience, or None. `built`: the memories whose
    latest observation reports them implemented or passing."""
    if memory["pinned"]:
        return "pinned"
    if memory["type"] in EXEMPT_TYPES:
        return f"a {memory['type']}"
    if memory["priority"] > 0:
        return "raised priority"
    if "verified" in memory["tags"]:
        return "verified"
    if memory["id"] in built:
        return "reported implemented or passing"
    for item in memory["evidence"]:
        path = item.get("path") if isinstance(item, dict) else None
        if path and root and os.path.exists(os.path.join(root, path)):
            return f"fresh evidence ({path})"
    return None


def plan(conn: Connection, project: Project, now: float | None = None) -> dict[str, Any]:
    """What a sweep would do now: {archive: [...], purge: [...], kept: {why: n}, settings}.
    Each entry: id, type, title, why, and the salience it was weighed at."""
    now = clock.epoch(clock.now()) if now is None else now
    knobs = _knobs(conn)
    today = clock.second(now)
    archive: list[dict[str, Any]] = []
    purge: list[dict[str, Any]] = []
    kept: dict[str, int] = {}
    built = reported_built(conn, project.id)
    shared = is_shared(project.files)  # the team's memories are the team's to retire
    for m in retention_rows(conn, project.id):
        if shared and not is_personal(conn, m["id"]):
            kept["the team's"] = kept.get("the team's", 0) + 1
            continue
        born = clock.epoch(m["event_time"] or m["created_at"])
        used = clock.epoch(m["last_used"]) if m["last_used"] else None
        quiet_days = (now - (used or born)) / DAY
        score = salience((now - born) / DAY, m["uses"], quiet_days, knobs["half_life_days"])
        entry = {
            "id": m["id"], "type": m["type"], "title": m["title"],
            "salience": round(score, 3), "uses": m["uses"], "last_used": m["last_used"],
        }  # fmt: skip
        if m["status"] == "active":
            if m["valid_until"] and m["valid_until"] < today:
                archive.append({**entry, "why": f"expired on {m['valid_until'][:10]}"})
                continue
            why = _exempt(m, project.files, built)
            if why is not None:
                kept[why.split(" (")[0]] = kept.get(why.split(" (")[0], 0) + 1
                continue
            if quiet_days >= knobs["archive_after_days"] and score < knobs["salience_floor"]:
                archive.append(
                    {**entry, "why": f"unused for {quiet_days:.0f} days, salience {score:.2f}"
                     f" < {knobs['salience_floor']:g}"}
                )  # fmt: skip
            continue
        archived_at = clock.epoch(m["updated_at"])
        archived_days = (now - archived_at) / DAY
        if _exempt(m, project.files, built) is not None:
            continue
        if archived_days >= knobs["purge_after_days"] and (used is None or used <= archived_at):
            purge.append({**entry, "why": f"archived and unused for {archived_days:.0f} days"})
    return {"archive": archive, "purge": purge, "kept": kept, "settings": knobs}


def sweep(
    conn: Connection, project: Project, *, actor: str = "user", now: float | None = None
) -> dict[str, Any]:
    """Carry out the plan in one transaction (each change in the audit log, with why);
    what it did, in the plan's shape."""
    from waymark.memories import store

    with db.write(conn):
        done = plan(conn, project, now)
        for entry in done["archive"]:
            store.archive_in(
                conn, project, entry["id"], actor=actor, reason=f"sweep: {entry['why']}"
            )
        for entry in done["purge"]:
            store.erase_in(conn, project, entry["id"], actor=actor, reason=f"sweep: {entry['why']}")
        log_event(
            conn, "sweep", project_id=project.id, actor=actor,
            archived=len(done["archive"]), purged=len(done["purge"]),
        )  # fmt: skip
    if done["purge"]:
        from waymark.recall import ann

        db.checkpoint_wal(conn)  # the erased pages leave the WAL too
        ann.scrub(conn)  # and their quantised vectors the approximate index file
    return done


def due(conn: Connection, project: Project, now: float | None = None) -> bool:
    """True when the user's schedule (`retention.schedule`) says a sweep is due."""
    from waymark import settings

    period = PERIODS.get(str(settings.get(conn, "retention.schedule")))
    if period is None:
        return False
    last = last_event_at(conn, "sweep", project.id)
    now = clock.epoch(clock.now()) if now is None else now
    return last is None or now - clock.epoch(last) >= period
