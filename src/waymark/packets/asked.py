"""A recall someone asked for (the CLI's `recall`, the MCP `recall` tool, the dashboard's
search): the one verb behind each. The ranked memories above the floor every asked recall
shows by (`floor.asked_hits`), how many fell below it, and the repository's own notes and
the dbt models the question names, cited beside them.

    asked(conn, project, query, limit=8, semantic=...) -> {hits, below, notes, dbt}
"""

from __future__ import annotations

from waymark.projects import git
from waymark.projects.resolve import Project
from waymark.recall import ranked
from waymark.recall.floor import asked_hits
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

NOTES_SHOWN = 3  # the repository's own note sections beside the memories


def asked(
    conn: Connection,
    project: Project,
    query: str,
    *,
    limit: int,
    types: list[str] | tuple[str, ...] = (),
    tags: list[str] | tuple[str, ...] = (),
    paths: list[str] | tuple[str, ...] = (),
    semantic: Any = None,
    include_inactive: bool = False,
    branch: str | None = None,
    agent: str | None = None,
    cited: bool = True,
) -> dict[str, Any]:
    """The hits above the floor (a query of files alone: every hit), how many were below,
    and with `cited` the notes and dbt models the query names."""
    hits = ranked.recall(
        conn, project, query, limit=limit, types=list(types), tags=list(tags), paths=list(paths),
        semantic=semantic, include_inactive=include_inactive,
        settings=ranked.settings_for(conn), branch=branch,
        current_branch=git.branch(project.files), agent=agent,
    )  # fmt: skip
    kept = asked_hits(hits) if query.strip() else hits
    out: dict[str, Any] = {"hits": kept, "below": len(hits) - len(kept), "notes": [], "dbt": []}
    if cited and query.strip():
        from waymark.knowledge import lineage, notes

        out["notes"] = notes.search(conn, project, query, NOTES_SHOWN, notes.ALL_KINDS)
        out["dbt"] = lineage.search(conn, project, query)
    return out
