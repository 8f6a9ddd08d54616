"""SQL for `projects` (path and named projects) and `project_capture` (where hooks capture)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.storage.connection import Connection


def project_id_by_root(conn: Connection, root: str) -> str | None:
    row = conn.execute("SELECT id FROM projects WHERE root = ?", (root,)).fetchone()
    return None if row is None else str(row[0])


def project_by_root(conn: Connection, root: str) -> tuple[str, str, str | None] | None:
    """(id, kind, identity) of the project bound to `root`, else of the named project that
    `root` is an alias of, or None."""
    row = conn.execute(
        "SELECT id, kind, identity FROM projects WHERE root = ?1"
        " UNION ALL SELECT p.id, p.kind, p.identity FROM project_aliases a"
        " JOIN projects p ON p.id = a.project_id WHERE a.kind = 'root' AND a.alias = ?1"
        " LIMIT 1",
        (root,),
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]), row[2])


def put_alias(conn: Connection, kind: str, alias: str, project_id: str, stamp: str) -> None:
    """`alias` addresses `project_id` from now on (instead of whichever it did before)."""
    conn.execute(
        "INSERT INTO project_aliases (kind, alias, project_id, created_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (kind, alias) DO UPDATE SET project_id = excluded.project_id,"
        " created_at = excluded.created_at",
        (kind, alias, project_id, stamp),
    )


def drop_alias(conn: Connection, kind: str, alias: str) -> None:
    conn.execute("DELETE FROM project_aliases WHERE kind = ? AND alias = ?", (kind, alias))


def rename_project(conn: Connection, project_id: str, name: str, notice: str) -> None:
    """`project_id` is the named project `name` (a path project keeps its root as an alias)."""
    conn.execute(
        "UPDATE projects SET kind = 'named', name = ?, root = NULL, notice = ? WHERE id = ?",
        (name, notice, project_id),
    )


def path_identities(conn: Connection) -> list[tuple[str, str, str]]:
    """(id, root, identity) of every path project whose identity is known."""
    return [
        (str(r[0]), str(r[1]), str(r[2]))
        for r in conn.execute(
            "SELECT id, root, identity FROM projects"
            " WHERE kind = 'path' AND identity IS NOT NULL AND identity != '' ORDER BY id"
        )
    ]


def path_projects_with(conn: Connection, identity: str) -> list[tuple[str, str]]:
    """(id, root) of every path project whose repository has `identity`."""
    return [
        (str(r[0]), str(r[1]))
        for r in conn.execute(
            "SELECT id, root FROM projects WHERE identity = ? AND kind = 'path' ORDER BY id",
            (identity,),
        )
    ]


def named_projects_with(conn: Connection, identity: str) -> list[tuple[str, str]]:
    """(id, name) of every named project whose repository has `identity`."""
    return [
        (str(r[0]), str(r[1]))
        for r in conn.execute(
            "SELECT id, name FROM projects WHERE identity = ? AND kind = 'named' ORDER BY id",
            (identity,),
        )
    ]


def set_identity(conn: Connection, project_id: str, identity: str) -> None:
    conn.execute("UPDATE projects SET identity = ? WHERE id = ?", (identity, project_id))


def move_root(conn: Connection, project_id: str, root: str, notice: str) -> None:
    """Bind `project_id` to `root` (its old root is then unbound) and leave a notice."""
    conn.execute(
        "UPDATE projects SET root = ?, notice = ? WHERE id = ?", (root, notice, project_id)
    )


def notice(conn: Connection, project_id: str) -> str | None:
    row = conn.execute("SELECT notice FROM projects WHERE id = ?", (project_id,)).fetchone()
    return None if row is None else row[0]


def set_notice(conn: Connection, project_id: str, text: str) -> None:
    conn.execute("UPDATE projects SET notice = ? WHERE id = ?", (text, project_id))


def identity_of(conn: Connection, project_id: str) -> str | None:
    row = conn.execute("SELECT identity FROM projects WHERE id = ?", (project_id,)).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def clear_notice(conn: Connection, project_id: str) -> None:
    conn.execute("UPDATE projects SET notice = NULL WHERE id = ?", (project_id,))


def project_row(conn: Connection, project_id: str) -> dict | None:
    row = conn.execute(
        "SELECT id, kind, name, root, created_at, identity FROM projects WHERE id = ?",
        (project_id,),
    ).fetchone()
    keys = ("id", "kind", "name", "root", "created_at", "identity")
    return None if row is None else dict(zip(keys, row, strict=True))


def project_summaries(conn: Connection) -> list[dict]:
    """Every project with its active memories, checkpoints and last session, oldest first."""
    rows = conn.execute(
        "SELECT p.id, p.kind, p.name, p.root, p.created_at,"
        " (SELECT count(*) FROM memories m WHERE m.project_id = p.id AND m.status = 'active'),"
        " (SELECT count(*) FROM checkpoints c WHERE c.project_id = p.id),"
        " (SELECT max(s.started_at) FROM sessions s WHERE s.project_id = p.id)"
        " FROM projects p ORDER BY p.created_at, p.id"
    ).fetchall()
    keys = ("id", "kind", "name", "root", "created_at", "memories", "checkpoints", "last_session")
    return [dict(zip(keys, row, strict=True)) for row in rows]


PROJECT_TABLES = (
    # (table, how its rows belong to a project), children before parents
    ("session_injected", "session_id IN (SELECT id FROM sessions WHERE project_id = ?)"),
    ("injected_used", "session_id IN (SELECT id FROM sessions WHERE project_id = ?)"),
    ("session_ledger", "session_id IN (SELECT id FROM sessions WHERE project_id = ?)"),
    ("session_steps", "session_id IN (SELECT id FROM sessions WHERE project_id = ?)"),
    ("command_failures", "project_id = ?"),
    ("injections", "project_id = ?"),
    ("tool_outputs", "project_id = ?"),
    ("candidates", "project_id = ?"),
    ("map_edges", "snapshot_seq IN (SELECT seq FROM map_snapshots WHERE project_id = ?)"),
    ("map_resolved", "snapshot_seq IN (SELECT seq FROM map_snapshots WHERE project_id = ?)"),
    ("map_files", "snapshot_seq IN (SELECT seq FROM map_snapshots WHERE project_id = ?)"),
    ("map_snapshots", "project_id = ?"),
    ("observations", "project_id = ?"),
    ("outcomes", "project_id = ?"),
    ("section_use", "project_id = ?"),
    ("notes_fts", "rowid IN (SELECT id FROM notes WHERE project_id = ?)"),
    ("notes", "project_id = ?"),
    ("note_links", "project_id = ?"),
    ("note_folders", "project_id = ?"),
    ("learned", "memory_id IN (SELECT id FROM memories WHERE project_id = ?)"),
    ("sessions", "project_id = ?"),
    ("handoff_markers", "project_id = ?"),
    ("checkpoint_revisions", "checkpoint_id IN (SELECT id FROM checkpoints WHERE project_id = ?)"),
    ("checkpoints", "project_id = ?"),
    (
        "links",
        "src IN (SELECT id FROM memories WHERE project_id = ?)"
        " OR dst IN (SELECT id FROM memories WHERE project_id = ?)",
    ),
    ("memory_use", "memory_rowid IN (SELECT rowid FROM memories WHERE project_id = ?)"),
    ("vectors", "memory_rowid IN (SELECT rowid FROM memories WHERE project_id = ?)"),
    ("memories", "project_id = ?"),
    ("project_capture", "project_id = ?"),
    ("project_aliases", "project_id = ?"),
    ("events", "project_id = ?"),
    ("projects", "id = ?"),
)


def delete_project(conn: Connection, project_id: str) -> dict[str, int]:
    """Delete every row of the project, in the caller's transaction; rows per table."""
    counts: dict[str, int] = {}
    for table, where in PROJECT_TABLES:
        conn.execute(f"DELETE FROM {table} WHERE {where}", (project_id,) * where.count("?"))
        counts[table] = conn.changes()  # this statement's rows, not its triggers
    from waymark.storage.codemap import drop_unheld

    drop_unheld(conn)  # the parsed code only this project's snapshots held
    return counts


