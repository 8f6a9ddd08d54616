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
changes only through `storage.events.count_use`, called when a memory is really used, so results never
depend on query order.
"""

from __future__ import annotations

from waymark.base import clock
from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.base.record import record
from waymark.memories.kinds import check_types
from waymark.projects import pathnames
from waymark.projects.resolve import Project
from waymark.recall import fusion, when
from waymark.recall import lexical as fts
from waymark.recall.knobs import DEFAULT, FTS_WEIGHTS, Light, Settings
from waymark.storage import memories as rows
from waymark.storage import outcomes as outcome_rows
from waymark.storage import search
from waymark.storage.events import ranking_feedback as search_feedback
from waymark.storage.match import tokens

TYPE_CHECKING = False  # typing and dataclasses would cost a hook process ~10 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from waymark.storage.connection import Connection
    from waymark.storage.memories import Memory

# In a large store a word found in a tenth of all memories matches thousands of rows
# (most of a query's cost) and barely moves the ranking; small stores keep every word.
LARGE_STORE = 5_000
LARGE_STORE_SHARE = 0.10


def _max_share(conn: Connection, settings: Settings) -> float:
    if settings.query_max_share < 1.0:
        return float(settings.query_max_share)
    return LARGE_STORE_SHARE if rows.max_rowid(conn) > LARGE_STORE else 1.0


# Past a hundred thousand memories, recall's words stop, rarest first, at this many postings
# (and an all-common query asks for memories holding its rarest words together): BM25 scores
# every row it matches, 80 ms for 200,000 rows at a million memories. Smaller stores, and the
# retrieval benchmark, are unchanged. A `query_max_rows` setting of its own wins.
HUGE_STORE = 100_000
HUGE_STORE_ROWS = 40_000


def _max_rows(conn: Connection, settings: Settings) -> tuple[int, bool]:
    """The posting budget of recall's queries (a caller's own, as the prompt hook's, or the
    large store's), and whether an all-common query narrows to AND (in a large store)."""
    huge = rows.max_rowid(conn) > HUGE_STORE
    if settings.query_max_rows:
        return int(settings.query_max_rows), huge
    return (HUGE_STORE_ROWS, True) if huge else (0, False)


def settings_for(conn: Connection) -> Settings:
    """The defaults, with the user's `recall.*` settings (`waymark config`) applied."""
    from waymark import settings

    return DEFAULT._replace(half_life_days=float(settings.get(conn, "recall.half_life_days")))


class Hit(record("_Hit", "memory score explain")):
    """One result: the memory, its final score, and the breakdown that produced it."""

    __slots__ = ()

    def to_dict(self, *, with_explain: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"memory": self.memory.to_dict(), "score": round(self.score, 6)}
        if "outcome" in self.explain:  # held or reverted in git: said with the result
            out["outcome"] = self.explain["outcome"]
        if with_explain:
            out["explain"] = self.explain
        return out


def _fused(
    conn: Connection, project: Project, query: str, named: list[str], semantic: Any,
    settings: Settings, include_inactive: bool,
) -> dict[int, dict[str, Any]]:  # fmt: skip
    """Every tier's candidates fused by rank (`fusion.fuse`): the query's words (BM25), the
    paths it names, typo repair where the words found (almost) nothing, feedback expansion,
    the link graph, and last the neighbours by meaning (a warm server embedded while the
    lexical tiers ran), each marked with the model whose vectors found it."""
    max_rows, strict = _max_rows(conn, settings)
    expr = fts.focused_expression(conn, query, keep=settings.query_terms,
                                  max_share=_max_share(conn, settings), max_rows=max_rows,
                                  strict=strict)  # fmt: skip
    tiers: dict[str, list[tuple[int, float]]] = {
        "lexical": _bm25(conn, project, expr, settings.candidates, include_inactive),
        "path": _by_path(conn, project, named, settings),
    }
    if len(tiers["lexical"]) < settings.fuzzy_below:
        tiers["fuzzy"] = _fuzzy(conn, project, query, settings.candidates, include_inactive)
    fused = fusion.fuse(tiers, settings)
    # Feedback needs a first pass that found the query's own words (and a weight to matter).
    if tiers["lexical"] and settings.expansion_weight > 0:
        expansion = _expansion(conn, project, query, fused, settings, include_inactive)
        fusion.fuse({"expansion": expansion}, settings, into=fused)
    fusion.fuse({"graph": _graph(conn, fused, settings)}, settings, into=fused)
    neighbours = semantic() if callable(semantic) else semantic
    found = list(neighbours or [])[: settings.semantic_candidates]
    fusion.fuse({"semantic": found}, settings, into=fused)
    model = getattr(neighbours, "model", None)  # whose vectors: the receipt names it
    if model:
        for rowid, _ in found:
            fused[rowid]["model"] = model
    return fused


