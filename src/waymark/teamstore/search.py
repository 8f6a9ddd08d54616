"""SQL for team recall on the server (the sibling of `storage.search`): full-text search
(tsvector) and pgvector neighbours over a project's active team memories, fused by rank."""

from __future__ import annotations

from typing import Any

FUSION_K = 60  # reciprocal rank fusion, as local recall fuses its tiers
CANDIDATES = 50


def team_matches(
    conn: Any, project_key: str, words: list[str], vector: list[float] | None, limit: int
) -> list[tuple[str, float]]:
    """(memory id, fused score) of the best active team memories for `words` (OR-ed lexemes,
    already reduced to letters and digits) and `vector`, best first."""
    parts, params = [], []
    if words:
        query = " | ".join(words)
        parts.append(
            "SELECT id, row_number() OVER (ORDER BY ts_rank_cd(tsv, q) DESC, id) AS r"
            " FROM team_memories, to_tsquery('simple', %s) AS q"
            " WHERE project_key = %s AND status = 'active' AND tsv @@ q"
            " ORDER BY ts_rank_cd(tsv, q) DESC, id LIMIT %s"
        )
        params += [query, project_key, CANDIDATES]
    if vector is not None:
        literal = "[" + ",".join(map(repr, vector)) + "]"
        parts.append(
            "SELECT id, row_number() OVER (ORDER BY embedding <=> %s::vector, id) AS r"
            " FROM team_memories WHERE project_key = %s AND status = 'active'"
            " AND embedding IS NOT NULL ORDER BY embedding <=> %s::vector, id LIMIT %s"
        )
        params += [literal, project_key, literal, CANDIDATES]
    if not parts:
        return []
    union = " UNION ALL ".join(f"({p})" for p in parts)
    rows = conn.execute(
        f"SELECT id, sum(1.0 / ({FUSION_K} + r)) AS score FROM ({union}) AS ranked"
        " GROUP BY id ORDER BY score DESC, id LIMIT %s",
        (*params, limit),
    ).fetchall()
    return [(str(r[0]), float(r[1])) for r in rows]
