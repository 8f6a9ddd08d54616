"""SQL for team recall on the server (the sibling of `storage.search`): full-text search
(tsvector) and pgvector neighbours over a project's active team memories, fused by rank."""

from __future__ import annotations

import math
import time
from typing import Any

FUSION_K = 60  # reciprocal rank fusion, as local recall fuses its tiers
CANDIDATES = 50
STATS_TTL_S = 600  # how long a warm connection trusts the lexeme counts it read
VECTOR_INDEX_ROWS = 20_000  # below this an exact scan is cheap (~20 ms)


def team_matches(
    conn: Any, project_key: str, words: list[str], vector: list[float] | None, limit: int
) -> list[tuple[str, float]]:
    """(memory id, fused score) of the best active team memories for `words` (OR-ed lexemes,
    already reduced to letters and digits) and `vector`, best first."""
    ranked = []
    if words:
        ranked.append(_lexical(conn, project_key, words))
    if vector is not None:
        ranked.append(_neighbours(conn, project_key, vector))
    scores: dict[str, float] = {}
    for ids in ranked:
        for rank, memory_id in enumerate(ids, 1):
            scores[memory_id] = scores.get(memory_id, 0.0) + 1.0 / (FUSION_K + rank)
    best = sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
    return best[:limit]


def _lexical(conn: Any, project_key: str, words: list[str]) -> list[str]:
    rows = conn.execute(
        "SELECT id FROM team_memories, to_tsquery('simple', %s) AS q"
        " WHERE project_key = %s AND status = 'active' AND tsv @@ q"
        " ORDER BY ts_rank_cd(tsv, q) DESC, id LIMIT %s",
        (" | ".join(words), project_key, CANDIDATES),
    ).fetchall()
    return [str(r[0]) for r in rows]


def _neighbours(conn: Any, project_key: str, vector: list[float]) -> list[str]:
    """The nearest active memories of the project: through the IVFFlat index when the
    planner takes it (a large project), exact otherwise. The index filters after it scans,
    so when it returned fewer than the project holds, the scan is redone over every list."""
    _probes(conn)
    literal = "[" + ",".join(map(repr, vector)) + "]"
    sql = (
        "SELECT id FROM team_memories WHERE project_key = %s AND status = 'active'"
        " AND embedding IS NOT NULL ORDER BY embedding <=> %s::vector LIMIT %s"
    )
    params = (project_key, literal, CANDIDATES)
    ids = [str(r[0]) for r in conn.execute(sql, params).fetchall()]
    if len(ids) < CANDIDATES and conn._waymark_lists:
        held = conn.execute(
            "SELECT count(*) FROM team_memories WHERE project_key = %s AND status = 'active'"
            " AND embedding IS NOT NULL",
            (project_key,),
        ).fetchone()[0]
        if held > len(ids):
            with conn.transaction():
                conn.execute(f"SET LOCAL ivfflat.probes = {int(conn._waymark_lists)}")
                ids = [str(r[0]) for r in conn.execute(sql, params).fetchall()]
    return ids


def _probes(conn: Any) -> None:
    """How many of the index's lists a query scans (the square root of their number, 10 at
    least), set on the connection once per STATS_TTL_S."""
    if time.monotonic() < getattr(conn, "_waymark_probes_until", 0.0):
        return
    row = conn.execute(
        "SELECT substring(array_to_string(reloptions, ',') FROM 'lists=([0-9]+)')::integer"
        " FROM pg_class WHERE relname = 'team_memories_embedding'"
    ).fetchone()
    lists = int(row[0]) if row and row[0] else 0
    if lists:
        conn.execute(f"SET ivfflat.probes = {min(lists, max(10, math.ceil(math.sqrt(lists))))}")
    conn._waymark_lists = lists
    conn._waymark_probes_until = time.monotonic() + STATS_TTL_S


def lexeme_shares(conn: Any) -> tuple[dict[str, float], float, float]:
    """What share of team memories holds each of the commonest lexemes (the server's own
    statistics, read once per STATS_TTL_S on a connection), the share under which every
    other lexeme falls, and how many memories there are."""
    cached = getattr(conn, "_waymark_lexemes", None)
    if cached is not None and time.monotonic() < cached[0]:
        return cached[1]
    row = conn.execute(
        "SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs,"
        " greatest(c.reltuples, 0) FROM pg_class c LEFT JOIN pg_stats s"
        " ON s.tablename = c.relname AND s.attname = 'tsv'"
        " AND s.schemaname = current_schema() WHERE c.oid = 'team_memories'::regclass"
    ).fetchone()
    elems, freqs, rows = row or (None, None, 0.0)
    shares: dict[str, float] = {}
    rarest = 0.0
    if elems and freqs:
        shares = dict(zip(elems, freqs[: len(elems)], strict=True))
        rarest = min(freqs[: len(elems)])
    found = (shares, rarest, float(rows))
    conn._waymark_lexemes = (time.monotonic() + STATS_TTL_S, found)
    return found


def tend_vectors(conn: Any, min_rows: int = VECTOR_INDEX_ROWS) -> str:
    """Build or rebuild the vector index when the store has grown to need it (the server's
    `waymark_tend_vectors`, run as the schema's owner): 'kept', 'busy' or 'built <lists>'."""
    with conn.transaction():
        row = conn.execute("SELECT waymark_tend_vectors(%s)", (min_rows,)).fetchone()
    return str(row[0])
