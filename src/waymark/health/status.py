"""One report of Waymark's state for a project, shared by `waymark status` and the MCP tool."""

from __future__ import annotations

import os

from waymark import home
from waymark.projects.resolve import Project
from waymark.recall import embed
from waymark.storage import checkpoints, memories, vectors
from waymark.storage import connection as db
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
        "global_memories": memories.count_active_global(conn),
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
    # or vectors skips their ~17 ms of imports.
    spec = embed.chosen(conn)
    available, note = embed.semantic_available(spec)
    by_model = vectors.count_embedded(conn, project.id)
    embedded = by_model.pop(spec.id, 0)
    path = home.db_path()
    return {
        "project": project.to_dict(),
        "data_home": home.data_home(),
        "database": path,
        "database_bytes": os.path.getsize(path) if os.path.exists(path) else 0,
        "schema_version": db.schema_version(conn),
        "memories": memories.count_by_status_and_type(conn, project.id),
        "global_memories": memories.count_active_global(conn),
        "checkpoints": checkpoints.count_by_status(conn, project.id),
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
        "imported": _imported(conn, project),
        "candidates": waiting(conn, project),
    }


def _queries_note(conn: Connection, spec: embed.Model) -> str:
    from waymark.recall import quantize

    return quantize.note(quantize.enabled(conn), spec)


def _search_note(conn: Connection, spec: embed.Model) -> str:
    from waymark.recall import ann

    return ann.note(conn, spec.id, spec.dim)


SHOWN_WAITING = 5


def waiting(conn: Connection, project: Project) -> dict[str, Any]:
    """The review queue: counts by status, and the newest few waiting (id, kind, title)."""
    from waymark.curation import candidates

    shown = candidates.pending(conn, project, limit=SHOWN_WAITING)
    return {
        **candidates.counts(conn, project.id),
        "waiting": [{k: c[k] for k in ("id", "kind", "action", "title", "reason")} for c in shown],
    }


def _imported(conn: Connection, project: Project) -> dict[str, Any]:
    """What came from the clients' own memory, and from where."""
    from waymark.data import client_memory

    counts = client_memory.imported(conn, project)
    return {
        source: {"memories": n, "folder": client_memory.source_folder(source, project)}
        for source, n in counts.items()
    }


def capture_policy(
    conn: Connection, project: Project, session_id: str | None = None
) -> dict[str, Any]:
    """How hooks capture in this project (or this session), and why."""
    from waymark.projects import capture

    return capture.policy(conn, project, session_id)