def _scored(
    conn: Connection, project: Project, fused: dict[int, dict[str, Any]], query: str, *,
    limit: int, types: Sequence[str], tags: Sequence[str], include_inactive: bool,
    now: float | None, agent: str | None, named: list[str], settings: Settings,
    current_branch: str | None,
) -> tuple[list[tuple[float, str, int, dict[str, float]]], dict[int, Any]]:  # fmt: skip
    """The best of the fused candidates, scored on a few light columns (only the winners
    are read whole, by the caller): (final, id, rowid, multipliers), best first; and the
    outcomes git settled for them."""
    words = set(tokens(query))
    dated = when.cue(query, now)
    settled = outcome_rows.any_settled(conn, project.id)
    outcomes: dict[int, tuple[str, str | None, int]] = {}

    def score(rowids: list[int]) -> list[tuple[float, tuple[Any, ...]]]:
        rows = _light(conn, project, rowids, types, tags, include_inactive, now, agent)
        said = _feedback(conn, rowids, words)
        if settled:
            outcomes.update(outcome_rows.states(conn, [r for r in rowids if r in rows]))
        out = []
        for rowid in rowids:
            if rowid in rows:
                light, uses, last_used, shown, used = rows[rowid]
                multipliers = fusion.multipliers(
                    light, uses, last_used, named, settings, now, current_branch,
                    said.get(rowid, 0.0), outcomes[rowid][0] if rowid in outcomes else None,
                    (shown, used), dated,
                )  # fmt: skip
                final = fused[rowid]["fused"]
                for value in multipliers.values():
                    final *= value
                out.append((final, (final, light.id, rowid, multipliers)))
        return out

    ceiling = fusion.ceiling(named, settings, current_branch, dated)
    scored = fusion.top(fused, limit, ceiling, score, exhaustive=include_inactive)
    scored.sort(key=lambda item: (-item[0], item[1]))
    return (scored if include_inactive else scored[:limit]), outcomes


def recall(
    conn: Connection,
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
    scan_paths: bool = True,
    branch: str | None = None,
    current_branch: str | None = None,
    agent: str | None = None,
) -> list[Hit]:
    """The best `limit` memories for `query`, best first, each with its score breakdown.
    `paths` are searched too; so are the paths the query mentions, unless `scan_paths` is
    False (the caller found them already). With `branch`, only memories written on that
    git branch: ranked among all, then narrowed. `current_branch` (the one checked out)
    prefers the decisions written on it, within a bounded multiplier. `agent` reads that
    agent's memories too (else no agent's), and a deeper tier's memory stands in for a
    shallower one of the same type and key (`shadow`)."""
    _check(limit, types)
    if not _clean(query).strip() and not paths:
        from waymark.errors import InvalidArgument

        raise InvalidArgument("recall needs a query: say what you are about to do (or give paths)")
    if branch is not None:
        wider = min(LIMIT_MAX, limit * BRANCH_WIDEN)
        ranked = recall(
            conn, project, query, limit=wider, types=types, tags=tags, paths=paths,
            semantic=semantic, include_inactive=include_inactive, settings=settings,
            now=now, scan_paths=scan_paths, current_branch=current_branch, agent=agent,
        )  # fmt: skip
        return [h for h in ranked if h.memory.git_branch == branch][:limit]
    query = _clean(query)
    mentioned = pathnames.mentioned(query) if scan_paths else []
    named = pathnames.normalise(project, [*paths, *mentioned])
    fused = _fused(conn, project, query, named, semantic, settings, include_inactive)

    scored, outcomes = _scored(
        conn, project, fused, query, limit=limit, types=types, tags=tags,
        include_inactive=include_inactive, now=now, agent=agent, named=named,
        settings=settings, current_branch=current_branch,
    )  # fmt: skip
    memories = rows.by_rowids(conn, [rowid for _, _, rowid, _ in scored])
    hits = [
        _hit(memories[rowid], final, fused[rowid], multipliers, outcomes.get(rowid))
        for final, _, rowid, multipliers in scored
        if rowid in memories  # deleted by another connection since it was ranked
    ]
    if include_inactive:  # demoting a superseded record needs its successor scored too
        hits = _successors_first(hits)
        hits.sort(key=lambda h: (-h.score, h.memory.id))
    else:
        hits = shadow(conn, project, hits, agent, now)
    return hits[:limit]


