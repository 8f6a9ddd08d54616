"""Ranked recall: find the few memories that matter for a query.

Tiers, each a ranked list of candidates:
- lexical: FTS5 BM25 with per-column weights over safe, tokenised query terms;
- semantic: cosine neighbours from the caller (the warm server, or an in-process embedder);
- path: memories scoped to the files and directories the query names;
- fuzzy: typo and identifier repair, only for query words the index does not know;
- graph: one hop from the top hits along explicit links and shared tags, at a discount.

They meet in weighted reciprocal-rank fusion; bounded multipliers (recency, use, priority and
pin, scope fit) then adjust. Recall never writes: ranking state changes only through
`mark_used`, called when a memory is really used, so results never depend on query order.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import apsw

from . import fts, pathnames
from .projects import Project
from .memory import COLUMNS, TYPES, Memory, from_row

FTS_WEIGHTS = (4.0, 1.0, 2.0, 2.0)  # title, content, tags, target
NEVER_DECAY = ("convention", "decision")


@dataclass(frozen=True)
class Settings:
    """Ranking knobs; the defaults are tuned on the development set (bench/retrieval.py)."""

    rrf_k: float = 60.0
    lexical_weight: float = 1.0
    semantic_weight: float = 1.0
    path_weight: float = 1.0
    fuzzy_weight: float = 0.5
    graph_weight: float = 0.3
    candidates: int = 100
    graph_seeds: int = 5
    half_life_days: float = 90.0
    recency_floor: float = 0.85  # an old memory keeps at least this share of its score
    use_boost: float = 0.08  # at most +8% for a memory used often and lately
    priority_step: float = 0.02  # per priority point, ±20% at the extremes
    pin_boost: float = 0.10
    file_fit: float = 0.35  # the query names this memory's file
    dir_fit: float = 0.2  # ... or a directory above it, or a file below its directory


@dataclass(frozen=True)
class Hit:
    memory: Memory
    score: float
    explain: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, *, with_explain: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"memory": self.memory.to_dict(), "score": round(self.score, 6)}
        if with_explain:
            out["explain"] = self.explain
        return out


def recall(
    conn: apsw.Connection,
    project: Project,
    query: str,
    *,
    limit: int = 10,
    types: Sequence[str] = (),
    tags: Sequence[str] = (),
    paths: Sequence[str] = (),
    semantic: Sequence[tuple[int, float]] | None = None,
    include_inactive: bool = False,
    settings: Settings = Settings(),
    now: float | None = None,
) -> list[Hit]:
    """The best `limit` memories for `query`, best first, each with its score breakdown."""
    _check(limit, types)
    query = _clean(query)
    named = pathnames.normalise(project, [*paths, *pathnames.mentioned(query)])
    tiers: dict[str, list[tuple[int, float]]] = {
        "lexical": _bm25(
            conn, project, fts.match_expression(query), settings.candidates, include_inactive
        ),
        "semantic": list(semantic or [])[: settings.candidates],
        "path": _by_path(conn, project, named, settings),
        "fuzzy": _fuzzy(conn, project, query, settings.candidates, include_inactive),
    }
    fused = _fuse(tiers, settings)
    tiers["graph"] = _graph(conn, fused, settings)
    fused = _fuse(tiers, settings)
    rows = _load(conn, project, list(fused), types, tags, include_inactive, now)
    hits = [_score(*rows[rowid], fused[rowid], named, settings, now) for rowid in rows]
    if include_inactive:
        hits = _successors_first(hits)
    hits.sort(key=lambda h: (-h.score, h.memory.id))
    return hits[:limit]


def _successors_first(hits: list[Hit]) -> list[Hit]:
    """A superseded record may be shown on request, but never above its successor."""
    score = {h.memory.id: h.score for h in hits}
    out = []
    for hit in hits:
        successor = hit.memory.superseded_by
        if successor in score and hit.score >= score[successor]:
            factor = score[successor] * 0.999 / hit.score
            multipliers = dict(hit.explain["multipliers"], status=factor)
            hit = Hit(
                hit.memory,
                hit.score * factor,
                dict(hit.explain, multipliers=multipliers, score=hit.score * factor),
            )
        out.append(hit)
    return out


def _check(limit: int, types: Sequence[str]) -> None:
    from .errors import InvalidArgument

    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 200:
        raise InvalidArgument(f"limit must be an integer from 1 to 200 (got {limit!r})")
    bad = [t for t in types if t not in TYPES]
    if bad:
        raise InvalidArgument(f"unknown type {bad[0]!r}; valid types: {', '.join(TYPES)}")


def _clean(query: str) -> str:
    if isinstance(query, bytes):
        query = query.decode("utf-8", "replace")
    return str(query).replace("\x00", " ")[:20_000]


def _bm25(
    conn: apsw.Connection, project: Project, expr: str | None, n: int, include_inactive: bool
) -> list[tuple[int, float]]:
    if expr is None:
        return []
    weights = ", ".join(str(w) for w in FTS_WEIGHTS)
    active = "" if include_inactive else " AND m.status = 'active'"
    return [
        (int(rowid), -float(score))
        for rowid, score in conn.execute(
            f"SELECT f.rowid, bm25(memories_fts, {weights}) AS s FROM memories_fts f"
            " JOIN memories m ON m.rowid = f.rowid WHERE memories_fts MATCH ?"
            f" AND (m.project_id = ? OR m.project_id IS NULL){active} ORDER BY s LIMIT ?",
            (expr, project.id, n),
        )
    ]


def _by_path(
    conn: apsw.Connection, project: Project, named: list[str], s: Settings
) -> list[tuple[int, float]]:
    """Memories scoped to a named path, a directory above it, or (for a named directory)
    something below it: the most specific first."""
    found: dict[int, float] = {}
    for path in named:
        above = pathnames.ancestors(path)
        prefix = pathnames.like_prefix(path)
        rows = conn.execute(
            "SELECT rowid, scope_target FROM memories WHERE project_id = ? AND status = 'active'"
            " AND scope_type IN ('file', 'directory', 'symbol') AND (scope_target = ?"
            " OR scope_target IN (SELECT value FROM json_each(?))"
            " OR scope_target LIKE ? ESCAPE '\\' OR scope_target LIKE ? ESCAPE '\\')",
            (project.id, path, json.dumps(above), prefix + "::%", prefix + "/%"),
        )
        for rowid, target in rows:
            base = str(target).partition("::")[0]
            if base == path:
                fit = 1.0
            elif base in above:
                fit = 0.9 - 0.1 * min(above.index(base), 5)
            else:
                fit = 0.5
            found[int(rowid)] = max(found.get(int(rowid), 0.0), fit)
    return sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))[: s.candidates]


def _fuzzy(
    conn: apsw.Connection, project: Project, query: str, n: int, include_inactive: bool
) -> list[tuple[int, float]]:
    """Repair query words the index has never seen (typos, identifier spellings)."""
    words = [w for w in fts.tokens(query) if len(w) >= 5 and not w.isdigit()]
    unknown = [w for w in words if not _indexed(conn, w)][:4]
    if not unknown:
        return []
    from rapidfuzz import fuzz, process  # only queries with unknown words pay for it

    repaired: list[str] = []
    for word in unknown:
        # Typos rarely hit the first letter: compare with that slice of the vocabulary only.
        vocab = [
            str(t)
            for (t,) in conn.execute(
                "SELECT term FROM memories_fts_vocab WHERE term >= ? AND term < ?",
                (word[0], word[0] + "\U0010ffff"),
            )
        ]
        for term, _score, _ in process.extract(
            word, vocab, scorer=fuzz.ratio, limit=2, score_cutoff=80
        ):
            repaired.append(term)
    expr = " OR ".join(f'"{t}"' for t in dict.fromkeys(repaired)) if repaired else None
    return _bm25(conn, project, expr, n, include_inactive)


def _indexed(conn: apsw.Connection, word: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT 1", (f'"{word}"',)
    ).fetchone()
    return row is not None


def _fuse(tiers: dict[str, list[tuple[int, float]]], s: Settings) -> dict[int, dict[str, Any]]:
    weights = {
        "lexical": s.lexical_weight,
        "semantic": s.semantic_weight,
        "path": s.path_weight,
        "fuzzy": s.fuzzy_weight,
        "graph": s.graph_weight,
    }
    fused: dict[int, dict[str, Any]] = {}
    for name, ranked in tiers.items():
        for rank, (rowid, raw) in enumerate(ranked, 1):
            entry = fused.setdefault(rowid, {"rrf": 0.0, "tiers": {}})
            part = weights[name] / (s.rrf_k + rank)
            entry["rrf"] += part
            entry["tiers"][name] = {"rank": rank, "score": round(raw, 6), "rrf": round(part, 8)}
    return fused


def _graph(
    conn: apsw.Connection, fused: dict[int, dict[str, Any]], s: Settings
) -> list[tuple[int, float]]:
    """Neighbours of the top hits: explicit links both ways and shared tags."""
    seeds = sorted(fused, key=lambda r: (-fused[r]["rrf"], r))[: s.graph_seeds]
    if not seeds:
        return []
    marks = ", ".join("?" * len(seeds))
    rows = conn.execute(
        f"""
        WITH seed(rowid, id, tags) AS (SELECT rowid, id, tags FROM memories WHERE rowid IN ({marks}))
        SELECT m.rowid, 1.0 FROM links l JOIN seed ON l.src = seed.id
            JOIN memories m ON m.id = l.dst
        UNION ALL
        SELECT m.rowid, 1.0 FROM links l JOIN seed ON l.dst = seed.id
            JOIN memories m ON m.id = l.src
        UNION ALL
        SELECT m.rowid, 0.5 FROM seed, json_each(seed.tags) t
            JOIN memories m ON m.rowid <> seed.rowid AND m.status = 'active'
            AND m.project_id IS (SELECT project_id FROM memories WHERE rowid = seed.rowid)
            AND EXISTS (SELECT 1 FROM json_each(m.tags) u WHERE u.value = t.value)
        """,
        seeds,
    ).fetchall()
    best: dict[int, float] = {}
    for rowid, weight in rows:
        if rowid not in seeds:
            best[int(rowid)] = max(best.get(int(rowid), 0.0), float(weight))
    return sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[: s.candidates]


def _load(
    conn: apsw.Connection,
    project: Project,
    rowids: list[int],
    types: Sequence[str],
    tags: Sequence[str],
    include_inactive: bool,
    now: float | None,
) -> dict[int, tuple[Memory, int, str | None]]:
    if not rowids:
        return {}
    where = ["rowid IN (SELECT value FROM json_each(?))", "(project_id = ? OR project_id IS NULL)"]
    params: list[Any] = [_json_list(rowids), project.id]
    if not include_inactive:
        where += ["status = 'active'", "(valid_until IS NULL OR valid_until > ?)"]
        params.append(_iso(now))
    if types:
        where.append(f"type IN ({', '.join('?' * len(types))})")
        params.extend(types)
    for tag in tags:
        where.append("EXISTS (SELECT 1 FROM json_each(tags) WHERE value = ?)")
        params.append(tag)
    rows = conn.execute(
        f"SELECT rowid, {COLUMNS}, (SELECT uses FROM memory_use WHERE memory_rowid = rowid),"
        f" (SELECT last_used FROM memory_use WHERE memory_rowid = rowid)"
        f" FROM memories WHERE {' AND '.join(where)}",
        params,
    ).fetchall()
    return {int(row[0]): (from_row(row[1:-2]), int(row[-2] or 0), row[-1]) for row in rows}


def _json_list(values: Iterable[int]) -> str:
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def _score(
    memory: Memory,
    uses: int,
    last_used: str | None,
    fused: dict[str, Any],
    named: list[str],
    s: Settings,
    now: float | None,
) -> Hit:
    multipliers = {
        "recency": _recency(memory, s, now),
        "use": _use(uses, last_used, s, now),
        "priority": 1.0
        + s.priority_step * memory.priority
        + (s.pin_boost if memory.pinned else 0.0),
        "scope": _scope_fit(memory, named, s),
    }
    score = fused["rrf"]
    for value in multipliers.values():
        score *= value
    explain = {
        "tiers": fused["tiers"],
        "rrf": fused["rrf"],
        "multipliers": multipliers,
        "score": score,
    }
    return Hit(memory=memory, score=score, explain=explain)


def _age_days(stamp: str | None, now: float | None) -> float:
    if not stamp:
        return math.inf
    then = datetime.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    return max(0.0, ((now or time.time()) - then.timestamp()) / 86400.0)


def _recency(memory: Memory, s: Settings, now: float | None) -> float:
    if memory.pinned or memory.type in NEVER_DECAY:
        return 1.0
    decay = 0.5 ** (_age_days(memory.event_time, now) / s.half_life_days)
    return s.recency_floor + (1.0 - s.recency_floor) * decay


def _use(uses: int, last_used: str | None, s: Settings, now: float | None) -> float:
    if not uses:
        return 1.0
    frequency = min(1.0, math.log1p(uses) / math.log1p(20))
    freshness = 0.5 ** (_age_days(last_used, now) / s.half_life_days)
    return 1.0 + s.use_boost * frequency * (0.5 + 0.5 * freshness)


def _scope_fit(memory: Memory, named: list[str], s: Settings) -> float:
    if not named or memory.scope_type not in ("file", "directory", "symbol"):
        return 1.0
    target = (memory.scope_target or "").partition("::")[0]
    best = 1.0
    for path in named:
        if path == target:
            best = max(best, 1.0 + s.file_fit)
        elif pathnames.is_within(path, target) or pathnames.is_within(target, path):
            best = max(best, 1.0 + s.dir_fit)
    return best


def _iso(now: float | None) -> str:
    t = now or time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t))


def mark_used(conn: apsw.Connection, memory_ids: Iterable[str]) -> None:
    """Count a real use (injected into a packet, or opened) of each memory."""
    from . import db

    ids = list(dict.fromkeys(memory_ids))
    if not ids:
        return
    with db.write(conn):
        stamp = db.now()
        for memory_id in ids:
            conn.execute(
                "INSERT INTO memory_use (memory_rowid, uses, last_used)"
                " SELECT rowid, 1, ? FROM memories WHERE id = ?"
                " ON CONFLICT (memory_rowid) DO UPDATE SET uses = uses + 1, last_used = excluded.last_used",
                (stamp, memory_id),
            )
