"""One report of Waymark's state for a project, shared by `waymark status` and the MCP tool."""

from __future__ import annotations

import os

from waymark import home
from waymark.projects.client_files import MEMORY_SOURCES, memory_folder
from waymark.projects.resolve import Project
from waymark.recall import embed
from waymark.storage import checkpoints, overview
from waymark.storage import connection as db
from waymark.storage.candidates import STATUSES as CANDIDATE_STATUSES
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any


def store_report(conn: Connection) -> dict[str, Any]:
    """What status says without a project: the data home and the database."""
    path = home.db_path()
    return {
        "data_home": home.data_home(),
        "database": path,
        "database_bytes": os.path.getsize(path) if os.path.exists(path) else 0,
        "schema_version": db.schema_version(conn),
        "global_memories": overview.global_active(conn),
    }


def _semantic_said(
    available: bool, note: str, embedded: int, others: dict[str, int], spec: embed.Model
) -> str:
    """One line on semantic recall: stored vectors without a model here are not "not
    downloaded yet" (another process, or another shell, had the model)."""
    if others:
        kept = ", ".join(f"{n} of {model}" for model, n in sorted(others.items()))
        note += (f"; vectors kept from another model ({kept}) are not searched: `waymark "
                 f"index` embeds every memory with {spec.id}")  # fmt: skip
    if available:
        return f"on: {note} ({embedded} embedded)"
    if embedded:
        return f"off: vectors for {embedded} memories; model not available in this process ({note})"
    return f"off: {note}"


def report(conn: Connection, project: Project, session_id: str | None = None) -> dict[str, Any]:
    # ann and quantize only where there is something to say: `waymark status` without a model
    # or vectors skips their ~17 ms of imports; the candidates' and imports' modules only
    # when there are some to show (~1 ms).
    spec = embed.chosen(conn)
    available, note = embed.semantic_available(spec)
    counts = overview.project_counts(conn, project.id, MEMORY_SOURCES)
    by_model = counts["embedded"]
    embedded = by_model.pop(spec.id, 0)
    path = home.db_path()
    return {
        "project": project.to_dict(),
        "data_home": home.data_home(),
        "database": path,
        "database_bytes": os.path.getsize(path) if os.path.exists(path) else 0,
        "schema_version": db.schema_version(conn),
        "memories": counts["memories"],
        "global_memories": counts["global"],
        "checkpoints": counts["checkpoints"],
        "semantic": {
            "available": available,
            "model": note,
            "embedded": embedded,
            "said": _semantic_said(available, note, embedded, by_model, spec),
            "queries": _queries_note(conn, spec) if available else None,
            "search": _search_note(conn, spec) if embedded else None,
            "other_models": by_model,  # vectors kept from a model chosen before, never searched
        },
        "handoff": {
            "pending": [
                {"session_id": s, "reason": r, "since": c}
                for s, r, c in checkpoints.open_markers(conn, project.id)
            ]
        },
        "capture": capture_policy(conn, project, session_id),
        "imported": _imported(counts["imported"], project),
        "candidates": waiting(conn, project, counts["candidates"]),
    }


def _queries_note(conn: Connection, spec: embed.Model) -> str:
    from waymark.recall import quantize

    return quantize.note(quantize.enabled(conn), spec)


def _search_note(conn: Connection, spec: embed.Model) -> str:
    from waymark.recall import ann

    return ann.note(conn, spec.id, spec.dim)


SHOWN_WAITING = 5


def waiting(
    conn: Connection, project: Project, by_status: dict[str, int] | None = None
) -> dict[str, Any]:
    """The review queue: counts by status, and the newest few waiting (id, kind, title)."""
    if by_status is None:
        by_status = overview.project_counts(conn, project.id)["candidates"]
    counts = {status: by_status.get(status, 0) for status in CANDIDATE_STATUSES}
    if not counts["pending"]:
        return {**counts, "waiting": []}
    from waymark.curation import candidates

    shown = candidates.pending(conn, project, limit=SHOWN_WAITING)
    return {
        **counts,
        "waiting": [{k: c[k] for k in ("id", "kind", "action", "title", "reason")} for c in shown],
    }


def _imported(counts: dict[str, int], project: Project) -> dict[str, Any]:
    """What came from the clients' own memory, and from where."""
    root = project.files or project.root
    return {
        source: {"memories": n, "folder": memory_folder(source, root)}
        for source, n in counts.items()
    }


def capture_policy(
    conn: Connection, project: Project, session_id: str | None = None
) -> dict[str, Any]:
    """How hooks capture in this project (or this session), and why."""
    from waymark.projects import capture

    return capture.policy(conn, project, session_id)