def shadow(
    conn: Connection, project: Project, hits: list[Hit], agent: str | None, now: float | None
) -> list[Hit]:
    """Hits with a memory of a deeper tier holding the same type and key in place of the
    shallower one, which is left out and named in the deeper one's `explain["shadowed"]`;
    never merged (`memories.shadow`). A deeper memory the query did not find itself takes
    the place of the one it shadows, with that one's score."""
    from waymark.memories import shadow as tiers

    deepest = tiers.deepest(conn, project.id, agent, [h.memory for h in hits], now)
    if not deepest:
        return hits
    found = {h.memory.id: h for h in hits}
    out: list[Hit] = []
    placed: dict[str, int] = {}
    for hit in hits:
        winner = tiers.winner(deepest, hit.memory)
        if winner.id in placed:
            chosen = out[placed[winner.id]]
        else:
            chosen = found.get(winner.id) or Hit(winner, hit.score, dict(hit.explain))
            chosen = Hit(chosen.memory, max(chosen.score, hit.score), chosen.explain)
            placed[winner.id] = len(out)
            out.append(chosen)
        if winner.id != hit.memory.id:
            notes = [*chosen.explain.get("shadowed", ()), tiers.note(hit.memory)]
            out[placed[winner.id]] = Hit(
                chosen.memory, chosen.score, dict(chosen.explain, shadowed=notes)
            )
    return out


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


LIMIT_MAX = 200
BRANCH_WIDEN = 8  # candidates ranked per result wanted when narrowing to one branch


def _check(limit: int, types: Sequence[str]) -> None:
    from waymark.errors import InvalidArgument

    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= LIMIT_MAX:
        raise InvalidArgument(f"limit must be an integer from 1 to {LIMIT_MAX} (got {limit!r})")
    check_types(types)  # refuses an unknown type before any work


def _clean(query: str) -> str:
    if isinstance(query, bytes):
        query = query.decode("utf-8", "replace")
    return str(query).replace("\x00", " ")[:20_000]


def _bm25(
    conn: Connection, project: Project, expr: str | None, n: int, include_inactive: bool
) -> list[tuple[int, float]]:
    if expr is None:
        return []
    return search.bm25(conn, project.id, expr, n, FTS_WEIGHTS, include_inactive)


def _by_path(
    conn: Connection, project: Project, named: list[str], s: Settings
) -> list[tuple[int, float]]:
    """Memories scoped to a named path, a directory above it, or (for a named directory)
    something below it: the most specific first."""
    found: dict[int, float] = {}
    for path in named:
        above = pathnames.ancestors(path)
        # Exact targets, then `path::Symbol` and `path/...` as ranges (a LIKE would scan).
        ranges = ((path + "::", path + ":;"), (path + "/", path + "0"))
        for rowid, target in search.target_rows(
            conn, project.id, [path, *above], ranges, s.candidates
        ):
            base = target.partition("::")[0]
            if base == path:
                fit = 1.0
            elif base in above:
                fit = 0.9 - 0.1 * min(above.index(base), 5)
            else:
                fit = 0.5
            found[rowid] = max(found.get(rowid, 0.0), fit)
    return sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))[: s.candidates]


def _fuzzy(
    conn: Connection, project: Project, query: str, n: int, include_inactive: bool
) -> list[tuple[int, float]]:
    """Repair query words the index has never seen (typos, identifier spellings)."""
    words = [w for w in tokens(query) if len(w) >= 5 and not w.isdigit()]
    unknown = [w for w in words if not _indexed(conn, w)][:4]
    if not unknown:
        return []
    from rapidfuzz import fuzz, process  # only queries with unknown words pay for it

    repaired: list[str] = []
    for word in unknown:
        # Typos rarely hit the first letter: compare with that slice of the vocabulary only.
        vocab = search.vocabulary(conn, word[0], word[0] + "\U0010ffff")
        for term, _score, _ in process.extract(
            word, vocab, scorer=fuzz.ratio, limit=2, score_cutoff=80
        ):
            repaired.append(term)
    expr = " OR ".join(f'"{t}"' for t in dict.fromkeys(repaired)) if repaired else None
    return _bm25(conn, project, expr, n, include_inactive)


def _indexed(conn: Connection, word: str) -> bool:
    return search.is_indexed(conn, f'"{word}"')


