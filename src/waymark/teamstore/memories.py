"""SQL for `team_memories`: the team's shared memory revisions (the sibling of
`storage.memories`)."""

from __future__ import annotations

import json
import struct
import sys
from typing import Any

_UPSERT = (
    "INSERT INTO team_memories (id, project_key, type, title, content, status, supersedes,"
    " superseded_by, content_hash, record, updated_at, machine, embedding)"
    " VALUES (%(id)s, %(key)s, %(type)s, %(title)s, %(content)s, %(status)s,"
    " %(supersedes)s, %(superseded_by)s, %(content_hash)s, %(record)s, %(updated_at)s,"
    " %(machine)s, %(embedding)b)"
    " ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status,"
    " superseded_by = EXCLUDED.superseded_by, record = EXCLUDED.record,"
    " updated_at = EXCLUDED.updated_at, title = EXCLUDED.title,"
    " content = EXCLUDED.content, content_hash = EXCLUDED.content_hash,"
    " embedding = coalesce(EXCLUDED.embedding, team_memories.embedding)"
    " WHERE team_memories.updated_at <= EXCLUDED.updated_at"
)
_KEPT = ("id", "type", "title", "content", "status", "supersedes", "superseded_by",
         "content_hash", "updated_at")  # fmt: skip


def insert_memory(
    conn: Any,
    memory: dict[str, Any],
    project_key: str,
    machine: str,
    embedding: bytes | None = None,
) -> None:
    """Add a revision, or bring its status up to date (a revision's text never changes; its
    status does: superseded, archived, erased). The author is the role that sends it;
    `embedding` is the machine's vector of its text (little-endian float32, as the local
    file keeps it), for team recall."""
    insert_memories(conn, [(memory, embedding)], project_key, machine)


def insert_memories(
    conn: Any,
    memories: list[tuple[dict[str, Any], bytes | None]],
    project_key: str,
    machine: str,
) -> None:
    """`insert_memory` for many (memory, embedding) pairs in one round of the protocol."""
    insert_rows(conn, memory_rows(memories, project_key, machine))


def memory_rows(
    memories: list[tuple[dict[str, Any], bytes | None]], project_key: str, machine: str
) -> list[dict[str, Any]]:
    """The rows `insert_rows` sends for these (memory, embedding) pairs: made without the
    connection, so a push makes the next batch's while the server stores one."""
    return [
        {**{k: memory[k] for k in _KEPT}, "key": project_key, "record": json.dumps(memory),
         "machine": machine, "embedding": None if blob is None else _Vector(blob)}
        for memory, blob in memories
    ]  # fmt: skip


def insert_rows(conn: Any, rows: list[dict[str, Any]]) -> None:
    """Store rows made by `memory_rows`, in one round of the protocol."""
    _vector_type(conn)  # the vectors' binary form, registered on this connection once
    if rows:
        with conn.cursor() as cur:
            cur.executemany(_UPSERT, rows)
        revisions = [(r["id"], r["supersedes"]) for r in rows if r["supersedes"]]
        if revisions:
            _arbitrate(conn, revisions)


def _arbitrate(conn: Any, revisions: list[tuple[str, str]]) -> None:
    """The team's line of each chain: the first revision of a memory to reach the server
    replaces it; a second one made from the same memory is a conflict (status `conflict`,
    never recalled on the server) that every machine reviews."""
    ids, olds = [r[0] for r in revisions], [r[1] for r in revisions]
    conn.execute(
        "UPDATE team_memories o SET status = 'superseded', superseded_by = n.id"
        " FROM (SELECT DISTINCT ON (old) id, old FROM unnest(%s::text[], %s::text[])"
        " AS t(id, old) ORDER BY old) AS n"
        " WHERE o.id = n.old AND o.superseded_by IS NULL",
        (ids, olds),
    )
    conn.execute(
        "UPDATE team_memories m SET status = 'conflict' FROM team_memories o"
        " WHERE m.id = ANY(%s) AND o.id = m.supersedes AND o.superseded_by <> m.id"
        " AND m.status = 'active'",
        (ids,),
    )


def successors(conn: Any, memory_ids: list[str]) -> dict[str, str | None]:
    """The revision the team's line has in place of each of these memories (None: none yet)."""
    if not memory_ids:
        return {}
    rows = conn.execute(
        "SELECT id, superseded_by FROM team_memories WHERE id = ANY(%s)", (list(memory_ids),)
    ).fetchall()
    return {str(r[0]): r[1] for r in rows}


class _Vector:
    """A float32 vector for pgvector's binary input: sent as it is, no text formatting
    (which costs more than the row's insert)."""

    __slots__ = ("data",)

    def __init__(self, little_endian: bytes) -> None:
        from array import array

        values = array("f", little_endian)
        if sys.byteorder == "little":
            values.byteswap()  # the wire is big-endian
        self.data = struct.pack(">HH", len(values), 0) + values.tobytes()


def _vector_type(conn: Any) -> type[_Vector]:
    """`_Vector`, its binary dumper registered on `conn` (once) with pgvector's type oid."""
    if getattr(conn, "_waymark_vector", False):
        return _Vector
    from psycopg.adapt import Dumper
    from psycopg.pq import Format
    from psycopg.types import TypeInfo

    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        raise RuntimeError("the team store lacks pgvector's `vector` type")

    class VectorDumper(Dumper):
        format = Format.BINARY
        oid = info.oid

        def dump(self, obj: Any) -> bytes:
            return bytes(obj.data)

    conn.adapters.register_dumper(_Vector, VectorDumper)
    conn._waymark_vector = True
    return _Vector


def get_memory(conn: Any, memory_id: str) -> dict[str, Any] | None:
    """The revision as its machine stored it, with who sent it (author, machine)."""
    return get_memories(conn, [memory_id]).get(memory_id)


def get_memories(conn: Any, memory_ids: list[str]) -> dict[str, dict[str, Any]]:
    """`get_memory` of many, by id (those the server has)."""
    if not memory_ids:
        return {}
    rows = conn.execute(
        "SELECT id, record, author, machine, project_key FROM team_memories WHERE id = ANY(%s)",
        (list(dict.fromkeys(memory_ids)),),
    ).fetchall()
    out = {}
    for memory_id, record, author, machine, key in rows:
        data = record if isinstance(record, dict) else json.loads(record)
        out[memory_id] = {**data, "_author": author, "_machine": machine, "_project_key": key}
    return out


def get_vectors(conn: Any, memory_ids: list[str]) -> dict[str, bytes]:
    """The vectors the server holds of these memories, by id, as little-endian float32 bytes
    (the local store's form): pgvector's binary form is a dimension count, an unused word,
    then big-endian float4s."""
    import sys
    from array import array

    if not memory_ids:
        return {}
    rows = conn.execute(
        "SELECT id, vector_send(embedding) FROM team_memories WHERE id = ANY(%s)"
        " AND embedding IS NOT NULL",
        (list(dict.fromkeys(memory_ids)),),
    ).fetchall()
    out = {}
    for memory_id, data in rows:
        values = array("f")
        values.frombytes(bytes(data)[4:])
        if sys.byteorder == "little":
            values.byteswap()
        out[str(memory_id)] = values.tobytes()
    return out
