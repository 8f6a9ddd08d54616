"""The background loops of a long-lived process (`Host`), each on a daemon thread of its own,
behind the hooks (a lower priority), on a connection of its own: a failure is a log line,
never the process's end. Each runs for the project at the host's working directory.

- the first code map of a captured project, so no hook waits for it;
- the whole file read once, so damage no query has touched stops writes now;
- the retention sweep the user scheduled;
- outcomes and notes from the repository, at the start and every OUTCOMES_S;
- dbt's artifacts, within DBT_S of a run;
- the team sync the user scheduled.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

from waymark import errors
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage.connection import Connection


class Host(Protocol):
    """What a loop needs of its host (`daemon.host.Host`)."""

    def stopping(self, seconds: float) -> bool: ...
    def project(
        self, conn: Connection, spec: str | None, *, create: bool = True, bind: bool = True
    ) -> Project: ...


log = logging.getLogger("waymark.server")

FIRST_MAP_TRIES = 10  # the project may appear with the client's SessionStart, just after
FIRST_MAP_WAIT_S = 1.0
OUTCOMES_FIRST_S = 5.0  # after the start: the tools and the first map go first
OUTCOMES_S = 1800.0  # then every half hour while the process runs
DBT_S = 60.0  # how soon a dbt run's results reach the packets
NO_PROJECT_S = 30.0  # how soon a loop looks again for a project that is not there yet


def start(host: Host) -> None:
    """Each loop on a thread of its own. A loop reads the project at the host's directory
    once someone bound it (a hook, a tool, `waymark enable`): never binds one itself, so a
    dashboard or a proxy started in any folder leaves no project behind."""
    for name, loop in (("check", check_file), ("sweep", scheduled_sweep), ("map", first_map),
                       ("team", team_sync), ("outcomes", outcomes), ("dbt", dbt)):  # fmt: skip
        threading.Thread(target=loop, args=(host,), name=f"waymark-{name}", daemon=True).start()


def every(
    host: Host, first_s: float, period: float, failed: str,
    work: Callable[[Connection, Project], float | None], *, no_project_s: float = NO_PROJECT_S,
) -> None:  # fmt: skip
    """The one loop: after `first_s`, run `work` on the host's project on a connection of its
    own, then every `period` (or after the seconds `work` returns) until the host closes.
    No project there yet: looked for again after `no_project_s` at most; a failure is a log
    line, and the loop goes on."""
    from waymark.base.launch import behind_the_hooks

    behind_the_hooks()  # this thread only: the tools and the hooks go first
    wait = first_s
    while not host.stopping(wait):
        wait = period
        conn = None
        try:
            conn = db.connect()
            again = work(conn, host.project(conn, None, create=False, bind=False))
            wait = period if again is None else again
        except errors.NotFound:
            wait = min(period, no_project_s)
        except Exception as exc:  # background work: log, never take the process down
            log.warning("%s: %s", failed, exc)
        finally:
            if conn is not None:
                conn.close()


def once(host: Host, failed: str, work: Callable[[Connection, Project], None],
         tries: int = 1) -> None:  # fmt: skip
    """`work` once on the host's project, looked for up to `tries` times FIRST_MAP_WAIT_S
    apart (it may appear with the client's SessionStart, just after the start)."""
    from waymark.base.launch import behind_the_hooks

    behind_the_hooks()
    conn = None
    try:
        conn = db.connect()
        for attempt in range(tries):
            try:
                project = host.project(conn, None, create=False, bind=False)
                break
            except errors.NotFound:
                if attempt == tries - 1 or host.stopping(FIRST_MAP_WAIT_S):
                    return  # no project here: nothing to do
        work(conn, project)
    except Exception as exc:  # background work: log, never take the process down
        log.warning("%s: %s", failed, exc)
    finally:
        if conn is not None:
            conn.close()


def first_map(host: Host) -> None:
    """A captured project's first code map, built here so no hook waits for it
    (`map.server_builds_first`); the hooks keep it up to date from then on."""
    from waymark.codemap.freshness import freshen

    def work(conn: Connection, project: Project) -> None:
        said = freshen(conn, project, "first")
        if said.startswith("failed"):
            log.warning("the first code map could not be built: %s", said)
        elif said.startswith("built"):
            log.info("first code map %s", said)

    once(host, "the first code map could not be built", work, FIRST_MAP_TRIES)


def check_file(host: Host) -> None:
    """Read every page once per start, in the background: damage no query has touched yet
    stops writes now, not after more work has gone into a failing file. Behind the hooks: at
    a million memories it reads 3 GB for 7 s, the session's first prompts."""
    from waymark.base.launch import behind_the_hooks

    behind_the_hooks()
    try:
        problem = db.scan_for_damage()
    except Exception as exc:  # background work: log, never take the process down
        log.warning("database check could not run: %s", exc)
        return
    if problem:
        log.error("the database is damaged (%s); writes are stopped", problem)


def scheduled_sweep(host: Host) -> None:
    """The retention sweep the user scheduled (`retention.schedule`), when it is due, once
    at the start."""
    from waymark.curation import retention

    def work(conn: Connection, project: Project) -> None:
        if retention.due(conn, project):
            done = retention.sweep(conn, project, actor="schedule")
            log.info("scheduled sweep: %d archived, %d purged",
                     len(done["archive"]), len(done["purge"]))  # fmt: skip

    once(host, "scheduled sweep could not run", work)


def outcomes(host: Host) -> None:
    """What the repository says, read at each start and every OUTCOMES_S after: what became
    of the changes the project's decisions, lessons and checkpoints led to
    (`curation.outcomes`), and its notes' index (`knowledge.notes`)."""
    from waymark.curation import outcomes as library
    from waymark.knowledge import notes

    def work(conn: Connection, project: Project) -> None:
        done = library.refresh(conn, project)
        if done["changed"]:
            log.info("outcomes: %d changed (%d held, %d reverted)",
                     done["changed"], done["held"], done["reverted"])  # fmt: skip
        read = notes.refresh(conn, project)
        if read["added"] or read["changed"] or read["removed"]:
            log.info("notes: %d added, %d changed, %d removed (%d sections)",
                     read["added"], read["changed"], read["removed"], read["sections"])  # fmt: skip

    every(host, OUTCOMES_FIRST_S, OUTCOMES_S, "outcomes could not be read from git", work)


def dbt(host: Host) -> None:
    """What dbt last wrote (`knowledge.dbt`): read at the start and again within DBT_S of
    each dbt run (a stat of each artifact when nothing changed), so the packets name the
    failing tests of the latest run."""
    from waymark.knowledge import dbt as library

    def work(conn: Connection, project: Project) -> None:
        for found in library.refresh(conn, project)["projects"]:
            if found["read"] or found["problems"]:
                log.info("dbt %s: read %s%s", found["root"] or ".",
                         ", ".join(found["read"]) or "nothing",
                         "; " + "; ".join(found["problems"]) if found["problems"] else "")  # fmt: skip

    every(host, OUTCOMES_FIRST_S, DBT_S, "dbt artifacts could not be read", work)


def team_sync(host: Host) -> None:
    """The team sync the user scheduled (`team.sync_minutes`), when it is due: its own
    connection, so no tool call waits on the network; looked at every `poll_seconds`."""
    from waymark.team import sync

    def work(conn: Connection, project: Project) -> float:
        wait = sync.poll_seconds(conn)
        done = sync.run_scheduled(conn, project)
        if done is not None:
            log.info("team sync: %d sent, %d applied, %d conflicts",
                     done["pushed"], done["applied"], done["conflicts"])  # fmt: skip
        return wait

    every(host, 1.0, 60.0, "team sync could not run", work, no_project_s=10.0)