def _expansion(
    conn: Connection,
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
    # The opening of a long memory is enough to characterise it, and bounds the cost.
    texts = search.openings(conn, top, 4000)
    expr = fts.expansion_expression(
        conn, query, texts, terms=s.expansion_terms, max_df=s.expansion_max_df,
        max_rows=_max_rows(conn, s)[0],
    )  # fmt: skip
    return _bm25(conn, project, expr, s.candidates, include_inactive)


def _graph(
    conn: Connection, fused: dict[int, dict[str, Any]], s: Settings
) -> list[tuple[int, float]]:
    """Neighbours of the top hits: explicit links both ways and shared tags. A memory an
    explicit link reached names its seeds (`linked_from`, in its fused entry), so the
    relevance floor can keep what a strong hit links to."""
    seeds = fusion.best(fused, s.graph_seeds)
    if not seeds:
        return []
    best: dict[int, float] = {}
    via: dict[int, list[str]] = {}
    for rowid, seed in search.linked(conn, seeds):
        via.setdefault(rowid, []).append(seed)
        if rowid not in seeds:
            best[rowid] = 1.0
    for rowid, weight in _same_tags(conn, seeds, s.candidates):
        if rowid not in seeds:
            best[rowid] = max(best.get(rowid, 0.0), weight)
    found = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[: s.candidates]
    # A seed another seed links to (a fix and the incident it solves, both found) scores
    # nothing more, but is named linked too: the floor keeps it beside the other.
    for rowid in [r for r, _ in found] + [r for r in seeds if r in via]:
        if rowid in via:
            fused.setdefault(rowid, {"fused": 0.0, "tiers": {}})["linked_from"] = sorted(
                set(via[rowid])
            )
    return found


def _same_tags(conn: Connection, seeds: list[int], n: int) -> list[tuple[int, float]]:
    """The first `n` active memories sharing an exact tag with a seed, in its project. The FTS
    tags column finds candidates in rowid order, so a tag on thousands of memories costs no
    more than a rare one; scanning the project instead costs 10 ms at 10k."""
    wanted = {
        (project_id, tag)
        for project_id, tags in search.tags_of(conn, seeds)
        for tag in json.loads(tags)
    }
    if not wanted:
        return []
    phrases = sorted({'"' + tag.replace('"', '""') + '"' for _, tag in wanted})
    found: list[tuple[int, float]] = []
    for rowid, project_id, tags in search.tagged(conn, f"tags : ({' OR '.join(phrases)})"):
        if rowid not in seeds and any((project_id, tag) in wanted for tag in json.loads(tags)):
            found.append((rowid, 0.5))
            if len(found) >= n:
                break
    return found


def _light(
    conn: Connection,
    project: Project,
    rowids: list[int],
    types: Sequence[str],
    tags: Sequence[str],
    include_inactive: bool,
    now: float | None,
    agent: str | None,
) -> dict[int, tuple[Light, int, str | None, int, int]]:
    """The candidates that pass the filters: rowid -> (light columns, uses, last used, shown
    and used since use is measured)."""
    if not rowids:
        return {}
    found = search.light_rows(
        conn,
        rowids,
        Light._fields,
        project_id=project.id,
        include_inactive=include_inactive,
        now_iso=clock.second(now or None),
        types=types,
        tags=tags,
        agent=agent,
    )
    out: dict[int, tuple[Light, int, str | None, int, int]] = {}
    for row in found:
        values: list[Any] = list(row)
        uses, last_used, shown, used = values[-4:]
        out[int(values[0])] = (
            Light(*values[1:-4]),
            int(uses or 0),
            last_used,
            int(shown or 0),
            int(used or 0),
        )
    return out


FEEDBACK_MATCH = 0.5  # a verdict counts for a query sharing this share of its words


def _feedback(conn: Connection, rowids: list[int], words: set[str]) -> dict[int, float]:
    """rowid -> net feedback for this query: each verdict given on a recall whose words
    overlap the query's by FEEDBACK_MATCH or more (Jaccard) counts that overlap, helpful up,
    not helpful down; verdicts on other queries do not count here."""
    if not words:
        return {}
    out = {}
    for rowid, verdicts in search_feedback(conn, rowids).items():
        net = 0.0
        for sign, terms in verdicts:
            given = set(terms)
            overlap = len(words & given) / len(words | given) if given else 0.0
            if overlap >= FEEDBACK_MATCH:
                net += sign * overlap
        if net:
            out[rowid] = net
    return out


def _hit(
    memory: Memory,
    score: float,
    fused: dict[str, Any],
    multipliers: dict[str, float],
    outcome: tuple[str, str | None, int] | None = None,
) -> Hit:
    explain: dict[str, Any] = {
        "tiers": fusion.explain(fused),
        "fused": fused["fused"],
        "multipliers": multipliers,
        "score": score,
    }
    if outcome is not None:  # what became of the change it led to, in git
        explain["outcome"] = {"state": outcome[0], "by": outcome[1], "later": outcome[2]}
    if "linked_from" in fused:
        explain["linked_from"] = fused["linked_from"]
    if "model" in fused and "semantic" in explain["tiers"]:
        explain["tiers"]["semantic"]["model"] = fused["model"]
    return Hit(memory=memory, score=score, explain=explain)