def project_id_by_name(conn: Connection, name: str) -> str | None:
    """The project named `name`, else the one that once had the name."""
    row = conn.execute(
        "SELECT id FROM projects WHERE name = ?1 UNION ALL SELECT project_id FROM"
        " project_aliases WHERE kind = 'name' AND alias = ?1 LIMIT 1",
        (name,),
    ).fetchone()
    return None if row is None else str(row[0])


def project_name(conn: Connection, project_id: str) -> str | None:
    row = conn.execute("SELECT name FROM projects WHERE id = ?", (project_id,)).fetchone()
    return None if row is None else row[0]


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


def get_capture(conn: Connection, project_id: str) -> tuple[str, str] | None:
    """(mode, changed_at) when the user chose capture here (off when disabled), else None."""
    row = conn.execute(
        "SELECT enabled, mode, changed_at, confirm FROM project_capture WHERE project_id = ?",
        (project_id,),
    ).fetchone()
    if row is None:
        return None
    mode = "off" if not row[0] else "confirm" if row[3] and row[1] == "on" else str(row[1])
    return mode, str(row[2])


def put_capture(conn: Connection, project_id: str, mode: str, stamp: str) -> None:
    """`confirm` is stored as `on` with its flag."""
    stored = "on" if mode == "confirm" else mode
    conn.execute(
        "INSERT INTO project_capture (project_id, enabled, mode, changed_at, confirm)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (project_id) DO UPDATE SET"
        " enabled = excluded.enabled, mode = excluded.mode, changed_at = excluded.changed_at,"
        " confirm = excluded.confirm",
        (project_id, int(mode != "off"), stored, stamp, int(mode == "confirm")),
    )
