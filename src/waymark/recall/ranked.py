"""Ranked recall: find the few memories that matter for a query.

Tiers, each a ranked list of candidates:
- lexical: FTS5 BM25 with per-column weights over safe, tokenised query terms;
- semantic: cosine neighbours from the caller (the warm server, or an in-process embedder);
- path: memories scoped to the files and directories the query names;
- fuzzy: typo and identifier repair, only for query words the index does not know;
- expansion: BM25 again, for words that characterise the first pass's best hits (RM3-style
  pseudo-relevance feedback), so a memory phrased unlike the query can still be found;
- graph: one hop from the top hits along explicit links and shared tags, at a discount.

They meet in a weighted sum of normalised scores; bounded multipliers (recency, use, priority
and pin, scope fit) then adjust (`fusion`). The semantic tier is collected last, so a warm
caller embeds the query on a thread while every other tier runs; candidates are ranked on a
few light columns and only the winners are read whole. Recall never writes: ranking state
changes only through `mark_used`, called when a memory is really used, so results never
depend on query order.
"""

from __future__ import annotations

import time
from collections import namedtuple

import apsw

from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.memories.record import FIELDS, Memory, from_row, kind_filters
from waymark.projects import pathnames
from waymark.projects.resolve import Project
from waymark.recall import fusion
from waymark.recall import lexical as fts

TYPE_CHECKING = False  # typing and dataclasses would cost a hook process ~10 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

# Title, content, tags, target. FTS5's bm25() fixes k1 = 1.2; scaling every weight by c acts
# as k1 = 1.2 / c, so x4 means k1 = 0.3: a memory is short, and saying a word twice or at
# length should count for little (dev set, lexical R@10 0.604 -> 0.646).
FTS_WEIGHTS = (16.0, 4.0, 8.0, 8.0)


# Ranking knobs, tuned on the development set (bench/retrieval.py). A namedtuple, used as
# Settings(half_life_days=30, ...): hooks cannot afford `dataclasses`.
#   *_weight             each tier's share of the fused score (semantic 0.8, expansion 0.3, ...)
#   query_terms          a longer query is searched by its rarest words
#   candidates           pool per lexical tier (lexical, fuzzy, expansion); semantic its own
#   feedback_docs        first-pass hits that expansion words are drawn from
#   expansion_max_df     a word in more of all memories says little (and costs)
#   recency_floor        an old memory keeps at least this share of its score
#   use_boost            at most +8% for a memory used often and lately
#   priority_step        per priority point, ±20% at the extremes; pin_boost on top
#   file_fit, dir_fit    the query names this memory's file, or a directory around it
#   query_max_share      words in more of all memories are not searched (hooks: 0.05)
#   fuzzy_below          typo repair runs when the words as typed found fewer memories
#   query_max_rows       words stop, rarest first, past this many postings (0: no limit)
Settings = namedtuple(
    "Settings",
    "lexical_weight semantic_weight path_weight fuzzy_weight expansion_weight graph_weight"
    " query_terms candidates semantic_candidates feedback_docs expansion_terms"
    " expansion_max_df graph_seeds half_life_days recency_floor use_boost priority_step"
    " pin_boost file_fit dir_fit query_max_share fuzzy_below query_max_rows",
    defaults=[
        1.0,
        0.8,
        1.0,
        0.5,
        0.3,
        0.3,
        12,
        100,
        200,
        3,
        20,
        0.01,
        5,
        90.0,
        0.85,
        0.08,
        0.02,
        0.10,
        0.35,
        0.2,
        1.0,
        5,
        0,
    ],
)
DEFAULT = Settings()


# In a large store a word found in a tenth of all memories matches thousands of rows
# (most of a query's cost) and barely moves the ranking; small stores keep every word.
LARGE_STORE = 5_000
LARGE_STORE_SHARE = 0.10


