"""SQL for `memories`: the record as a row, writes, lookups and browsing (the rule and path
queries that packets read: `storage.guidance`).

`Memory` is a namedtuple rather than a dataclass: hooks read memories too, and `dataclasses`
costs a short-lived process about 8 ms to import.
"""

from __future__ import annotations

from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.base.record import record

TYPE_CHECKING = False  # typing costs a hook ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from waymark.storage.connection import Connection


class Memory(
    record(
        "_Memory",
        "id project_id type title content scope_type scope_target tags priority pinned status"
        " actor client session_id source_ref evidence git_branch valid_until event_time"
        " created_at updated_at content_hash key supersedes superseded_by erased_reason agent",
    )
):
    """One memory. `tags` is a list of exact strings; `evidence` a list of
    {path | command | url, note?}; times are UTC ISO 8601 strings. `agent` names the agent
    it belongs to (None: everyone's)."""

    __slots__ = ()

    def to_dict(self) -> dict:
        return self._asdict()


FIELDS = Memory._fields
COLUMNS = ", ".join(FIELDS)
_M_COLUMNS = ", ".join("m." + name for name in FIELDS)


def from_row(row: tuple) -> Memory:
    if len(row) != len(FIELDS):
        raise ValueError(f"expected {len(FIELDS)} columns, got {len(row)}")
    values = list(row)
    values[7] = json.loads(values[7])  # tags
    values[9] = bool(values[9])  # pinned
    values[15] = json.loads(values[15])  # evidence
    return Memory(*values)


def kind_where(types: Sequence[str], tags: Sequence[str]) -> tuple[list[str], list[str]]:
    """Conditions on memories `m` for any of `types` and every one of `tags`, and their
    parameters (the types are checked by the caller)."""
    where = [f"m.type IN ({', '.join('?' * len(types))})"] if types else []
    where += ["EXISTS (SELECT 1 FROM json_each(m.tags) t WHERE t.value = ?)"] * len(tags)
    return where, [*types, *tags]


def agent_where(agent: str | None, column: str = "agent") -> tuple[str, tuple[str, ...]]:
    """The condition for memories an agent reads, and its parameters: everyone's (agent
    NULL), and with a name also that agent's own. The main session reads no agent's."""
    if agent is None:
        return f"{column} IS NULL", ()
    return f"({column} IS NULL OR {column} = ?)", (agent,)


def rowid_list(values: Sequence[int]) -> str:
    """Rowids as the JSON array that `json_each(?)` reads: one parameter for any number."""
    return "[" + ",".join(str(int(v)) for v in values) + "]"


# Writes.


_INSERT = f"INSERT INTO memories ({COLUMNS}, cleared) VALUES ({', '.join('?' * len(FIELDS))}, ?)"
# The index row as `memories_fts_source` reads it (the update and delete triggers too).
_INDEX = (
    "INSERT INTO memories_fts (rowid, title, content, tags, target) VALUES (last_insert_rowid(),"
    " ?, ?, (SELECT group_concat(value, ' ') FROM json_each(?)), coalesce(?, ''))"
)


def insert_memory(conn: Connection, memory: Memory, cleared: str | None = None) -> None:
    """Write `memory` and its lexical index row, in one transaction (the caller's, or one of
    its own); `cleared` is the redactor's stamp on the text it would share."""
    values = list(memory)
    values[7] = tags = json.dumps(memory.tags)
    values[9] = int(memory.pinned)
    values[15] = json.dumps(memory.evidence)
    if not conn.in_transaction:
        from waymark.storage.connection import write

        with write(conn):
            insert_memory(conn, memory, cleared)
        return
    conn.execute(_INSERT, [*values, cleared])
    conn.execute(_INDEX, (memory.title, memory.content, tags, memory.scope_target))


def index_inserted(conn: Connection) -> None:
    """The lexical index row of the memory just inserted as a row (`tables.insert_row`):
    every insert into `memories` is followed by its index row, here or in `insert_memory`."""
    conn.execute(
        "INSERT INTO memories_fts (rowid, title, content, tags, target)"
        " SELECT rowid, title, content, tags, target FROM memories_fts_source"
        " WHERE rowid = last_insert_rowid()"
    )


def clearances(conn: Connection, memory_ids: Sequence[str]) -> dict[str, str]:
    """The redactor's stamps of these memories (those that have one), by id."""
    if not memory_ids:
        return {}
    rows = conn.execute(
        "SELECT id, cleared FROM memories WHERE id IN (SELECT value FROM json_each(?))"
        " AND cleared IS NOT NULL",
        (json.dumps(list(memory_ids)),),
    )
    return {memory_id: stamp for memory_id, stamp in rows}


