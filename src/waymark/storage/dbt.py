"""SQL for `dbt_projects`, `dbt_nodes` and `dbt_edges`: a dbt project's artifacts as read
(knowledge/dbt.py)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from waymark.storage.connection import Connection

PROJECT_KEYS = (
    "root", "name", "target", "manifest_stat", "manifest_at", "dbt_version", "results_stat",
    "results_at", "sources_stat", "sources_at", "read_at",
)  # fmt: skip
NODE_KEYS = (
    "unique_id", "root", "kind", "name", "path", "checksum", "description", "materialized",
    "attached", "column_name", "status", "message", "result_at", "freshness", "loaded_at",
    "age_s", "checked_at",
)  # fmt: skip
# What a manifest says of a node; the rest (results, freshness) comes from other artifacts.
MANIFEST_KEYS = NODE_KEYS[:10]
_NODES = f"SELECT {', '.join(NODE_KEYS)} FROM dbt_nodes"


def projects(conn: Connection, project_id: str) -> list[dict[str, Any]]:
    return [
        dict(zip(PROJECT_KEYS, row, strict=True))
        for row in conn.execute(
            f"SELECT {', '.join(PROJECT_KEYS)} FROM dbt_projects WHERE project_id = ?"
            " ORDER BY root",
            (project_id,),
        )
    ]


def any_project(conn: Connection, project_id: str) -> bool:
    """One index probe: has this project a dbt project read (the packets' cheap check)."""
    return (
        conn.execute(
            "SELECT 1 FROM dbt_projects WHERE project_id = ? LIMIT 1", (project_id,)
        ).fetchone()
        is not None
    )


def put_project(conn: Connection, project_id: str, row: dict[str, Any]) -> None:
    conn.execute(
        f"INSERT OR REPLACE INTO dbt_projects (project_id, {', '.join(PROJECT_KEYS)})"
        f" VALUES (?{', ?' * len(PROJECT_KEYS)})",
        (project_id, *(row.get(k) for k in PROJECT_KEYS)),
    )


def drop_project(conn: Connection, project_id: str, root: str) -> None:
    for table in ("dbt_edges", "dbt_nodes", "dbt_projects"):
        conn.execute(f"DELETE FROM {table} WHERE project_id = ? AND root = ?", (project_id, root))


def put_graph(
    conn: Connection,
    project_id: str,
    root: str,
    nodes: Sequence[dict[str, Any]],
    edges: Iterable[tuple[str, str]],
) -> None:
    """A manifest's nodes and edges in place of the last one's; a node's latest result and
    freshness stay while it is still there."""
    cur = conn.cursor()
    cur.execute("CREATE TEMP TABLE IF NOT EXISTS dbt_seen (unique_id TEXT PRIMARY KEY)")
    cur.execute("DELETE FROM dbt_seen")
    cur.executemany("INSERT OR IGNORE INTO dbt_seen VALUES (?)", [(n["unique_id"],) for n in nodes])
    cur.execute(
        "DELETE FROM dbt_nodes WHERE project_id = ? AND root = ?"
        " AND unique_id NOT IN (SELECT unique_id FROM dbt_seen)",
        (project_id, root),
    )
    updates = ", ".join(f"{k} = excluded.{k}" for k in MANIFEST_KEYS[1:])
    cur.executemany(
        f"INSERT INTO dbt_nodes (project_id, {', '.join(MANIFEST_KEYS)})"
        f" VALUES (?{', ?' * len(MANIFEST_KEYS)})"
        f" ON CONFLICT (project_id, unique_id) DO UPDATE SET {updates}",
        [(project_id, *(n.get(k) for k in MANIFEST_KEYS)) for n in nodes],
    )
    cur.execute("DELETE FROM dbt_edges WHERE project_id = ? AND root = ?", (project_id, root))
    cur.executemany(
        "INSERT OR IGNORE INTO dbt_edges (project_id, root, parent, child) VALUES (?, ?, ?, ?)",
        [(project_id, root, parent, child) for parent, child in edges],
    )


def put_results(
    conn: Connection, project_id: str, rows: Iterable[tuple[str, str, str | None, str]]
) -> None:
    """(unique_id, status, message, at) of the nodes one invocation ran."""
    conn.cursor().executemany(
        "UPDATE dbt_nodes SET status = ?, message = ?, result_at = ?"
        " WHERE project_id = ? AND unique_id = ?",
        [(status, message, at, project_id, uid) for uid, status, message, at in rows],
    )


def put_freshness(
    conn: Connection,
    project_id: str,
    rows: Iterable[tuple[str, str, str | None, float | None, str]],
) -> None:
    """(unique_id, status, max loaded at, age in seconds, checked at) of sources."""
    conn.cursor().executemany(
        "UPDATE dbt_nodes SET freshness = ?, loaded_at = ?, age_s = ?, checked_at = ?"
        " WHERE project_id = ? AND unique_id = ?",
        [(status, loaded, age, at, project_id, uid) for uid, status, loaded, age, at in rows],
    )


def _nodes(conn: Connection, where: str, args: Sequence[Any]) -> list[dict[str, Any]]:
    return [
        dict(zip(NODE_KEYS, row, strict=True))
        for row in conn.execute(f"{_NODES} WHERE {where}", args)
    ]


def nodes_named(conn: Connection, project_id: str, name: str) -> list[dict[str, Any]]:
    """Nodes whose name or unique id is `name`."""
    return _nodes(
        conn,
        "project_id = ? AND (name = ? OR unique_id = ?) ORDER BY kind, unique_id",
        (project_id, name, name),
    )


def nodes_by_id(conn: Connection, project_id: str, ids: Sequence[str]) -> list[dict[str, Any]]:
    if not ids:
        return []
    marks = ", ".join("?" * len(ids))
    return _nodes(conn, f"project_id = ? AND unique_id IN ({marks})", (project_id, *ids))


def nodes_at(conn: Connection, project_id: str, paths: Sequence[str]) -> list[dict[str, Any]]:
    """The models, seeds, snapshots and analyses defined by these repository paths."""
    if not paths:
        return []
    marks = ", ".join("?" * len(paths))
    return _nodes(
        conn,
        f"project_id = ? AND path IN ({marks}) AND kind NOT IN ('test', 'source', 'exposure')"
        " ORDER BY unique_id",
        (project_id, *paths),
    )


def nodes_of_kind(
    conn: Connection, project_id: str, kinds: Sequence[str], statuses: Sequence[str] = ()
) -> list[dict[str, Any]]:
    marks = ", ".join("?" * len(kinds))
    where = f"project_id = ? AND kind IN ({marks})"
    args: list[Any] = [project_id, *kinds]
    if statuses:
        where += f" AND status IN ({', '.join('?' * len(statuses))})"
        args += list(statuses)
    return _nodes(conn, where + " ORDER BY kind, name, unique_id", args)


def sources_checked(conn: Connection, project_id: str) -> list[dict[str, Any]]:
    return _nodes(
        conn,
        "project_id = ? AND kind = 'source' AND freshness IS NOT NULL ORDER BY name, unique_id",
        (project_id,),
    )


def tests_on(conn: Connection, project_id: str, ids: Sequence[str]) -> list[dict[str, Any]]:
    """The tests attached to these nodes (a generic test's model, or any test that reads it)."""
    if not ids:
        return []
    marks = ", ".join("?" * len(ids))
    return _nodes(
        conn,
        f"project_id = ? AND kind = 'test' AND (attached IN ({marks}) OR unique_id IN"
        f" (SELECT child FROM dbt_edges WHERE project_id = ? AND parent IN ({marks})))"
        " ORDER BY name, unique_id",
        (project_id, *ids, project_id, *ids),
    )


def edges(
    conn: Connection, project_id: str, ids: Sequence[str], *, down: bool
) -> list[tuple[str, str]]:
    """(node, neighbour) for each edge out of (`down`) or into these nodes."""
    if not ids:
        return []
    near, far = ("parent", "child") if down else ("child", "parent")
    marks = ", ".join("?" * len(ids))
    return [
        (str(a), str(b))
        for a, b in conn.execute(
            f"SELECT {near}, {far} FROM dbt_edges WHERE project_id = ? AND {near} IN ({marks})",
            (project_id, *ids),
        )
    ]


def counts(conn: Connection, project_id: str) -> dict[str, int]:
    return {
        str(kind): int(n)
        for kind, n in conn.execute(
            "SELECT kind, count(*) FROM dbt_nodes WHERE project_id = ? GROUP BY kind",
            (project_id,),
        )
    }