def _max_share(conn: apsw.Connection, settings: Settings) -> float:
    if settings.query_max_share < 1.0:
        return float(settings.query_max_share)
    from waymark.storage.connection import scalar

    size = scalar(conn, "SELECT max(rowid) FROM memories") or 0
    return LARGE_STORE_SHARE if size > LARGE_STORE else 1.0


def settings_for(conn: apsw.Connection) -> Settings:
    """The defaults, with the user's `recall.*` settings (`waymark config`) applied."""
    from waymark import settings

    return DEFAULT._replace(half_life_days=float(settings.get(conn, "recall.half_life_days")))


class Hit(namedtuple("_Hit", "memory score explain")):
    """One result: the memory, its final score, and the breakdown that produced it."""

    __slots__ = ()

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
    semantic: Sequence[tuple[int, float]]
    | Callable[[], Sequence[tuple[int, float]] | None]
    | None = None,
    include_inactive: bool = False,
    settings: Settings = DEFAULT,
    now: float | None = None,
) -> list[Hit]:
    """The best `limit` memories for `query`, best first, each with its score breakdown."""
    _check(limit, types)
    query = _clean(query)
    named = pathnames.normalise(project, [*paths, *pathnames.mentioned(query)])
    expr = fts.focused_expression(
        conn,
        query,
        keep=settings.query_terms,
        max_share=_max_share(conn, settings),
        max_rows=settings.query_max_rows,
    )
    tiers: dict[str, list[tuple[int, float]]] = {
        "lexical": _bm25(conn, project, expr, settings.candidates, include_inactive),
        "path": _by_path(conn, project, named, settings),
    }
    # Typo repair only where it can help: when the words as typed found (almost) nothing.
    if len(tiers["lexical"]) < settings.fuzzy_below:
        tiers["fuzzy"] = _fuzzy(conn, project, query, settings.candidates, include_inactive)
    fused = fusion.fuse(tiers, settings)
    # Feedback needs a first pass that found the query's own words (and a weight to matter).
    if tiers["lexical"] and settings.expansion_weight > 0:
        expansion = _expansion(conn, project, query, fused, settings, include_inactive)
        fusion.fuse({"expansion": expansion}, settings, into=fused)
    fusion.fuse({"graph": _graph(conn, fused, settings)}, settings, into=fused)
    # Collected last: a warm server has been embedding while the lexical tiers ran.
    neighbours = semantic() if callable(semantic) else semantic
    found = list(neighbours or [])[: settings.semantic_candidates]
    fusion.fuse({"semantic": found}, settings, into=fused)

    # Candidates are scored on a few light columns; only the winners are read whole.
    def score(rowids: list[int]) -> list[tuple[float, tuple[Any, ...]]]:
        rows = _light(conn, project, rowids, types, tags, include_inactive, now)
        out = []
        for rowid in rowids:
            if rowid in rows:
                light, uses, last_used = rows[rowid]
                multipliers = fusion.multipliers(light, uses, last_used, named, settings, now)
                final = fused[rowid]["fused"]
                for value in multipliers.values():
                    final *= value
                out.append((final, (final, light.id, rowid, multipliers)))
        return out

    ceiling = fusion.ceiling(named, settings)
    scored = fusion.top(fused, limit, ceiling, score, exhaustive=include_inactive)
    scored.sort(key=lambda item: (-item[0], item[1]))
    if not include_inactive:
        scored = scored[:limit]
    memories = _memories(conn, [rowid for _, _, rowid, _ in scored])
    hits = [
        _hit(memories[rowid], final, fused[rowid], multipliers)
        for final, _, rowid, multipliers in scored
        if rowid in memories  # deleted by another connection since it was ranked
    ]
    if include_inactive:  # demoting a superseded record needs its successor scored too
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
    from waymark.errors import InvalidArgument

    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 200:
        raise InvalidArgument(f"limit must be an integer from 1 to 200 (got {limit!r})")
    kind_filters(types, ())  # refuses an unknown type before any work


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
            " JOIN memories m INDEXED BY memories_live ON m.rowid = f.rowid"
            " WHERE memories_fts MATCH ?"
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
    # Exact targets, then `path::Symbol` and `path/...` as ranges: all served by the
    # memories_by_target index (a LIKE would scan the project).
    base_sql = (
        "SELECT rowid, scope_target FROM memories WHERE project_id = ? AND status = 'active'"
        " AND scope_target IS NOT NULL"  # only path scopes have a target
    )
    for path in named:
        above = pathnames.ancestors(path)
        exact = [path, *above]
        rows = conn.execute(
            f"{base_sql} AND scope_target IN ({', '.join('?' * len(exact))})",
            (project.id, *exact),
        ).fetchall()
        for low, high in ((path + "::", path + ":;"), (path + "/", path + "0")):
            rows += conn.execute(
                f"{base_sql} AND scope_target >= ? AND scope_target < ?", (project.id, low, high)
            ).fetchall()
        rows_any: list[Any] = rows
        for rowid, target in rows_any:
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


