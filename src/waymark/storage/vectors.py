"""SQL for `vectors` (canonical float32 BLOBs per memory and model) and the TEMP `vec0`
tables built from them, which are an index, never a copy on disk."""

from __future__ import annotations

import apsw

from waymark.base import jsonlite as json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.storage.connection import Connection


def _scope_sql(project_id: str | None) -> tuple[str, tuple[Any, ...]]:
    """A project's own memories (alias m) plus the global ones; every project's when None."""
    if project_id is None:
        return "1", ()
    return "(m.project_id = ? OR m.project_id IS NULL)", (project_id,)


def embedding_state(
    conn: Connection, model: str, project_id: str | None, memory_ids: list[str] | None = None
) -> list[tuple[Any, ...]]:
    """(rowid, title, content, tags as JSON, stored text_hash or None, turn) of every active
    memory in scope, or of those of `memory_ids` still active (what a write just made), by
    rowid; `turn` is (project id, session, event time, place) for an imported conversation
    turn (`session_turns`), else None."""
    if memory_ids is None:
        where, params = _scope_sql(project_id)
    else:
        where, params = "m.id IN (SELECT value FROM json_each(?))", (json.dumps(memory_ids),)
    return [
        (*row[:5], (row[5], row[6], row[7], row[8]) if row[6] is not None else None)
        for row in conn.execute(
            "SELECT m.rowid, m.title, m.content, m.tags, v.text_hash, m.project_id,"
            f" CASE WHEN {TURN} THEN m.session_id END, m.event_time,"
            f" CASE WHEN {TURN} THEN {PLACE} END FROM memories m"
            " LEFT JOIN vectors v ON v.memory_rowid = m.rowid AND v.model = ?"
            f" WHERE m.status = 'active' AND {where} ORDER BY m.rowid",
            (model, *params),
        )
    ]


# An imported conversation turn: a memory `waymark import` wrote with a session (m045's
# index holds exactly these).
TURN = "m.actor = 'import' AND m.session_id IS NOT NULL"
# A turn's place among turns of one time: where its key was first written (a turn changed
# by a later import keeps its place; it is a new record, written last).
PLACE = "(SELECT min(k.rowid) FROM memories k WHERE k.project_id = m.project_id AND k.key = m.key)"


def session_turns(conn: Connection, sessions: list[tuple[str, str]]) -> list[tuple[Any, ...]]:
    """(project id, session, rowid, title, content, tags as JSON) of the active imported turns
    of each (project id, session), in each session's order (event time, then place)."""
    return conn.execute(
        "SELECT m.project_id, m.session_id, m.rowid, m.title, m.content, m.tags"
        " FROM json_each(?) s JOIN memories m INDEXED BY memories_by_turn"
        " ON m.project_id = s.value ->> 0 AND m.session_id = s.value ->> 1"
        f" WHERE {TURN} AND m.status = 'active'"
        f" ORDER BY m.project_id, m.session_id, m.event_time, {PLACE}",
        (json.dumps(sessions),),
    ).fetchall()


def put_vector(
    conn: Connection, rowid: int, model: str, dim: int, digest: str, blob: bytes
) -> None:
    """Store a memory's vector, only while the memory is still active (one erased during
    embedding must not regain a vector). Each write takes a rowid above every existing one
    (computed before REPLACE drops the old row), and above every one ever written
    (`vector_seq`, m043), so `generation` notices any vector write and rowids are never
    reused."""
    conn.execute(
        "INSERT OR REPLACE INTO vectors (rowid, memory_rowid, model, dim, text_hash, vector)"
        " SELECT max((SELECT coalesce(max(rowid), 0) FROM vectors),"
        " (SELECT last FROM vector_seq)) + 1, ?, ?, ?, ?, ?"
        " WHERE EXISTS (SELECT 1 FROM memories WHERE rowid = ? AND status = 'active')",
        (rowid, model, dim, digest, blob, rowid),
    )


def last_vector(conn: Connection) -> int:
    """The highest vectors rowid ever written (erased ones included)."""
    row: Any = conn.execute("SELECT last FROM vector_seq").fetchone()
    return int(row[0]) if row else 0


def generation(conn: Connection) -> tuple[Any, Any]:
    """(max events.seq, max vectors.rowid): moves whenever a memory changes status (it logs
    an event) or a vector is written."""
    row: Any = conn.execute(
        "SELECT (SELECT max(seq) FROM events), (SELECT max(rowid) FROM vectors)"
    ).fetchone()
    return tuple(row)


def active_vectors(
    conn: Connection, project_id: str | None, model: str, dim: int, blobs: bool
) -> list[tuple[Any, ...]]:
    """(rowid, text_hash[, vector]) of the scope's active memories that have a vector."""
    where, params = _scope_sql(project_id)
    return conn.execute(
        f"SELECT v.memory_rowid, v.text_hash{', v.vector' if blobs else ''} FROM vectors v"
        " JOIN memories m ON m.rowid = v.memory_rowid"
        f" WHERE v.model = ? AND v.dim = ? AND m.status = 'active' AND {where}",
        (model, dim, *params),
    ).fetchall()


