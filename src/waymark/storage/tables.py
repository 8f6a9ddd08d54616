"""Whole tables as plain rows, for exports and their import: which tables travel, in what
order, keyed by what, and how one project's share of each is selected.

Local surrogate keys do not travel (a memory's rowid, an event's seq); derived data (vectors,
the FTS index) is made again where the rows land.
"""

from __future__ import annotations

import apsw

from waymark.errors import Conflict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from waymark.storage.connection import Connection

# Tables in dependency order, each with the columns that name a row. Tables without a key
# (events, the session ledger) are matched as a multiset of identical rows.
TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("projects", ("id",)),
    ("memories", ("id",)),
    ("personal_memories", ("memory_id",)),
    ("links", ("src", "dst", "kind")),
    ("checkpoints", ("id",)),
    ("checkpoint_revisions", ("id",)),
    ("task_checks", ("checkpoint_id", "command")),
    ("task_reports", ("id",)),
    ("handoff_markers", ("project_id", "session_id")),
    ("project_capture", ("project_id",)),
    ("project_aliases", ("kind", "alias")),
    ("sessions", ("id",)),
    ("session_ledger", ()),
    ("session_injected", ("session_id", "memory_id")),
    ("command_failures", ()),
    ("injections", ()),
    ("session_steps", ()),
    ("tool_outputs", ("id",)),
    ("candidates", ("id",)),
    ("learned", ("memory_id",)),
    ("observations", ("id",)),
    ("outcomes", ("item_id",)),
    ("memory_use", ("memory_id",)),
    ("memory_feedback", ()),
    ("injected_used", ("session_id", "item")),
    ("settings", ("key",)),
    ("events", ()),
)
# Left out on purpose: derived from the rows above, or the schema's own bookkeeping.
DERIVED = (
    "vectors", "memories_fts", "memories_fts_vocab", "schema_migrations",
    "map_snapshots", "map_files", "map_declarations", "map_references", "map_parsed",
    "map_edges", "map_resolved", "team_sync", "section_use", "notes", "notes_fts",
    "note_folders", "note_links", "hook_deliveries", "dbt_projects", "dbt_nodes",
    "dbt_edges", "vector_seq", "term_counts", "term_counts_state",
    "proxy_conversations",  # the proxy's packets as sent: a cache of the prompt cache's prefix
)  # fmt: skip
# Tables keyed by a memory's rowid: a row travels with the memory's id instead.
BY_MEMORY_ROWID = ("memory_use", "memory_feedback")
# Integer keys that only mean something in one file.
LOCAL = {
    "memories": "rowid",
    "events": "seq",
    "session_ledger": "seq",
    "command_failures": "id",
    "injections": "seq",
    "session_steps": "seq",
    "memory_feedback": "seq",
    "observations": "seq",
}

_MEMS = "SELECT id FROM memories WHERE project_id = :p OR project_id IS NULL"
_SESSIONS = "SELECT id FROM sessions WHERE project_id = :p"
# What a one-project export holds: the project, its rows, and the global memories it sees.
SCOPED = {
    "projects": "t.id = :p",
    "memories": "t.project_id = :p OR t.project_id IS NULL",
    "personal_memories": f"t.memory_id IN ({_MEMS})",
    "links": f"t.src IN ({_MEMS}) AND t.dst IN ({_MEMS})",
    "checkpoints": "t.project_id = :p",
    "checkpoint_revisions": "t.checkpoint_id IN (SELECT id FROM checkpoints WHERE project_id = :p)",
    "task_checks": "t.checkpoint_id IN (SELECT id FROM checkpoints WHERE project_id = :p)",
    "task_reports": "t.checkpoint_id IN (SELECT id FROM checkpoints WHERE project_id = :p)",
    "handoff_markers": "t.project_id = :p",
    "project_capture": "t.project_id = :p",
    "project_aliases": "t.project_id = :p",
    "sessions": "t.project_id = :p",
    "session_ledger": f"t.session_id IN ({_SESSIONS})",
    "session_injected": f"t.session_id IN ({_SESSIONS})",
    "command_failures": "t.project_id = :p",
    "injections": "t.project_id = :p",
    "session_steps": f"t.session_id IN ({_SESSIONS})",
    "tool_outputs": "t.project_id = :p",
    "candidates": "t.project_id = :p",
    "learned": f"t.memory_id IN ({_MEMS})",
    "observations": "t.project_id = :p",
    "outcomes": "t.project_id = :p",
    "memory_use": "m.project_id = :p OR m.project_id IS NULL",
    "memory_feedback": "m.project_id = :p OR m.project_id IS NULL",
    "injected_used": f"t.session_id IN ({_SESSIONS})",
    "settings": "0",  # machine-wide: only a full export carries them
    "events": f"t.project_id = :p OR (t.project_id IS NULL AND t.memory_id IN ({_MEMS}))",
}


def table_exists(conn: Connection, table: str) -> bool:
    row: Any = conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE name = ?", (table,)
    ).fetchone()
    return bool(row[0])


