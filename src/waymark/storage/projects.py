"""SQL for `projects` (path and named projects) and `project_capture` (where hooks capture)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.storage.connection import Connection


def project_id_by_root(conn: Connection, root: str) -> str | None:
    row = conn.execute("SELECT id FROM projects WHERE root = ?", (root,)).fetchone()
    return None if row is None else str(row[0])


def project_id_by_name(conn: Connection, name: str) -> str | None:
    row = conn.execute("SELECT id FROM projects WHERE name = ?", (name,)).fetchone()
    return None if row is None else str(row[0])


def insert_path_project(conn: Connection, project_id: str, root: str, stamp: str) -> None:
    conn.execute(
        "INSERT INTO projects (id, kind, root, created_at) VALUES (?, 'path', ?, ?)",
        (project_id, root, stamp),
    )


def insert_named_project(conn: Connection, project_id: str, name: str, stamp: str) -> None:
    conn.execute(
        "INSERT INTO projects (id, kind, name, created_at) VALUES (?, 'named', ?, ?)",
        (project_id, name, stamp),
    )


def get_capture(conn: Connection, project_id: str) -> tuple[bool, str] | None:
    """(enabled, changed_at) when the user enabled or disabled capture here, else None."""
    row = conn.execute(
        "SELECT enabled, changed_at FROM project_capture WHERE project_id = ?", (project_id,)
    ).fetchone()
    return None if row is None else (bool(row[0]), str(row[1]))


def put_capture(conn: Connection, project_id: str, enabled: bool, stamp: str) -> None:
    conn.execute(
        "INSERT INTO project_capture (project_id, enabled, changed_at) VALUES (?, ?, ?)"
        " ON CONFLICT (project_id) DO UPDATE SET enabled = excluded.enabled,"
        " changed_at = excluded.changed_at",
        (project_id, int(enabled), stamp),
    )
