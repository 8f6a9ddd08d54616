"""Fusing recall tiers: every tier's scores on one 0-1 scale, then a weighted sum, then bounded
multipliers (recency, use, priority and pin, scope fit).

A convex combination of normalised scores rather than reciprocal-rank fusion: ranks throw
away how far a tier's best candidate stands above the rest. With RRF (k = 60) a decisive BM25
match was outvoted by middling semantic neighbours, and hybrid recall fell below lexical
recall on the development set (R@10 0.597 against 0.604); this keeps both tiers' margins.

A scored tier (BM25, cosine) is min-max normalised against its candidate pool: the best
candidate counts 1, and 0 is the weakest score the tier could have returned. When the tier hit
its cap that is its last candidate (anything it left out scores lower); when it returned fewer,
it is the scale's natural zero (no matching term, an orthogonal vector). An absolute tier
(path fit, graph link strength) is already a 0-1 judgement and is taken as it is.
"""

from __future__ import annotations

import math
import time

from waymark.base.clock import epoch
from waymark.projects import pathnames
from waymark.recall.when import fits

TYPE_CHECKING = False  # typing and datetime would cost a hook process several ms

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from waymark.recall.knobs import Light, Settings
    from waymark.storage.memories import Memory

    T = TypeVar("T")

Ranked = list[tuple[int, float]]
ABSOLUTE = ("path", "graph")  # already 0-1: a path's fit, a link's strength
CAPS = {"semantic": "semantic_candidates"}  # the Settings field capping a tier's pool
NEVER_DECAY = ("convention", "decision")
PRIORITY_LIMIT = 10  # records.PRIORITY_RANGE is -10..10


def normalise(ranked: Ranked, cap: int | None) -> list[float]:
    """0-1 scores of one tier's candidates, best first; `cap` None for an absolute tier."""
    if cap is None:
        return [min(1.0, max(0.0, score)) for _, score in ranked]
    if not ranked:
        return []
    best = ranked[0][1]
    floor = ranked[-1][1] if len(ranked) >= cap else min(0.0, ranked[-1][1])
    if best <= floor:
        return [1.0] * len(ranked)
    return [(max(score, floor) - floor) / (best - floor) for _, score in ranked]


def fuse(
    tiers: dict[str, Ranked], s: Settings, into: dict[int, dict[str, Any]] | None = None
) -> dict[int, dict[str, Any]]:
    """rowid -> {"fused": sum of parts, "tiers": {name: (rank, raw, norm, part)}}.

    A tier's part is its weight (`s.<tier>_weight`) times the candidate's normalised score
    there, so `fused` is exactly the sum of the parts; `explain` spells an entry out. Each
    tier is normalised on its own, so tiers found later are added `into` an earlier result.
    """
    fused: dict[int, dict[str, Any]] = {} if into is None else into
    for name, ranked in tiers.items():
        weight = getattr(s, f"{name}_weight")
        cap = None if name in ABSOLUTE else getattr(s, CAPS.get(name, "candidates"))
        norms = normalise(ranked, cap)
        for rank, ((rowid, raw), norm) in enumerate(zip(ranked, norms, strict=True), 1):
            entry = fused.get(rowid)
            if entry is None:
                entry = fused[rowid] = {"fused": 0.0, "tiers": {}}
            elif name in entry["tiers"]:  # a caller's list may repeat a rowid: the first counts
                continue
            part = weight * norm
            entry["fused"] += part
            entry["tiers"][name] = (rank, raw, norm, part)
    return fused


def explain(entry: dict[str, Any]) -> dict[str, Any]:
    """One candidate's fusion, readable: each tier's rank, raw score, 0-1 score and part."""
    return {
        name: {"rank": rank, "score": round(raw, 6), "norm": round(norm, 6), "part": part}
        for name, (rank, raw, norm, part) in entry["tiers"].items()
    }


def best(fused: dict[int, dict[str, Any]], n: int) -> list[int]:
    """The `n` rowids with the highest fused score (ties by rowid, so runs are repeatable)."""
    return sorted(fused, key=lambda r: (-fused[r]["fused"], r))[:n]


