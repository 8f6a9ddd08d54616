"""When the code map is brought up to date: one rule for every face, by the moment.

- `start` (SessionStart, before the packet reads the map): an existing map is refreshed
  within `map.refresh_ms`; past it (or at 0) `waymark map refresh` finishes in a background
  process, and so does a map of more files than a walk visits in that time (WALK_S_PER_FILE),
  without trying. A read-only store is never written.
- `stop` (Stop asked for a handoff: work was done and not saved): in the background, so the
  next session's map is current; the hook never waits.
- `save` (a checkpoint was saved, by the MCP tool or the CLI): now, in that process.
- `first` (the MCP server starting): the project's first map, only for a git repository
  that records (capture on or confirm) with `map.server_builds_first` on. No hook ever
  builds a first map: it could take seconds.

Each returns what happened, for the caller's log: "no map", "refreshed", "background",
"built", or "skipped: why". Without a map (the common case) nothing heavier than the one
query is imported: hooks call this.
"""

from __future__ import annotations

import time

from waymark.projects.resolve import Project
from waymark.storage.codemap import latest_files
from waymark.storage.connection import Connection, read_only

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

MOMENTS = ("start", "stop", "save", "first")
# What checking one file costs a refresh that finds nothing changed (a stat and a lookup):
# 7.6 us measured at 50,000 files on 2 cores, rounded up. A larger map than the budget
# covers goes to the background at once, instead of spending the budget first.
WALK_S_PER_FILE = 8e-6


def freshen(
    conn: Connection,
    project: Project,
    moment: str,
    spawn: Callable[[str], None] | None = None,
    *,
    most_s: float | None = None,
) -> str:
    """Bring the project's code map up to date as `moment` asks (see the module docstring).
    Never raises: the map is a nicety next to the packet, the handoff or the save, so a
    failure is "failed: why", for the caller's log. A refresh left to the background is
    started by `spawn(root)` (default: at once); SessionStart passes one that waits until
    its packet is made, so the refresh's walk of a large tree does not slow its `git
    status` (40 ms of 140 at 50,000 files). `most_s` caps the time a start may wait for the
    refresh below `map.refresh_ms` (a caller with its own deadline)."""
    if moment not in MOMENTS:
        raise ValueError(f"moment is one of {', '.join(MOMENTS)} (got {moment!r})")
    try:
        return _freshen(conn, project, moment, spawn, most_s)
    except Exception as exc:
        return f"failed: {exc!r}"


def _freshen(
    conn: Connection,
    project: Project,
    moment: str,
    spawn: Callable[[str], None] | None,
    most_s: float | None = None,
) -> str:
    if project.files is None:
        return "skipped: the project has no directory"
    mapped = latest_files(conn, project.id)
    has_map = mapped is not None
    if moment == "first":
        return _first(conn, project, has_map)
    if not has_map:
        return "no map"
    if moment == "save":
        from waymark.codemap import snapshot

        snapshot.refresh(conn, project)
        return "refreshed"
    if moment == "start":
        if read_only(conn):
            return "skipped: the store is read-only"
        from waymark import settings

        budget = settings.get(conn, "map.refresh_ms") / 1000
        if most_s is not None:
            budget = min(budget, most_s)
        if (mapped or 0) * WALK_S_PER_FILE > budget:
            (spawn or in_background)(project.files)
            return "background: too many files to check within map.refresh_ms"
        from waymark.codemap import snapshot

        try:
            snapshot.refresh(conn, project, deadline=time.perf_counter() + budget)
            return "refreshed"
        except snapshot.Overdue:
            pass
    (spawn or in_background)(project.files)
    return "background"


def _first(conn: Connection, project: Project, has_map: bool) -> str:
    from waymark import settings
    from waymark.projects.capture import policy

    if has_map:
        return "skipped: the project has a map"
    if not project.git:
        return "skipped: a folder that is no git repository is mapped only when asked (--yes)"
    if not settings.get(conn, "map.server_builds_first"):
        return "skipped: map.server_builds_first is off"
    if not policy(conn, project)["records"]:
        return "skipped: capture is off or read-only here"
    from waymark.codemap import snapshot

    done = snapshot.refresh(conn, project)
    return f"built: {done['files']} files in {done['seconds']:.1f} s"


def in_background(root: str) -> None:
    """Start `waymark map refresh` in `root` as a process of its own that nothing waits
    for (`launch.detached`)."""
    import sys

    from waymark.base.launch import detached

    code = "import os,sys;os.chdir(sys.argv.pop(1));from waymark.cli import main;main()"
    detached([sys.executable, "-I", "-c", code, root, "map", "refresh", "--quiet"])
