"""Turn free text into a safe FTS5 MATCH expression.

User text never reaches FTS5 as syntax: it is split into word tokens, stop words are dropped,
each token is quoted, and the count is capped so a 100 KB prompt costs what a short one does.
"""

from __future__ import annotations

MAX_TERMS = 24
_TOKEN = r"[^\W_]+(?:['’][^\W_]+)*"  # compiled on first use: `re` costs a hook ~6 ms

STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "aren",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "cannot",
        "could",
        "did",
        "didn",
        "do",
        "does",
        "doesn",
        "doing",
        "don",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "hadn",
        "has",
        "hasn",
        "have",
        "haven",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "isn",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "ought",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "shan",
        "she",
        "should",
        "shouldn",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "wasn",
        "we",
        "were",
        "weren",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "won",
        "would",
        "wouldn",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "re",
        "ve",
        "y",
        "also",
        "get",
        "got",
        "like",
        "really",
        "yeah",
        "yes",
        "oh",
        "ok",
        "okay",
        "hey",
        "hi",
    ]
)


def tokens(text: str, *, limit: int = MAX_TERMS) -> list[str]:
    """Distinct lower-cased content words of `text`, in order of first appearance."""
    import re  # the compiled pattern is cached by `re` itself

    seen: dict[str, None] = {}
    for match in re.finditer(_TOKEN, text):
        word = match.group().lower().replace("’", "'")
        word = word.split("'")[0]  # "caroline's" -> "caroline"; porter drops the rest anyway
        if len(word) < 2 and not word.isdigit():
            continue
        if word in STOP_WORDS or word in seen:
            continue
        seen[word] = None
        if len(seen) >= limit:
            break
    return list(seen)


def match_expression(text: str, *, limit: int = MAX_TERMS) -> str | None:
    """An OR of quoted tokens, or None when nothing searchable is left."""
    words = tokens(text, limit=limit)
    if not words:
        return None
    return " OR ".join(f'"{w}"' for w in words)