def _expansion(
    conn: apsw.Connection,
    project: Project,
    query: str,
    fused: dict[int, dict[str, Any]],
    s: Settings,
    include_inactive: bool,
) -> list[tuple[int, float]]:
    """BM25 for words of the first pass's best hits that the query does not use."""
    top = fusion.best(fused, s.feedback_docs)
    if not top or s.expansion_weight <= 0:
        return []
    texts = [
        str(text)
        for (text,) in conn.execute(
            # The opening of a long memory is enough to characterise it, and bounds the cost.
            "SELECT substr(content, 1, 4000) FROM memories"
            " WHERE rowid IN (SELECT value FROM json_each(?))",
            (_json_list(top),),
        )
    ]
    expr = fts.expansion_expression(
        conn, query, texts, terms=s.expansion_terms, max_df=s.expansion_max_df
    )
    return _bm25(conn, project, expr, s.candidates, include_inactive)


def _graph(
    conn: apsw.Connection, fused: dict[int, dict[str, Any]], s: Settings
) -> list[tuple[int, float]]:
    """Neighbours of the top hits: explicit links both ways and shared tags."""
    seeds = fusion.best(fused, s.graph_seeds)
    if not seeds:
        return []
    rows = conn.execute(
        """
        WITH seed(id) AS (SELECT id FROM memories WHERE rowid IN (SELECT value FROM json_each(?)))
        SELECT m.rowid, 1.0 FROM links l JOIN seed ON l.src = seed.id
            JOIN memories m ON m.id = l.dst
        UNION ALL
        SELECT m.rowid, 1.0 FROM links l JOIN seed ON l.dst = seed.id
            JOIN memories m ON m.id = l.src
        """,
        (_json_list(seeds),),
    ).fetchall()
    best: dict[int, float] = {}
    pairs: list[Any] = [*rows, *_same_tags(conn, seeds, s.candidates)]
    for rowid, weight in pairs:
        if rowid not in seeds:
            best[int(rowid)] = max(best.get(int(rowid), 0.0), float(weight))
    return sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[: s.candidates]


def _same_tags(conn: apsw.Connection, seeds: list[int], n: int) -> list[tuple[int, float]]:
    """The first `n` active memories sharing an exact tag with a seed, in its project. The FTS
    tags column finds candidates in rowid order, so a tag on thousands of memories costs no
    more than a rare one; scanning the project instead costs 10 ms at 10k."""
    wanted = {
        (project_id, tag)
        for project_id, tags in conn.execute(
            "SELECT project_id, tags FROM memories WHERE rowid IN (SELECT value FROM json_each(?))",
            (_json_list(seeds),),
        )
        for tag in json.loads(tags)
    }
    if not wanted:
        return []
    phrases = sorted({'"' + tag.replace('"', '""') + '"' for _, tag in wanted})
    found: list[tuple[int, float]] = []
    for rowid, project_id, tags in conn.execute(
        "SELECT m.rowid, m.project_id, m.tags FROM memories_fts f JOIN memories m"
        " ON m.rowid = f.rowid WHERE memories_fts MATCH ? AND m.status = 'active'"
        " ORDER BY f.rowid",
        (f"tags : ({' OR '.join(phrases)})",),
    ):
        if rowid not in seeds and any((project_id, tag) in wanted for tag in json.loads(tags)):
            found.append((int(rowid), 0.5))
            if len(found) >= n:
                break
    return found