def mark_superseded(conn: Connection, memory_id: str, by: str, stamp: str) -> None:
    conn.execute(
        "UPDATE memories SET status = 'superseded', superseded_by = ?, updated_at = ? WHERE id = ?",
        (by, stamp, memory_id),
    )


def mark_archived(conn: Connection, memory_id: str, stamp: str) -> None:
    conn.execute(
        "UPDATE memories SET status = 'archived', updated_at = ? WHERE id = ?", (stamp, memory_id)
    )


def mark_active(conn: Connection, memory_id: str, stamp: str) -> None:
    conn.execute(
        "UPDATE memories SET status = 'active', updated_at = ? WHERE id = ?", (stamp, memory_id)
    )


def retention_rows(conn: Connection, project_id: str) -> list[dict[str, Any]]:
    """What a retention sweep weighs, for the project's active and archived memories: the
    record's kind and flags, its times, and its use (count, last use)."""
    keys = (
        "id", "type", "title", "status", "pinned", "priority", "tags", "evidence", "valid_until",
        "created_at", "event_time", "updated_at", "uses", "last_used",
    )  # fmt: skip
    found = conn.execute(
        "SELECT m.id, m.type, m.title, m.status, m.pinned, m.priority, m.tags, m.evidence,"
        " m.valid_until, m.created_at, m.event_time, m.updated_at, coalesce(u.uses, 0),"
        " u.last_used FROM memories m LEFT JOIN memory_use u ON u.memory_rowid = m.rowid"
        " WHERE m.project_id = ? AND m.status IN ('active', 'archived') ORDER BY m.rowid",
        (project_id,),
    ).fetchall()
    out = []
    for row in found:
        item: dict[str, Any] = dict(zip(keys, row, strict=True))
        item["tags"] = json.loads(str(item["tags"]))
        item["evidence"] = json.loads(str(item["evidence"]))
        out.append(item)
    return out


def erase_payload(conn: Connection, memory_id: str, reason: str, stamp: str) -> None:
    """Keep a tombstone: id, times and reason; every payload column emptied, and the text
    of every injection receipt line that showed it (as sent, it quoted the memory)."""
    conn.execute(
        "UPDATE memories SET status = 'erased', title = '', content = '', tags = '[]',"
        " evidence = '[]', source_ref = NULL, content_hash = '', cleared = NULL,"
        " erased_reason = ?, updated_at = ? WHERE id = ?",
        (reason, stamp, memory_id),
    )
    conn.execute(
        "UPDATE injections SET text = NULL WHERE text IS NOT NULL AND (item = ?"
        " OR instr(text, ?) > 0)",
        (memory_id, memory_id),
    )


# Reads.


def get_memory(conn: Connection, memory_id: str) -> Memory | None:
    row = conn.execute(f"SELECT {COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return None if row is None else from_row(row)


def ranks_of(conn: Connection, memory_ids: Sequence[str]) -> dict[str, tuple[bool, int]]:
    """id -> (pinned, priority) of each of `memory_ids` that exists."""
    rows = conn.execute(
        "SELECT id, pinned, priority FROM memories WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(memory_ids)),),
    ).fetchall()
    return {str(i): (bool(p), int(r or 0)) for i, p, r in rows}


def ids_starting(conn: Connection, prefix: str, limit: int) -> list[str]:
    """Ids that start with `prefix` (ids are upper-case), read from the primary key."""
    upper = prefix + "\uffff"
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT id FROM memories WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
            (prefix, upper, limit),
        )
    ]