def top(
    fused: dict[int, dict[str, Any]],
    limit: int,
    ceiling: float,
    score: Callable[[list[int]], list[tuple[float, T]]],
    *,
    exhaustive: bool = False,
) -> list[T]:
    """Candidates scored best-fused first, a chunk at a time by `score` (rowids -> [(final
    score, item)]), until none left could reach the top `limit` even multiplied by
    `ceiling`: the same top `limit` as scoring them all, at a fraction of the cost.
    `exhaustive` scores every candidate."""
    order = best(fused, len(fused))
    step = max(len(order), 1) if exhaustive else max(2 * limit, 20)
    scored: list[tuple[float, T]] = []
    for start in range(0, len(order), step):
        if len(scored) >= limit:
            kth = sorted((final for final, _ in scored), reverse=True)[limit - 1]
            if fused[order[start]]["fused"] * ceiling < kth:
                break
        scored += score(order[start : start + step])
    return [item for _, item in scored]


def multipliers(
    memory: Memory | Light,
    uses: int,
    last_used: str | None,
    named: list[str],
    s: Settings,
    now: float | None,
    branch: str | None = None,
    feedback: float = 0.0,
    outcome: str | None = None,
    measured: tuple[int, int] = (0, 0),
    dated: Any = None,
) -> dict[str, float]:
    """Each bounded adjustment of a candidate's fused score; `branch` is the one checked out
    now (a decision written there is preferred); `feedback` is the memory's net feedback for
    this query (`ranked._feedback`), within ±`feedback_boost`; `outcome` what became of the
    change it led to in git (held or reverted: `curation.outcomes`); `measured` its
    (shown, used) counts since use is measured (`curation.use`): shown often and never used,
    it decays faster, to `unused_floor` at most; `dated` the dates the query names
    (`when.cue`): a memory of one of them gets `when_boost`."""
    return {
        "unused": _unused(*measured, s),
        "outcome": s.reverted_factor
        if outcome == "reverted"
        else 1.0 + s.held_boost
        if outcome == "held"
        else 1.0,
        "recency": _recency(memory, s, now),
        "use": _use(uses, last_used, s, now),
        "priority": 1.0
        + s.priority_step * memory.priority
        + (s.pin_boost if memory.pinned else 0.0),
        "scope": _scope_fit(memory, named, s),
        "branch": 1.0 + s.branch_boost
        if branch and memory.type in BRANCH_TYPES and memory.git_branch == branch
        else 1.0,
        "feedback": 1.0 + s.feedback_boost * math.tanh(feedback / 2.0) if feedback else 1.0,
        "when": 1.0 + s.when_boost if dated is not None and fits(dated, memory.event_time) else 1.0,
    }


BRANCH_TYPES = ("decision",)
UNUSED_AFTER = 5  # showings with no use before a memory starts to decay faster


def _unused(shown: int, used: int, s: Settings) -> float:
    """1.0, or less for a memory shown UNUSED_AFTER times or more and never used: 5% per
    showing past the fourth, down to `unused_floor`."""
    if used or shown < UNUSED_AFTER:
        return 1.0
    return max(s.unused_floor, 1.0 - s.unused_step * (shown - UNUSED_AFTER + 1))


def ceiling(named: list[str], s: Settings, branch: str | None = None, dated: Any = None) -> float:
    """The largest product `multipliers` can return (recency never exceeds 1)."""
    scope = 1.0 + max(s.file_fit, s.dir_fit) if named else 1.0
    on_branch = 1.0 + s.branch_boost if branch else 1.0
    return (
        (1.0 + s.use_boost)
        * (1.0 + s.priority_step * PRIORITY_LIMIT + s.pin_boost)
        * scope
        * on_branch
        * (1.0 + s.feedback_boost)
        * (1.0 + s.held_boost)
        * (1.0 + s.when_boost if dated is not None else 1.0)
    )


def _age_days(stamp: str | None, now: float | None) -> float:
    if not stamp:
        return math.inf
    then = epoch(stamp)
    return max(0.0, ((now or time.time()) - then) / 86400.0)


def _recency(memory: Memory | Light, s: Settings, now: float | None) -> float:
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


def _scope_fit(memory: Memory | Light, named: list[str], s: Settings) -> float:
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
