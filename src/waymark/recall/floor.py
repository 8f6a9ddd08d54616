"""The relevance floor: which hits are worth showing, not just ranked.

Recall always ranks everything it finds; what the prompt hook injects, and what the CLI's
hybrid `recall` prints, is only what clears this floor, so a weak query is answered with
little or nothing rather than with near-zero noise.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.recall.ranked import Hit

LEXICAL_MIN = 4.0  # BM25 (weighted): below this a lexical match is incidental
SEMANTIC_MIN = 0.45  # cosine
RELATIVE_MIN = 0.35  # of the best hit's score


def relevant_hit(hit: Hit, best: float) -> bool:
    """Above the relevance threshold: named by path, close in meaning, or a strong lexical
    match; and not far below the best hit."""
    tiers = hit.explain.get("tiers", {})
    strong = (
        "path" in tiers
        or tiers.get("semantic", {}).get("score", 0.0) >= SEMANTIC_MIN
        or tiers.get("lexical", {}).get("score", 0.0) >= LEXICAL_MIN
    )
    return strong and hit.score >= RELATIVE_MIN * best


def relevant_hits(hits: list[Hit], *, keep_best: bool = False) -> list[Hit]:
    """The hits above the floor, in order, and with them every hit an explicit link of one
    of those reaches (`relate`): what a strong hit links to is shown beside it, however weak
    its own words. `keep_best`: the best hit stays even below the floor (a deliberate query
    gets an answer)."""
    if not hits:
        return []
    best = hits[0].score
    strong = {h.memory.id for h in hits if relevant_hit(h, best)}
    if keep_best:
        strong.add(hits[0].memory.id)
    return [
        h
        for h in hits
        if h.memory.id in strong or strong.intersection(h.explain.get("linked_from", ()))
    ]