def owner_of(conn: Connection, memory_id: str) -> tuple[bool, str | None]:
    """(found, project id or None for a global memory)."""
    row = conn.execute("SELECT project_id FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return (False, None) if row is None else (True, row[0])


def find_duplicate(
    conn: Connection,
    project_id: str | None,
    content_hash: str,
    type: str,
    scope_type: str,
    scope_target: str | None,
    agent: str | None = None,
) -> Memory | None:
    """The active memory holding exactly this content, type, scope and agent."""
    row = conn.execute(
        f"SELECT {COLUMNS} FROM memories INDEXED BY memories_by_hash WHERE project_id IS ?"
        " AND status = 'active' AND substr(content_hash, 1, 16) = ? AND content_hash = ?"
        " AND type = ? AND scope_type = ? AND scope_target IS ? AND agent IS ?",
        (project_id, content_hash[:16], content_hash, type, scope_type, scope_target, agent),
    ).fetchone()
    return None if row is None else from_row(row)


def active_id_by_key(
    conn: Connection, project_id: str | None, key: str, agent: str | None = None
) -> str | None:
    """The active memory holding `key` in one tier: the project (or global, None) and the
    agent (None: everyone's)."""
    row = conn.execute(
        "SELECT id FROM memories WHERE project_id IS ? AND key = ? AND status = 'active'"
        " AND agent IS ?",
        (project_id, key, agent),
    ).fetchone()
    return None if row is None else str(row[0])


def first_id_by_key(conn: Connection, project_id: str, key: str) -> str | None:
    """The first memory ever written under `key` in the project, whatever its status."""
    row = conn.execute(
        "SELECT id FROM memories WHERE project_id = ? AND key = ? ORDER BY created_at LIMIT 1",
        (project_id, key),
    ).fetchone()
    return None if row is None else str(row[0])


def latest_by_key(conn: Connection, project_id: str, key: str) -> tuple[Any, ...] | None:
    """(id, status, content_hash, title, tags as JSON text) of the newest record of `key`:
    the last written (rowid; two written in one millisecond have ids in no order)."""
    row = conn.execute(
        "SELECT id, status, content_hash, title, tags FROM memories"
        " WHERE project_id = ? AND key = ? ORDER BY rowid DESC LIMIT 1",
        (project_id, key),
    ).fetchone()
    return None if row is None else tuple(row)


def latest_by_keys(
    conn: Connection, project_id: str, keys: list[str]
) -> dict[str, tuple[Any, ...]]:
    """`latest_by_key` of many keys in one statement (an import's batch): key -> row."""
    found: dict[str, tuple[Any, ...]] = {}
    for row in conn.execute(
        "SELECT key, id, status, content_hash, title, tags FROM memories"
        " WHERE project_id = ? AND key IN (SELECT value FROM json_each(?))"
        " ORDER BY rowid DESC",
        (project_id, json.dumps(keys)),
    ):
        found.setdefault(str(row[0]), tuple(row[1:]))
    return found


def similar_candidates(
    conn: Connection, project_id: str | None, match: str, limit: int, agent: str | None = None
) -> list[tuple[str, str]]:
    """(id, content) of the active memories of one tier best matching the FTS expression
    `match`."""
    rows = conn.execute(
        "SELECT m.id, m.content FROM memories_fts f JOIN memories m ON m.rowid = f.rowid"
        " WHERE memories_fts MATCH ? AND m.project_id IS ? AND m.status = 'active'"
        " AND m.agent IS ? ORDER BY f.rank LIMIT ?",
        (match, project_id, agent, limit),
    ).fetchall()
    return [(str(i), c) for i, c in rows if isinstance(c, str)]


def by_rowids(conn: Connection, rowids: Sequence[int]) -> dict[int, Memory]:
    """rowid -> Memory for those that still exist (looked up by rowid, never scanned)."""
    if not rowids:
        return {}
    rows: Any = conn.execute(
        f"SELECT m.rowid, {_M_COLUMNS} FROM json_each(?) j CROSS JOIN memories m"
        " ON m.rowid = j.value",
        (rowid_list(rowids),),
    ).fetchall()
    return {int(row[0]): from_row(tuple(row[1:])) for row in rows}


def max_rowid(conn: Connection) -> int:
    """About how many memories were ever written: a cheap upper bound on their number."""
    row: Any = conn.execute("SELECT max(rowid) FROM memories").fetchone()
    return int(row[0] or 0)


def browse(
    conn: Connection,
    *,
    project_id: str | None,
    include_inactive: bool,
    types: Sequence[str],
    tags: Sequence[str],
    scope: str | None,
    target: str | Sequence[str] | None,
    folded_query: str | None,
    branch: str | None = None,
    agent: str | None = None,
    fold: Callable[[Any], str],
    limit: int,
    offset: int,
) -> list[Memory]:
    """Newest first (id as tie-break), `limit` rows from `offset`. `folded_query` is a
    literal substring of `fold(title content tags)`; `target` one spelling or several;
    `agent` keeps that agent's memories only."""
    where, params = _browsed(conn, project_id, include_inactive, types, tags, scope, target,
                             folded_query, branch, agent, fold)  # fmt: skip
    rows = conn.execute(
        f"SELECT {_M_COLUMNS} FROM memories m WHERE {where}"
        " ORDER BY m.created_at DESC, m.id DESC LIMIT ? OFFSET ?",
        (*params, limit, offset),
    ).fetchall()
    return [from_row(r) for r in rows]


def count_browsed(
    conn: Connection,
    *,
    project_id: str | None,
    include_inactive: bool,
    types: Sequence[str],
    tags: Sequence[str],
    scope: str | None,
    target: str | Sequence[str] | None,
    folded_query: str | None,
    branch: str | None = None,
    agent: str | None = None,
    fold: Callable[[Any], str],
    cap: int,
) -> int:
    """How many memories `browse` pages through with the same filters, counted up to
    `cap` + 1 (more than `cap`: at least that many)."""
    where, params = _browsed(conn, project_id, include_inactive, types, tags, scope, target,
                             folded_query, branch, agent, fold)  # fmt: skip
    row: Any = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM memories m WHERE {where} LIMIT ?)",
        (*params, cap + 1),
    ).fetchone()
    return int(row[0])