# What the multipliers read (fusion.multipliers): enough to rank a candidate without its text.
Light = namedtuple("Light", "id type priority pinned scope_type scope_target event_time")


def _light(
    conn: apsw.Connection,
    project: Project,
    rowids: list[int],
    types: Sequence[str],
    tags: Sequence[str],
    include_inactive: bool,
    now: float | None,
) -> dict[int, tuple[Light, int, str | None]]:
    """The candidates that pass the filters: rowid -> (light columns, uses, last used)."""
    if not rowids:
        return {}
    where = ["(m.project_id = ? OR m.project_id IS NULL)"]
    params: list[Any] = [_json_list(rowids), project.id]
    if not include_inactive:
        where += ["m.status = 'active'", "(m.valid_until IS NULL OR m.valid_until > ?)"]
        params.append(_iso(now))
    kinds, kind_params = kind_filters(types, tags)
    where += kinds
    params += kind_params
    # CROSS JOIN: look the candidates up by rowid, never scan the project's index for them.
    rows = conn.execute(
        f"SELECT m.rowid, {', '.join('m.' + name for name in Light._fields)}, u.uses,"
        " u.last_used FROM json_each(?) j CROSS JOIN memories m ON m.rowid = j.value"
        " LEFT JOIN memory_use u ON u.memory_rowid = m.rowid"
        f" WHERE {' AND '.join(where)}",
        params,
    ).fetchall()
    out: dict[int, tuple[Light, int, str | None]] = {}
    for row in rows:
        values: list[Any] = list(row)
        out[int(values[0])] = (Light(*values[1:-2]), int(values[-2] or 0), values[-1])
    return out


def _memories(conn: apsw.Connection, rowids: list[int]) -> dict[int, Memory]:
    if not rowids:
        return {}
    rows = conn.execute(
        f"SELECT m.rowid, {', '.join('m.' + name for name in FIELDS)}"
        " FROM json_each(?) j CROSS JOIN memories m ON m.rowid = j.value",
        (_json_list(rowids),),
    ).fetchall()
    found: list[Any] = rows
    return {int(row[0]): from_row(tuple(row[1:])) for row in found}


def _json_list(values: Iterable[int]) -> str:
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def _hit(memory: Memory, score: float, fused: dict[str, Any], multipliers: dict[str, float]) -> Hit:
    explain = {
        "tiers": fusion.explain(fused),
        "fused": fused["fused"],
        "multipliers": multipliers,
        "score": score,
    }
    return Hit(memory=memory, score=score, explain=explain)


def _iso(now: float | None) -> str:
    t = now or time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t))


def mark_used(conn: apsw.Connection, memory_ids: Iterable[str]) -> None:
    """Count a real use (injected into a packet, or opened) of each memory."""
    from waymark.base import clock
    from waymark.storage import connection as db

    ids = list(dict.fromkeys(memory_ids))
    if not ids:
        return
    with db.write(conn):
        stamp = clock.now()
        for memory_id in ids:
            conn.execute(
                "INSERT INTO memory_use (memory_rowid, uses, last_used)"
                " SELECT rowid, 1, ? FROM memories WHERE id = ?"
                " ON CONFLICT (memory_rowid) DO UPDATE SET uses = uses + 1, last_used = excluded.last_used",
                (stamp, memory_id),
            )
