"""SQL for recall's candidate tiers: FTS5 BM25 over `memories_fts`, its vocabulary, path
targets, links and tags; and the light columns candidates are ranked on.

Every query here was shaped by measurement (INDEXED BY, CROSS JOIN, ranges instead of LIKE):
keep their form when touching them, and re-run bench/recall_latency.py.
"""

from __future__ import annotations

import apsw

from waymark.storage.memories import agent_where, kind_where, rowid_list

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

    from waymark.storage.connection import Connection

# What FTS5's tokenizer is asked to do with a text (apsw's constants, named here).
TOKENIZE_DOCUMENT = apsw.FTS5_TOKENIZE_DOCUMENT
TOKENIZE_QUERY = apsw.FTS5_TOKENIZE_QUERY


# How many of the best matches overall the first query scores and filters (x the limit).
BM25_FIRST = 4


def bm25(
    conn: Connection,
    project_id: str,
    match: str,
    limit: int,
    weights: Sequence[float],
    include_inactive: bool,
) -> list[tuple[int, float]]:
    """(rowid, score) of the best BM25 matches of `match` among the project's memories and the
    global ones; higher is better (FTS5's bm25 negated).

    The best `BM25_FIRST * limit` matches of the whole index are filtered first: when `limit`
    of them pass, they are exactly the answer (a passing match outside them scores below
    all of them). Else every match is filtered, as one query. Looking each match up in
    `memories` cost more than scoring it (16 -> 7 ms for 11,000 matches at a million)."""
    columns = ", ".join(str(w) for w in weights)
    active = "" if include_inactive else " AND m.status = 'active'"
    scope = f" AND (m.project_id = ? OR m.project_id IS NULL){active}"
    best = (
        f"SELECT f.rowid, f.s FROM (SELECT rowid, bm25(memories_fts, {columns}) AS s"
        " FROM memories_fts WHERE memories_fts MATCH ? ORDER BY s, rowid LIMIT ?) f"
        f" JOIN memories m INDEXED BY memories_live ON m.rowid = f.rowid WHERE 1{scope}"
        " ORDER BY f.s, f.rowid LIMIT ?"
    )
    found: list[Any] = conn.execute(best, (match, BM25_FIRST * limit, project_id, limit)).fetchall()
    if len(found) < limit:  # too few of the best pass (or there are no more): all of them
        found = conn.execute(
            f"SELECT f.rowid, bm25(memories_fts, {columns}) AS s FROM memories_fts f"
            " JOIN memories m INDEXED BY memories_live ON m.rowid = f.rowid"
            f" WHERE memories_fts MATCH ?{scope} ORDER BY s, f.rowid LIMIT ?",
            (match, project_id, limit),
        ).fetchall()
    return [(int(rowid), -float(score)) for rowid, score in found]


def target_rows(
    conn: Connection,
    project_id: str,
    exact: Sequence[str],
    ranges: Sequence[tuple[str, str]],
    limit: int,
) -> list[tuple[int, str]]:
    """(rowid, scope_target) of active memories whose target is one of `exact` or falls in
    one of the [low, high) `ranges`: all served by the memories_by_target index. At most the
    `limit` lowest rowids of each exact target and of each range: recall ranks one target's
    (or one range's) memories alike and breaks ties by rowid, so no others could be kept,
    and a directory of a large store holds tens of thousands."""
    base = (
        "SELECT rowid, scope_target FROM memories WHERE project_id = ? AND status = 'active'"
        " AND scope_target IS NOT NULL"  # only path scopes have a target
    )
    rows: list[Any] = []
    for target in dict.fromkeys(exact):
        rows += conn.execute(
            f"{base} AND scope_target = ? ORDER BY rowid LIMIT ?", (project_id, target, limit)
        ).fetchall()
    for low, high in ranges:
        rows += conn.execute(
            f"{base} AND scope_target >= ? AND scope_target < ? ORDER BY rowid LIMIT ?",
            (project_id, low, high, limit),
        ).fetchall()
    return [(int(r), str(t)) for r, t in rows]