def get_vectors(
    conn: Connection, model: str, dim: int, rowids: list[int]
) -> list[tuple[int, str, bytes]]:
    """(rowid, text_hash, vector) of these memories' `model` vectors."""
    if not rowids:
        return []
    rows: list[Any] = conn.execute(
        "SELECT memory_rowid, text_hash, vector FROM vectors"
        " WHERE model = ? AND dim = ? AND memory_rowid IN (SELECT value FROM json_each(?))",
        (model, dim, json.dumps(rowids)),
    ).fetchall()
    return rows


def load_extension(conn: Connection, path: str) -> bool:
    """Load the SQLite extension at `path` (sqlite-vec); False when it will not load."""
    try:
        conn.enable_load_extension(True)
        conn.load_extension(path)  # SQLite adds the platform suffix (.so, .dylib, .dll)
    except (apsw.Error, AttributeError):
        return False
    finally:
        try:  # noqa: SIM105 (contextlib costs `waymark status` ~2 ms to import)
            conn.enable_load_extension(False)
        except (apsw.Error, AttributeError):
            pass
    return True


def create_knn_table(conn: Connection, table: str, dim: int) -> None:
    """A TEMP vec0 table of `dim` floats, cosine distance."""
    conn.execute(
        f"CREATE VIRTUAL TABLE {table} USING vec0"
        f"(embedding float[{int(dim)}] distance_metric=cosine)"
    )


def replace_knn_rows(
    conn: Connection, table: str, stale: list[int], fresh: list[tuple[int, bytes]]
) -> None:
    conn.executemany(f"DELETE FROM {table} WHERE rowid = ?", [(r,) for r in stale])
    conn.executemany(f"INSERT INTO {table} (rowid, embedding) VALUES (?, ?)", fresh)


def knn(conn: Connection, table: str, query: bytes, k: int) -> list[tuple[int, float]]:
    """(rowid, cosine distance) of the `k` nearest rows."""
    rows: list[Any] = conn.execute(
        f"SELECT rowid, distance FROM {table} WHERE embedding MATCH ? AND k = ? ORDER BY distance",
        (query, k),
    ).fetchall()
    return rows


# The approximate index (recall/ann.py) is built from these and kept current by rowid:
# every vector write takes a rowid above all others (`put_vector`), and every erase logs an
# `erase` event, so "what changed since" is two range reads, never a scan of the table.


def vector_rows(
    conn: Connection, model: str, dim: int, after: int, limit: int
) -> list[tuple[int, int, bytes]]:
    """(vectors.rowid, memory rowid, vector) of `model`'s vectors with a rowid above `after`,
    by rowid, at most `limit`: every vector, page by page, or those written since a
    watermark. Any memory status: the caller filters at search time."""
    rows: list[Any] = conn.execute(
        "SELECT rowid, memory_rowid, vector FROM vectors"
        " WHERE rowid > ? AND model = ? AND dim = ? ORDER BY rowid LIMIT ?",
        (after, model, dim, limit),
    ).fetchall()
    return rows


def erased_after(conn: Connection, seq: int) -> list[int]:
    """Rowids of the memories erased by events after `seq` (their vectors are gone)."""
    return [
        int(r[0])
        for r in conn.execute(
            "SELECT m.rowid FROM events e JOIN memories m ON m.id = e.memory_id"
            " WHERE e.seq > ? AND e.op = 'erase'",
            (seq,),
        )
    ]


def scoped_vectors(
    conn: Connection, project_id: str | None, model: str, dim: int, rowids: list[int]
) -> list[tuple[int, bytes]]:
    """(memory rowid, vector) of those of `rowids` that are active, in scope and have a
    `model` vector: an approximate search's candidates, checked and scored exactly."""
    if not rowids:
        return []
    where, params = _scope_sql(project_id)
    rows: list[Any] = conn.execute(
        "SELECT v.memory_rowid, v.vector FROM vectors v JOIN memories m ON m.rowid = v.memory_rowid"
        " WHERE v.memory_rowid IN (SELECT value FROM json_each(?)) AND v.model = ? AND v.dim = ?"
        f" AND m.status = 'active' AND {where}",
        (json.dumps(rowids), model, dim, *params),
    ).fetchall()
    return rows


def count_vectors(conn: Connection, model: str, dim: int) -> int:
    """How many `model` vectors the store holds (any memory status)."""
    row: Any = conn.execute(
        "SELECT count(*) FROM vectors WHERE model = ? AND dim = ?", (model, dim)
    ).fetchone()
    return int(row[0])