def _browsed(
    conn: Connection,
    project_id: str | None,
    include_inactive: bool,
    types: Sequence[str],
    tags: Sequence[str],
    scope: str | None,
    target: str | Sequence[str] | None,
    folded_query: str | None,
    branch: str | None,
    agent: str | None,
    fold: Callable[[Any], str],
) -> tuple[str, list[Any]]:
    where = ["m.project_id IS ?" if project_id is None else "m.project_id = ?"]
    params: list[Any] = [project_id]
    if not include_inactive:
        where.append("m.status = 'active'")
    kinds, kind_params = kind_where(types, tags)
    where += kinds
    params += kind_params
    if scope is not None:
        where.append("m.scope_type = ?")
        params.append(scope)
        if target is not None:
            spellings = target if isinstance(target, (list, tuple)) else [target]
            where.append(f"m.scope_target IN ({', '.join('?' * len(spellings))})")
            params.extend(spellings)
    if branch is not None:
        where.append("m.git_branch = ?")
        params.append(branch)
    if agent is not None:
        where.append("m.agent = ?")
        params.append(agent)
    if folded_query:
        conn.create_scalar_function("wm_fold", fold, 1, deterministic=True)  # type: ignore[arg-type]
        # Tags as their words, not their JSON text: a query of `"` matches no bracket.
        tag_words = "(SELECT group_concat(t.value, ' ') FROM json_each(m.tags) t)"
        where.append(
            f"instr(wm_fold(m.title || ' ' || m.content || ' ' || coalesce({tag_words}, '')), ?)"
            " > 0"
        )
        params.append(folded_query)
    return " AND ".join(where), params


def active_keys_with_prefix(
    conn: Connection, project_id: str, prefix: str
) -> list[tuple[str, str, str | None]]:
    """(id, key, source_ref) of the project's active memories whose key starts with `prefix`."""
    rows = conn.execute(
        "SELECT id, key, source_ref FROM memories WHERE project_id = ? AND key >= ? AND key < ?"
        " AND status = 'active' ORDER BY key",
        (project_id, prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)),
    ).fetchall()
    return [(str(i), str(k), None if s is None else str(s)) for i, k, s in rows]


def active_memories(conn: Connection, project_id: str) -> list[Memory]:
    """Every active memory of the project, in the order they were written."""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM memories WHERE project_id = ? AND status = 'active' ORDER BY rowid",
        (project_id,),
    ).fetchall()
    return [from_row(tuple(r)) for r in rows]


def rowids_of(conn: Connection, memory_ids: Sequence[str]) -> dict[str, int]:
    """id -> rowid of those memories."""
    return {
        str(i): int(r)
        for i, r in conn.execute(
            "SELECT id, rowid FROM memories WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(memory_ids)),),
        )
    }


def lessons_since(conn: Connection, project_id: str, since: str, limit: int) -> list[Memory]:
    """The project's newest `limit` active lessons written at or after `since`."""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM memories WHERE project_id = ? AND status = 'active'"
        " AND type = 'lesson' AND created_at >= ? ORDER BY created_at DESC, id DESC LIMIT ?",
        (project_id, since, limit),
    ).fetchall()
    return [from_row(tuple(r)) for r in rows]