def vocabulary(conn: Connection, low: str, high: str) -> list[str]:
    """Index terms in [low, high)."""
    return [
        str(t)
        for (t,) in conn.execute(
            "SELECT term FROM memories_fts_vocab WHERE term >= ? AND term < ?", (low, high)
        )
    ]


def is_indexed(conn: Connection, phrase: str) -> bool:
    """Whether any memory matches the FTS phrase (a quoted word)."""
    row = conn.execute(
        "SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT 1", (phrase,)
    ).fetchone()
    return row is not None


def index_state(conn: Connection) -> bytes:
    """The lexical index's structure record (FTS5 keeps it at id 10 of its data table): it
    changes whenever the index does, and with nothing else, so what was counted from the
    index stays true while it is equal. One indexed read."""
    row = conn.execute("SELECT block FROM memories_fts_data WHERE id = 10").fetchone()
    return bytes(row[0]) if row is not None else b""


def doc_frequency(conn: Connection, stem: str) -> int:
    """How many memories hold the index term `stem` (0 when none)."""
    row = conn.execute("SELECT doc FROM memories_fts_vocab WHERE term = ?", (stem,)).fetchone()
    return int(row[0]) if row is not None else 0


def kept_doc_frequencies(conn: Connection, state: bytes, stems: Sequence[str]) -> dict[str, int]:
    """The document counts `keep_doc_frequencies` kept for `stems`, when they were counted on
    the index whose structure record is `state` (`index_state`); else none."""
    row = conn.execute("SELECT state FROM term_counts_state WHERE id = 1").fetchone()
    if row is None or bytes(row[0]) != state or not stems:
        return {}
    from waymark.base import jsonlite as json

    found = conn.execute(
        "SELECT term, docs FROM term_counts WHERE term IN (SELECT value FROM json_each(?))",
        (json.dumps(list(stems)),),
    )
    return {str(term): int(docs) for term, docs in found}


def keep_doc_frequencies(conn: Connection, state: bytes, counts: dict[str, int]) -> bool:
    """Keep `counts` (index term: memories holding it), counted on the index `state`, for
    the next process; the counts of an older index go. Never waits for the lock, never
    writes a read-only or damaged file, never fails the search that counted them: False
    when nothing was kept (also when the index has moved on)."""
    from waymark.errors import WaymarkError
    from waymark.storage.connection import read_only, write

    if not counts or conn.in_transaction or read_only(conn):
        return False
    waits = int(conn.execute("PRAGMA busy_timeout").get)
    conn.set_busy_timeout(0)
    try:
        with write(conn):
            if index_state(conn) != state:
                return False
            row = conn.execute("SELECT state FROM term_counts_state WHERE id = 1").fetchone()
            if row is None or bytes(row[0]) != state:
                conn.execute("DELETE FROM term_counts")
                conn.execute(
                    "INSERT OR REPLACE INTO term_counts_state (id, state) VALUES (1, ?)", (state,)
                )
            conn.executemany(
                "INSERT OR REPLACE INTO term_counts (term, docs) VALUES (?, ?)",
                list(counts.items()),
            )
        return True
    except (apsw.Error, WaymarkError):  # busy (the next process keeps them), damaged, full
        return False
    finally:
        conn.set_busy_timeout(waits)


def tokenizer(conn: Connection, name: tuple[Any, ...]) -> Any:
    """The index's own tokenizer, callable from Python (APSW 3.47+), or None."""
    get = getattr(conn, "fts5_tokenizer", None)
    return None if get is None else get(*name)


def openings(conn: Connection, rowids: Sequence[int], chars: int) -> list[str]:
    """The first `chars` characters of each memory's content."""
    return [
        str(text)
        for (text,) in conn.execute(
            "SELECT substr(content, 1, ?) FROM memories"
            " WHERE rowid IN (SELECT value FROM json_each(?))",
            (chars, rowid_list(rowids)),
        )
    ]


