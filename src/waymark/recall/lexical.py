"""Lexical recall's queries: the FTS5 MATCH expression of a query focused on its rarest
words (`focused_expression`), and pseudo-relevance feedback (`expansion_expression`): words
that characterise the first pass's best hits, for a second query. Turning text into a safe
expression at all is the storage seam's (`storage.match`).
"""

from __future__ import annotations

import math

from waymark.storage import search
from waymark.storage.match import STOP_WORDS, match_expression, tokens
from waymark.storage.memories import max_rowid

TYPE_CHECKING = False  # typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

# The memories_fts tokenizer (migration m001): feedback words are compared as its stems.
TOKENIZER: tuple[Any, ...] = ("porter", ["unicode61", "remove_diacritics", "2"])
MIN_DF_CAP = 10  # in a small store every word is rare enough to expand with


MIN_KEPT = 2  # however common, the query's rarest words still search
CONJOINED = 3  # ... and when they are all common, the memories holding these many of them


def focused_expression(
    conn: Any,
    text: str,
    *,
    keep: int = 12,
    max_share: float = 1.0,
    max_rows: int = 0,
    strict: bool = False,
) -> str | None:
    """Like `match_expression`, for ranking; but a query of more than `keep` words keeps only
    its `keep` rarest.

    An OR query costs what its words' posting lists hold: a 24-word prompt full of `test`,
    `src` and `py` scored 36,000 rows (18 ms at 10k memories; 7 ms for its 12 rarest words)
    for words whose low IDF barely moves the ranking. Every word is kept when this APSW
    cannot run FTS5 tokenizers (before 3.47). `max_rows` (when set) also stops adding words,
    rarest first, once their posting lists would hold more rows than that: a hook's budget.
    With `strict`, a query whose rarest words alone pass the budget asks for the memories
    holding all of them (AND) instead: a large store's budget for recall.
    """
    words = tokens(text)
    tokenize = search.tokenizer(conn, TOKENIZER)
    if (len(words) <= keep and max_share >= 1.0 and not max_rows) or tokenize is None:
        return match_expression(text)
    stems = [stem_of(tokenize, word) for word in words]
    df = _frequencies(conn, [stem for stem in stems if stem])
    count = [df.get(stem or "", 0) for stem in stems]
    ranked = sorted(range(len(words)), key=lambda i: (count[i] == 0, count[i], i))  # absent: last
    if max_share < 1.0:  # words in a large share of all memories: costly, and say little
        limit = max_share * _total(conn)
        ranked = [i for n, i in enumerate(ranked) if n < MIN_KEPT or count[i] <= limit]
    if max_rows:
        kept: list[int] = []
        rows = 0
        for i in ranked[:keep]:
            rows += count[i]
            if rows > max_rows and len(kept) >= MIN_KEPT:
                break
            kept.append(i)
        if strict and len(kept) >= MIN_KEPT and sum(count[i] for i in kept[:MIN_KEPT]) > max_rows:
            # Even the rarest words are common (each in tens of thousands of memories at a
            # million): BM25 would score every row holding any of them. The memories that
            # hold all of the rarest few rank first under OR anyway; only those are scored.
            both = kept[:CONJOINED]
            return " AND ".join(f'"{words[i]}"' for i in sorted(both))
        ranked = kept
    return " OR ".join(f'"{words[i]}"' for i in sorted(ranked[:keep])) or None


