"""The relevance floor: which hits are worth showing, not just ranked.

Recall always ranks everything it finds; what is shown is only what clears a floor, so a
weak query is answered with little or nothing rather than with near-zero noise. A recall
someone asked for (the CLI's `recall`, the MCP tool, the dashboard's search) shows by one
floor (`asked_hits`); the prompt packet, which nobody asked for, by a stricter one
(`relevant_hits`).
"""

from __future__ import annotations

import math

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.recall.ranked import Hit
    from waymark.storage.connection import Connection

LEXICAL_MIN = 4.0  # BM25 (weighted): below this a lexical match is incidental
SEMANTIC_MIN = 0.45  # cosine
RELATIVE_MIN = 0.35  # of the best hit's score
# ... where the semantic tier took part. The best hit is then most often found by both tiers
# (lexical weight 1.0, semantic 0.8), and one found by either alone scores about half of it
# however well it matched there: at 0.35 such half-matches filled the prompt packet. On the
# coding set (bench/coding_recall.py --packet) 0.5 showed 6.1 -> 4.2 memories a prompt, a
# third of them synthetic noise -> a fifth, with the relevant ones found 0.945 -> 0.938;
# lexical recall loses relevant ones at 0.45 already, and keeps 0.35.
RELATIVE_MIN_HYBRID = 0.5
# A hit found by meaning alone (no word of the query, no path) answers a question someone
# asked only this close (`answers`): all-MiniLM-L6-v2 puts unrelated texts at 0.0-0.25
# ("zzzz qqqq" met a note at 0.18).
MEANING_ONLY_MIN = 0.3
LEXICAL_SHARE = RELATIVE_MIN / RELATIVE_MIN_HYBRID  # 0.7: the lexical floor at the default
SMALL_STORE = 20  # fewer memories than this: the lexical floor is lower (`lexical_floor`)


def lexical_floor(memories: int | None) -> float:
    """The BM25 score a lexical match needs in a store of about `memories` memories.
    BM25 weighs a word by how rare it is, and in a handful of memories no word is rare:
    with one or two memories every weight is zero, and with three a word found in one of
    them weighs a twelfth of what it does in a hundred, so a new store's first memories
    never cleared LEXICAL_MIN and the prompt packet showed none of them. Below
    SMALL_STORE the floor falls with the weight of a word found in one memory (none at
    two or fewer: any match of the prompt's words counts); at SMALL_STORE and above, or
    unknown, it is LEXICAL_MIN."""
    if memories is None or memories >= SMALL_STORE:
        return LEXICAL_MIN
    here = math.log((memories - 0.5) / 1.5) if memories > 2 else 0.0
    return LEXICAL_MIN * here / math.log((SMALL_STORE - 0.5) / 1.5)


def relevant_hit(
    hit: Hit, best: float, lexical_min: float = LEXICAL_MIN, relative: float = RELATIVE_MIN
) -> bool:
    """Above the relevance threshold: named by path, close in meaning, or a strong lexical
    match (`lexical_min`, see `lexical_floor`); and not far below the best hit (`relative`
    of its score)."""
    tiers = hit.explain.get("tiers", {})
    strong = (
        "path" in tiers
        or tiers.get("semantic", {}).get("score", 0.0) >= SEMANTIC_MIN
        or ("lexical" in tiers and tiers["lexical"].get("score", 0.0) >= lexical_min)
    )
    return strong and hit.score >= relative * best


def answers(hit: Hit) -> bool:
    """Whether a hit may answer a deliberate query though below the floor: found by a word
    of the query (as typed, or its typo repaired) or a path, or by meaning alone at
    MEANING_ONLY_MIN at least."""
    tiers = hit.explain.get("tiers", {})
    if "path" in tiers or "lexical" in tiers or "fuzzy" in tiers:
        return True
    return tiers.get("semantic", {}).get("score", 0.0) >= MEANING_ONLY_MIN


def asked_hits(hits: list[Hit]) -> list[Hit]:
    """The floor of a recall someone asked for (the CLI, the MCP tool, the dashboard): every
    hit that `answers` the query (found by its words, a path, or close enough in meaning)
    and is not far below the best (RELATIVE_MIN of its score, with or without the semantic
    tier: on the development set 0.35 kept R@10 0.749 of the unfloored 0.760 where 0.5 kept
    0.682), and what such a hit links to. A
    deliberate question keeps every word match in that band however common its words (a
    small store weighs them little); the prompt packet, which nobody asked for, also needs
    each hit strong on its own (`relevant_hits`)."""
    if not hits:
        return []
    best = hits[0].score
    kept = {h.memory.id for h in hits if answers(h) and h.score >= RELATIVE_MIN * best}
    return [
        h
        for h in hits
        if h.memory.id in kept or kept.intersection(h.explain.get("linked_from", ()))
    ]


def relevant_hits(
    hits: list[Hit], *, conn: Connection | None = None, share: float = RELATIVE_MIN_HYBRID
) -> list[Hit]:
    """The hits above the floor, in order, and with them every hit an explicit link of one
    of those reaches (`relate`): what a strong hit links to is shown beside it, however weak
    its own words. `conn`, the store the hits came from: a small one's lexical floor is
    lower (`lexical_floor`). `share`: of the best hit's score a hit needs where the semantic
    tier took part (`packet.prompt_floor`); lexical recall alone, whose scores spread
    wider, needs LEXICAL_SHARE of that."""
    if not hits:
        return []
    best = hits[0].score
    memories = None
    if conn is not None:
        from waymark.storage.memories import max_rowid

        memories = max_rowid(conn)  # every memory ever written: an upper bound, so never lower
    lexical_min = lexical_floor(memories)
    hybrid = any("semantic" in h.explain.get("tiers", {}) for h in hits)
    relative = share if hybrid else share * LEXICAL_SHARE
    strong = {h.memory.id for h in hits if relevant_hit(h, best, lexical_min, relative)}
    return [
        h
        for h in hits
        if h.memory.id in strong or strong.intersection(h.explain.get("linked_from", ()))
    ]
