"""The prompt path reads words and paths without `re` where it can (2.5 ms of a hook
process): what it finds must be exactly what the regular expressions find."""

from __future__ import annotations

import random
import re

import pytest

from waymark.projects import pathnames
from waymark.storage import match

# Letters of several scripts, digits of several kinds (², ٣, Ⅻ are alphanumeric), the
# apostrophes that join a word, underscores and marks that do not, and whitespace of kinds.
ALPHABET = (
    "abcXYZ019éßøΩжЖ中文かナ한글٣²Ⅻ"  # alphanumeric
    "'’'’_-./\\:;,!?()[]\"`@#+*=~\u0301\u200b\u00a0\u2003 \t\n\r"
)
CASES = [
    "",
    "caroline's cat",
    "don’t stop",
    "it''s two apostrophes",
    "'quoted' and ’curly’",
    "rock'n'roll",
    "snake_case_name and CamelCase",
    "e\u0301te\u0301 combining",
    "x² and ٣ and Ⅻ",
    "a'b'c'",
    "'''",
    "trailing'",
    "tab\tnew\nline\u00a0nbsp\u2003em",
    "fix src/waymark/storage/match.py: tokens() returns [] for 'a'",
]


def regex_words(text: str) -> list[str]:
    return [m.group() for m in re.finditer(match._TOKEN, text)]


@pytest.mark.parametrize("text", CASES)
def test_words_are_the_patterns_matches(text):
    assert list(match._words(text)) == regex_words(text)


def test_words_equal_the_pattern_on_random_text():
    rng = random.Random(30)
    for _ in range(20_000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 40)))
        assert list(match._words(text)) == regex_words(text), repr(text)


def test_tokens_still_drop_stop_words_short_words_and_repeats():
    assert match.tokens("The cat's cats: a CAT, x 7 and 42 cats!") == ["cat", "cats", "7", "42"]


@pytest.mark.parametrize(
    "text",
    [
        "Fix the login bug. Then run the tests.",
        "version 1.2.3 and 3.14",
        "e.g. the parser",
        "see core.py and README.md",
        "the .env file",
        "src/app.py",
        "C:\\work\\app.py",
        "https://example.com/a.html",
        "trailing dot.",
        "ends with a dot followed by é: x.é",
        "x.Z9",
    ],
)
def test_the_path_precheck_never_hides_a_path(text):
    """Where the cheap check says no path, the full scan finds none either."""
    if not pathnames._may_name_a_path(text):
        assert _scan(text) == []
    assert pathnames.mentioned(text) == _scan(text)


def test_the_path_precheck_on_random_text():
    rng = random.Random(31)
    alphabet = "ab.Z9é/ \\:-_@+,;)x."
    skipped = 0
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 24)))
        if not pathnames._may_name_a_path(text):
            skipped += 1
            assert _scan(text) == [], repr(text)
    assert skipped > 1000  # the check does skip texts, or it would prove nothing


def _scan(text: str) -> list[str]:
    """`mentioned` without its precheck: the regular expressions alone."""
    found: list[str] = []
    for m in re.finditer(pathnames._PATH, text[:20_000]):
        token = m.group().rstrip(".,:;)")
        looks_like_path = "/" in token or "\\" in token or re.search(pathnames._EXT, token)
        url_or_number = "://" in token or re.fullmatch(pathnames._NUMBER, token)
        if looks_like_path and not url_or_number and token not in found:
            found.append(token)
        if len(found) >= pathnames.MAX_PATHS:
            break
    return found