def linked(conn: Connection, rowids: Sequence[int]) -> list[tuple[int, str]]:
    """(rowid, the seed's id) of memories linked to or from any of `rowids`."""
    rows: Any = conn.execute(
        """
        WITH seed(id) AS (SELECT id FROM memories WHERE rowid IN (SELECT value FROM json_each(?)))
        SELECT m.rowid, seed.id FROM links l JOIN seed ON l.src = seed.id
            JOIN memories m ON m.id = l.dst
        UNION ALL
        SELECT m.rowid, seed.id FROM links l JOIN seed ON l.dst = seed.id
            JOIN memories m ON m.id = l.src
        """,
        (rowid_list(rowids),),
    ).fetchall()
    return [(int(r), str(seed)) for r, seed in rows]


def tags_of(conn: Connection, rowids: Sequence[int]) -> list[tuple[str | None, str]]:
    """(project_id, tags as JSON text) of each memory."""
    return list(
        conn.execute(
            "SELECT project_id, tags FROM memories WHERE rowid IN (SELECT value FROM json_each(?))",
            (rowid_list(rowids),),
        )
    )


def tagged(conn: Connection, match: str) -> Iterator[tuple[int, str | None, str]]:
    """(rowid, project_id, tags JSON) of active memories whose tags column matches, by rowid:
    read lazily, so a caller that has enough stops early."""
    for rowid, project_id, tags in conn.execute(
        "SELECT m.rowid, m.project_id, m.tags FROM memories_fts f JOIN memories m"
        " ON m.rowid = f.rowid WHERE memories_fts MATCH ? AND m.status = 'active'"
        " ORDER BY f.rowid",
        (match,),
    ):
        yield int(rowid), project_id, tags


def light_rows(
    conn: Connection,
    rowids: Sequence[int],
    columns: Sequence[str],
    *,
    project_id: str,
    include_inactive: bool,
    now_iso: str,
    types: Sequence[str],
    tags: Sequence[str],
    agent: str | None = None,
) -> list[tuple[Any, ...]]:
    """(rowid, *columns, uses, last_used, shown, used) of the candidates that pass the
    filters (`shown` and `used`: measured since m035): the
    project's or global, everyone's or `agent`'s, active and not expired unless
    `include_inactive`, of `types`, with every one of `tags`."""
    whose, whose_params = agent_where(agent, "m.agent")
    where = ["(m.project_id = ? OR m.project_id IS NULL)", whose]
    params: list[Any] = [rowid_list(rowids), project_id, *whose_params]
    if not include_inactive:
        where += ["m.status = 'active'", "(m.valid_until IS NULL OR m.valid_until > ?)"]
        params.append(now_iso)
    kinds, kind_params = kind_where(types, tags)
    where += kinds
    params += kind_params
    # CROSS JOIN: look the candidates up by rowid, never scan the project's index for them.
    return conn.execute(
        f"SELECT m.rowid, {', '.join('m.' + name for name in columns)}, u.uses,"
        " u.last_used, u.shown, u.used FROM json_each(?) j CROSS JOIN memories m"
        " ON m.rowid = j.value"
        " LEFT JOIN memory_use u ON u.memory_rowid = m.rowid"
        f" WHERE {' AND '.join(where)}",
        params,
    ).fetchall()


def typed_matches(
    conn: Connection, project_id: str, match: str, types: Sequence[str], limit: int
) -> list[int]:
    """Rowids of the project's (and global) active memories of `types` whose text matches the
    FTS5 expression `match`, newest first: FTS5 walks rowids downward and stops at `limit`
    (ranking every match by bm25 cost 5-10x more for a common word)."""
    marks = ", ".join("?" * len(types))
    return [
        int(r[0])
        for r in conn.execute(
            "SELECT f.rowid FROM memories_fts f"
            " JOIN memories m INDEXED BY memories_live ON m.rowid = f.rowid"
            " WHERE memories_fts MATCH ? AND (m.project_id = ? OR m.project_id IS NULL)"
            f" AND m.status = 'active' AND m.agent IS NULL AND m.type IN ({marks})"
            " ORDER BY f.rowid DESC LIMIT ?",
            (match, project_id, *types, limit),
        )
    ]