def mark_personal(conn: Connection, memory_id: str, stamp: str) -> None:
    """`memory_id` never leaves this machine (a personal memory of a shared project)."""
    conn.execute(
        "INSERT OR IGNORE INTO personal_memories (memory_id, created_at) VALUES (?, ?)",
        (memory_id, stamp),
    )


def unmark_personal(conn: Connection, memory_id: str) -> bool:
    conn.execute("DELETE FROM personal_memories WHERE memory_id = ?", (memory_id,))
    return conn.changes() == 1


def personal_among(conn: Connection, memory_ids: Sequence[str]) -> set[str]:
    """Those of `memory_ids` that are personal (kept off the team store)."""
    if not memory_ids:
        return set()
    marks = ", ".join("?" * len(memory_ids))
    return {str(m) for (m,) in conn.execute(
        f"SELECT memory_id FROM personal_memories WHERE memory_id IN ({marks})",
        tuple(memory_ids),
    )}  # fmt: skip


def get_memories(conn: Connection, memory_ids: Sequence[str]) -> dict[str, Memory]:
    """`get_memory` of many, by id (those that exist), in one statement."""
    return {
        str(row[0]): from_row(row)
        for row in conn.execute(
            f"SELECT {COLUMNS} FROM memories WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(memory_ids)),),
        )
    }


def is_personal(conn: Connection, memory_id: str) -> bool:
    for _ in conn.execute("SELECT 1 FROM personal_memories WHERE memory_id = ?", (memory_id,)):
        return True
    return False


def cited_since(
    conn: Connection, project_id: str, types: Sequence[str], since: str, limit: int
) -> list[Memory]:
    """The project's newest active memories of `types` written at or after `since` (what
    outcomes from git can follow)."""
    marks = ", ".join("?" * len(types))
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM memories WHERE project_id = ? AND status = 'active'"
        f" AND type IN ({marks}) AND created_at >= ?"
        " ORDER BY created_at DESC, id DESC LIMIT ?",
        (project_id, *types, since, limit),
    ).fetchall()
    return [from_row(tuple(r)) for r in rows]


def with_steps_since(conn: Connection, project_id: str, since: str, limit: int) -> list[Memory]:
    """The project's newest active memories written since `since` whose text may hold
    numbered steps (a line starting `1.`, `1)` or `Step 1`)."""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM memories WHERE project_id = ? AND status = 'active'"
        " AND created_at >= ? AND (content LIKE '%1.%' OR content LIKE '%1)%'"
        " OR content LIKE '%step 1%') ORDER BY created_at DESC, id DESC LIMIT ?",
        (project_id, since, limit),
    ).fetchall()
    return [from_row(tuple(r)) for r in rows]


def tagged(conn: Connection, project_id: str, tag: str, limit: int) -> list[Memory]:
    """The project's active memories carrying `tag`, newest first."""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM memories WHERE project_id = ? AND status = 'active'"
        " AND EXISTS (SELECT 1 FROM json_each(memories.tags) t WHERE t.value = ?)"
        " ORDER BY created_at DESC, id DESC LIMIT ?",
        (project_id, tag, limit),
    ).fetchall()
    return [from_row(tuple(r)) for r in rows]


def by_key_prefix(conn: Connection, project_id: str, prefix: str, limit: int) -> list[Memory]:
    """The project's active memories whose key starts with `prefix` (memories_by_key: an
    index range, nothing read when there are none)."""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM memories WHERE project_id = ? AND key >= ? AND key < ?"
        " AND status = 'active' ORDER BY key LIMIT ?",
        (project_id, prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1), limit),
    ).fetchall()
    return [from_row(tuple(r)) for r in rows]


def of_project(conn: Connection, project_id: str) -> list[Memory]:
    """Every memory of the project, any status, oldest first (not the global ones)."""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM memories WHERE project_id = ? ORDER BY created_at, id",
        (project_id,),
    ).fetchall()
    return [from_row(tuple(r)) for r in rows]


def team_authors(conn: Connection, project_id: str) -> list[tuple[str, int]]:
    """(author, active memories) of the project's memories pulled from the team, most first
    (20 at most), from their own index (m047)."""
    return [
        (str(client)[5:], int(n))
        for client, n in conn.execute(
            "SELECT client, count(*) FROM memories INDEXED BY memories_team_authors"
            " WHERE project_id = ? AND status = 'active' AND client LIKE 'team:%'"
            " GROUP BY client ORDER BY 2 DESC, 1 LIMIT 20",
            (project_id,),
        )
    ]
