"""One project at a glance (the dashboard's first page): its memories by type and state, its
checkpoints, the review queue and how long it has waited, the tokens injected per session,
each hook's timings from its own records, and where it stands with the team store.

Nothing here reaches the network: the team part reads this machine's sync state only.
"""

from __future__ import annotations

from waymark.base import clock, hookruns
from waymark.curation import candidates
from waymark.health import fired
from waymark.packets import sessions
from waymark.projects.resolve import Project
from waymark.storage.connection import Connection
from waymark.storage.memories import team_authors
from waymark.storage.overview import project_counts

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

SESSIONS_CHARTED = 30


def overview(conn: Connection, project: Project) -> dict[str, Any]:
    counts = project_counts(conn, project.id)
    return {
        "memories": counts["memories"],
        "active": sum(counts["memories"].get("active", {}).values()),
        "checkpoints": counts["checkpoints"],
        "review": {s: counts["candidates"].get(s, 0) for s in candidates.STATUSES},
        "waiting_since": candidates.waiting_since(conn, project),
        "tokens": sessions.tokens_over_time(conn, project, limit=SESSIONS_CHARTED),
        # a client's runs only: Waymark's own test runs (doctor) are not the client's
        "hooks": [h for h in fired.by_hook() if h["client"] != hookruns.SELF_TEST],
        "team": team(conn, project),
        "now": clock.now(),
    }


def team(conn: Connection, project: Project) -> dict[str, Any] | None:
    """{store, shared, project_key, last_sync, unsent, conflicts, authors} when a team store
    is connected, else None."""
    from waymark.team import link, sync

    found = link.configured()
    if found is None:
        return None
    out: dict[str, Any] = {"store": link.shown(link.split_password(found[0])[2])}
    out |= sync.status_of(conn, project)
    if out.get("shared"):
        out["authors"] = team_authors(conn, project.id)
    return out
