"""One report of Waymark's state for a project, shared by `waymark status` and the MCP tool."""

from __future__ import annotations

import os
from typing import Any

import apsw

from waymark import home
from waymark.projects.resolve import Project
from waymark.recall import embed, quantize
from waymark.storage import connection as db


def report(conn: apsw.Connection, project: Project) -> dict[str, Any]:
    counts: dict[str, dict[str, int]] = {}
    for status, type_, n in conn.execute(
        "SELECT status, type, count(*) FROM memories WHERE project_id = ?"
        " GROUP BY status, type ORDER BY status, type",
        (project.id,),
    ):
        counts.setdefault(status, {})[type_] = n
    available, note = embed.semantic_available()
    embedded = db.scalar(
        conn,
        "SELECT count(*) FROM vectors v JOIN memories m ON m.rowid = v.memory_rowid"
        " WHERE m.project_id = ? AND m.status = 'active'",
        (project.id,),
    )
    path = home.db_path()
    return {
        "project": project.to_dict(),
        "data_home": home.data_home(),
        "database": path,
        "database_bytes": os.path.getsize(path) if os.path.exists(path) else 0,
        "schema_version": db.schema_version(conn),
        "memories": counts,
        "global_memories": db.scalar(
            conn, "SELECT count(*) FROM memories WHERE project_id IS NULL AND status = 'active'"
        ),
        "checkpoints": {
            s: n
            for s, n in conn.execute(
                "SELECT status, count(*) FROM checkpoints WHERE project_id = ? GROUP BY status",
                (project.id,),
            )
        },
        "semantic": {
            "available": available,
            "model": note,
            "embedded": embedded,
            "queries": quantize.note(quantize.enabled(conn)) if available else None,
        },
        "handoff": {
            "pending": [
                {"session_id": s, "reason": r, "since": c}
                for s, r, c in conn.execute(
                    "SELECT session_id, reason, created_at FROM handoff_markers WHERE project_id = ?"
                    " AND cleared_at IS NULL ORDER BY created_at",
                    (project.id,),
                )
            ]
        },
        "capture": capture_policy(conn, project),
    }


def capture_policy(conn: apsw.Connection, project: Project) -> dict[str, Any]:
    """Whether hooks capture in this project, and why."""
    from waymark.projects import capture

    return capture.policy(conn, project)
