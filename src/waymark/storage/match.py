"""Turn free text into a safe FTS5 MATCH expression.

User text never reaches FTS5 as syntax: it is split into word tokens, stop words are dropped,
each token is quoted, and the count is capped so a 100 KB prompt costs what a short one does.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_TERMS = 24
_TOKEN = r"[^\W_]+(?:['’][^\W_]+)*"  # what `_words` finds (a test holds them equal)

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
    seen: dict[str, None] = {}
    for word in _words(text):
        word = word.lower().replace("’", "'")
        word = word.split("'")[0]  # "caroline's" -> "caroline"; porter drops the rest anyway
        if len(word) < 2 and not word.isdigit():
            continue
        if word in STOP_WORDS or word in seen:
            continue
        seen[word] = None
        if len(seen) >= limit:
            break
    return list(seen)


def _words(text: str) -> Iterator[str]:
    """What `re.finditer(_TOKEN, text)` finds, in order, without `re` (2.5 ms of a hook
    process's prompt): runs of letters and digits (`str.isalnum`, which is exactly what
    `[^\\W_]` matches), joined across one apostrophe between two of them. No run crosses
    whitespace, so each whitespace-separated piece is read alone, and most are one run."""
    for piece in text.split():
        if piece.isalnum():
            yield piece
            continue
        n, i = len(piece), 0
        while i < n:
            if not piece[i].isalnum():
                i += 1
                continue
            j = i + 1
            while True:
                while j < n and piece[j].isalnum():
                    j += 1
                if j + 1 < n and piece[j] in "'’" and piece[j + 1].isalnum():
                    j += 2
                    continue
                break
            yield piece[i:j]
            i = j


def match_expression(text: str, *, limit: int = MAX_TERMS) -> str | None:
    """An OR of quoted tokens, or None when nothing searchable is left."""
    words = tokens(text, limit=limit)
    if not words:
        return None
    return " OR ".join(f'"{w}"' for w in words)