def columns(conn: Connection, table: str) -> list[str]:
    """The columns a row of `table` travels with (memory_use and memory_feedback name their
    memory by id)."""
    return list(_source(conn, table)[0])


def _source(conn: Connection, table: str) -> tuple[dict[str, str], str]:
    """The exported columns as {name: SQL expression}, and the FROM clause (alias t)."""
    names = [str(r[1]) for r in conn.execute(f'PRAGMA table_info("{table}")')]
    exprs = {n: f't."{n}"' for n in names if n != LOCAL.get(table)}
    if table not in BY_MEMORY_ROWID:
        return exprs, f'"{table}" t'
    del exprs["memory_rowid"]  # a memory's use travels with the memory's id
    source = f"{table} t JOIN memories m ON m.rowid = t.memory_rowid"
    return {"memory_id": "m.id", **exprs}, source


def _query(conn: Connection, table: str, where: str) -> tuple[list[str], str]:
    """Column names and the SELECT of `table`'s rows matching `where`, in canonical order."""
    exprs, source = _source(conn, table)
    keys = dict(TABLES)[table]
    order = ", ".join(exprs[k] for k in keys) if keys else f't."{LOCAL[table]}"'
    sql = f"SELECT {', '.join(exprs.values())} FROM {source} WHERE {where} ORDER BY {order}"
    return list(exprs), sql


def _select(conn: Connection, table: str, where: str, params: Any) -> list[dict[str, Any]]:
    names, sql = _query(conn, table, where)
    return [dict(zip(names, row, strict=True)) for row in conn.execute(sql, params)]


def table_rows(conn: Connection, table: str, project_id: str | None = None) -> list[dict]:
    """Every row of `table` in canonical order; only one project's share with `project_id`."""
    where, params = ("1", {}) if project_id is None else (SCOPED[table], {"p": project_id})
    return _select(conn, table, where, params)


def all_rows(conn: Connection, project_id: str | None = None) -> Iterator[tuple[str, dict]]:
    """(table, row) of every exported table that exists here, in canonical order."""
    for table, _ in TABLES:
        if table_exists(conn, table):  # a table a later migration adds may be missing
            for row in table_rows(conn, table, project_id):
                yield table, row


def rows_with_key(conn: Connection, table: str, key: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of `table` whose key columns equal `key`."""
    exprs, _ = _source(conn, table)
    names, sql = _query(conn, table, " AND ".join(f"{exprs[k]} = :{k}" for k in key))
    return [dict(zip(names, r, strict=True)) for r in conn.execute(sql, key)]


def project_holding(conn: Connection, column: str, value: str) -> str | None:
    """The project that already has this `name` or `root`."""
    if column not in ("name", "root"):
        raise ValueError(f"projects are unique by name or root, not {column!r}")
    row = conn.execute(f"SELECT id FROM projects WHERE {column} = ?", (value,)).fetchone()
    return None if row is None else str(row[0])


def insert_row(conn: Connection, table: str, row: dict[str, Any]) -> None:
    """Insert an exported row as it is; a clash with a row here is a Conflict."""
    row = dict(row)
    if table in BY_MEMORY_ROWID:
        found = conn.execute(
            "SELECT rowid FROM memories WHERE id = ?", (row["memory_id"],)
        ).fetchone()
        if found is None:
            raise LookupError(f"{table} names memory {row['memory_id']} that is not here")
        row = {"memory_rowid": found[0], **{k: v for k, v in row.items() if k != "memory_id"}}
    names = ", ".join(f'"{c}"' for c in row)
    marks = ", ".join("?" * len(row))
    try:
        conn.execute(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', tuple(row.values()))
        if table == "memories":
            from waymark.storage.memories import index_inserted

            index_inserted(conn)
    except apsw.ConstraintError as exc:
        raise Conflict(str(exc), table=table) from exc


def defer_references(conn: Connection) -> None:
    """Check foreign keys at commit, not per row (supersede chains point both ways)."""
    conn.execute("PRAGMA defer_foreign_keys = ON")


def broken_references(conn: Connection, table: str) -> list[tuple[Any, ...]]:
    """Rows of `table` whose references point nowhere."""
    return [tuple(r) for r in conn.execute(f'PRAGMA foreign_key_check("{table}")').fetchall()]


def store_counts(conn: Connection) -> dict[str, Any]:
    """Numbers only: projects, memories by status and type, checkpoints, sessions, events,
    vectors (for a support bundle: nothing anyone wrote)."""

    def scalar(sql: str) -> int:
        row: Any = conn.execute(sql).fetchone()
        return int(row[0])

    by: dict[str, dict[str, int]] = {}
    for status, kind, n in conn.execute(
        "SELECT status, type, count(*) FROM memories GROUP BY status, type"
    ):
        by.setdefault(str(status), {})[str(kind)] = int(n)
    return {
        "projects": scalar("SELECT count(*) FROM projects"),
        "memories": by,
        "checkpoints": scalar("SELECT count(*) FROM checkpoints"),
        "sessions": scalar("SELECT count(*) FROM sessions"),
        "events": scalar("SELECT count(*) FROM events"),
        "vectors": scalar("SELECT count(*) FROM vectors"),
    }
