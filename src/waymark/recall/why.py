"""Why a recall hit is where it is, in words a person reads: which of the question's words
it holds, how close in meaning it is, which path or link brought it, and what moved it up
or down (`ranked.Hit.explain`, said plainly). Asked by the dashboard's search; a hit's
numbers stay in its `explain` for whoever wants them.

    reasons(conn, hit, query) -> [str, ...]
"""

from __future__ import annotations

from waymark.recall import lexical
from waymark.storage import search
from waymark.storage.match import tokens

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.recall.ranked import Hit

MOVED = 0.0005  # a multiplier this close to 1 moved nothing worth saying

# (multiplier, said when it lifted the hit, said when it lowered it)
MULTIPLIERS = {
    "priority": ("its priority or pin", "its low priority"),
    "scope": ("it is about the file or folder asked of", "it is about another place"),
    "branch": ("a decision made on this branch", ""),
    "feedback": ("marked helpful for a question like this", "marked not helpful for a question like this"),
    "when": ("from the time the question names", ""),
    "use": ("used often, and lately", ""),
    "recency": ("", "older than most"),
    "unused": ("", "shown often and never used"),
    "outcome": ("the change it led to held", "the change it led to was reverted"),
    "status": ("", "replaced or archived"),
}  # fmt: skip


def reasons(conn: Any, hit: Hit, query: str) -> list[str]:
    """Each reason `hit` answers `query` where it does, strongest tier first."""
    explain = hit.explain
    tiers = explain.get("tiers", {})
    out = []
    if "lexical" in tiers or "fuzzy" in tiers:
        m = hit.memory
        held = shared_words(conn, query, " ".join((m.title, m.content, " ".join(m.tags))))
        if held:
            out.append("holds " + ", ".join(f"“{w}”" for w in held))
        elif "fuzzy" in tiers:
            out.append("holds a word close to one typed (a typo repaired)")
        else:
            out.append("holds words of the question")
    if "path" in tiers:
        out.append("about a path the question names")
    if "semantic" in tiers:
        out.append(f"close in meaning ({tiers['semantic']['score']:.2f} of 1)")
    if "expansion" in tiers and not out:
        out.append("shares words with the best answers")
    if explain.get("linked_from"):
        out.append("linked from " + ", ".join(explain["linked_from"]))
    elif "graph" in tiers and not out:
        out.append("linked to a better answer")
    for name, factor in explain.get("multipliers", {}).items():
        up, down = MULTIPLIERS.get(name, (name, name))
        said = up if factor > 1 + MOVED else down if factor < 1 - MOVED else ""
        if said:
            out.append(f"{said} (x{factor:.2f})")
    outcome = explain.get("outcome")
    if outcome and outcome.get("by") and outcome["state"] == "reverted":
        out.append(f"reverted by {outcome['by'][:12]}")
    return out


def shared_words(conn: Any, query: str, text: str) -> list[str]:
    """The question's words `text` holds, as the full-text index matches them (by stem:
    "deploys" holds "deploy"), in the question's order."""
    asked = tokens(query)
    if not asked:
        return []
    tokenize = search.tokenizer(conn, lexical.TOKENIZER)
    if tokenize is None:  # an APSW without FTS5 tokenizers: whole words, folded
        words = set(tokens(text, limit=10_000))
        return [w for w in asked if w in words]
    stems = {lexical.stem_of(tokenize, w) for w in tokens(text, limit=10_000)}
    return [w for w in asked if lexical.stem_of(tokenize, w) in stems]