def expansion_expression(
    conn: Any,
    query: str,
    texts: Sequence[str],
    *,
    terms: int = 20,
    max_df: float = 0.01,
    max_rows: int = 0,
) -> str | None:
    """Pseudo-relevance feedback (RM3-style): an OR of the `terms` words that best
    characterise `texts`, the first pass's top hits, and are not already in `query`.

    A word's weight is its share of each text's tokens, summed, times its inverse document
    frequency. Words in more than `max_df` of all memories (and more than `MIN_DF_CAP`)
    carry no topic, and would make the second query score thousands of rows: skipped.
    None when nothing qualifies, or when this APSW cannot run FTS5 tokenizers (before 3.47).
    """
    tokenize = search.tokenizer(conn, TOKENIZER)
    if tokenize is None or not texts:
        return None
    asked = {stem_of(tokenize, word) for word in tokens(query)}
    weight: dict[str, float] = {}
    surface: dict[str, str] = {}
    for text in texts:
        data = text.encode("utf-8", "replace")
        found = tokenize(data, search.TOKENIZE_DOCUMENT, None)
        for start, end, stem, *_ in found:
            word = data[start:end].decode("utf-8", "replace").lower()
            if stem in asked or len(word) < 3 or word.isdigit() or word in STOP_WORDS:
                continue
            weight[stem] = weight.get(stem, 0.0) + 1.0 / len(found)
            surface.setdefault(stem, word)
    if not weight:
        return None
    df, total = _frequencies(conn, list(weight)), _total(conn)
    cap = max(max_df * total, MIN_DF_CAP)
    scored = {stem: weight[stem] * math.log(total / n) for stem, n in df.items() if 0 < n <= cap}
    best = sorted(scored, key=lambda stem: (-scored[stem], stem))[:terms]
    if max_rows:  # the best words first, while their postings fit the budget
        rows = 0
        fitting: list[str] = []
        for stem in best:
            rows += df[stem]
            if rows > max_rows and fitting:
                break
            fitting.append(stem)
        best = fitting
    if not best:
        return None
    return " OR ".join('"' + surface[stem].replace('"', '""') + '"' for stem in best)


def stem_of(tokenize: Any, word: str) -> str | None:
    found = tokenize(word.encode("utf-8", "replace"), search.TOKENIZE_QUERY, None)
    return str(found[0][2]) if found else None


def _total(conn: Any) -> int:
    """About how many memories there are (every row ever written: a cheap upper bound)."""
    return max_rowid(conn) or 1


# fts5vocab counts a term's documents by reading its whole posting list: 40 us for a rare
# word, 740 us for one in 23,000 memories, milliseconds at a million. A long-lived process
# (the MCP server) keeps the counts while the lexical index is unchanged (its structure
# record, `search.index_state`: a hook's ledger writes leave it alone, a new memory does
# not): the same numbers, so results never depend on which queries came first. One
# connection's, held weakly (a dead reference never matches a new connection that reuses the
# address); inside a write transaction of its own, only until its next change. The counts of
# common words (KEEP_DOCS) are also kept in the database for the next process, a hook's or a
# command's, under the same condition (`search.keep_doc_frequencies`).
_DF_CACHE: list[Any] = [(None, None, {})]  # (weak connection, generation, {stem: doc count})
_DF_CACHE_TERMS = 50_000
KEEP_DOCS = 1_000  # a word in this many memories costs ~70 us to count; rarer ones, less


def _frequencies(conn: Any, stems: list[str]) -> dict[str, int]:
    """How many memories hold each stem; stems the index lacks are left out."""
    from _weakref import ref  # builtin; the weakref module would cost a hook ~1.5 ms

    state = search.index_state(conn)
    generation = (state, conn.in_transaction and conn.total_changes())
    entry = _DF_CACHE[0]  # one read: another thread may replace the entry meanwhile
    if (
        entry[0] is None
        or entry[0]() is not conn
        or entry[1] != generation
        or len(entry[2]) > _DF_CACHE_TERMS
    ):
        entry = _DF_CACHE[0] = (ref(conn), generation, {})
    known = entry[2]
    wanted = list(dict.fromkeys(stems))
    missing = [stem for stem in wanted if stem not in known]
    if missing and not conn.in_transaction:  # counts of this very index, from an earlier process
        known.update(search.kept_doc_frequencies(conn, state, missing))
    found: dict[str, int] = {}
    counted: dict[str, int] = {}
    for stem in wanted:  # `term = ?` is a lookup; `term IN (...)` scans it all
        doc = known.get(stem)
        if doc is None:
            doc = known[stem] = search.doc_frequency(conn, stem)
            if doc >= KEEP_DOCS:
                counted[stem] = doc
        if doc:
            found[stem] = doc
    if counted and not conn.in_transaction:
        search.keep_doc_frequencies(conn, state, counted)
    return found
