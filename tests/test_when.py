"""Dates a query names (recall/when.py), and what they do to a ranking: a memory whose event
time falls on one is preferred (a bounded boost), none is left out."""

from __future__ import annotations

import subprocess
import sys

import pytest

from waymark.base.clock import epoch
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.recall import ranked, when

NOW = epoch("2026-12-05T10:00:00")


@pytest.mark.parametrize(
    ("query", "days", "months"),
    [
        ("What did we decide on October 13, 2023?", [("2023-10-13", "2023-10-13")], []),
        ("the store we opened on 1 February, 2023", [("2023-02-01", "2023-02-01")], []),
        ("the 13th October 2023 outage", [("2023-10-13", "2023-10-13")], []),
        ("deploy of 2026-07-04", [("2026-07-04", "2026-07-04")], []),
        ("the cache change in July 2023", [("2023-07-01", "2023-07-31")], []),
        ("what broke in Feb 2024", [("2024-02-01", "2024-02-29")], []),
        ("beach trips in 2023", [("2023-01-01", "2023-12-31")], []),
        ("camping in June", [], [6]),
        ("the weekend before April 10, 2023", [("2023-03-27", "2023-04-10")], []),
        ("what we found after 2026-11-01", [("2026-11-01", "2026-11-15")], []),
        ("what did we decide yesterday", [("2026-12-04", "2026-12-04")], []),
        ("the flaky test today", [("2026-12-05", "2026-12-05")], []),
        ("the fix from three days ago", [("2026-12-01", "2026-12-03")], []),
        ("the migration 2 weeks ago", [("2026-11-19", "2026-11-23")], []),
        ("what changed last week", [("2026-11-22", "2026-12-05")], []),
        ("what changed last month", [("2026-11-01", "2026-11-30")], []),
        ("releases this year", [("2026-01-01", "2026-12-05")], []),
        ("what we tried recently", [("2026-11-05", "2026-12-05")], []),
    ],
)
def test_a_query_names_days_or_months(query, days, months):
    found = when.cue(query, NOW)
    assert found is not None
    assert list(found.days) == days and sorted(found.months) == months


@pytest.mark.parametrize(
    "query",
    [
        "what may cause this timeout",  # "may" the verb
        "march the tests through CI",  # "march" the verb
        "retry 3 times with 500 ms",  # numbers, no date
        "the last step of the build",  # "last" without a span
        "bump the version to 2023.1",  # a number that is not a year in a date
    ],
)
def test_words_that_only_look_like_dates_name_none(query):
    assert when.cue(query, NOW) is None


def test_fits_compares_the_day_and_the_month_of_any_year():
    found = when.cue("in June, and on 2026-07-04", NOW)
    assert when.fits(found, "2021-06-30T23:59:00Z") and when.fits(found, "2026-07-04T08:00:00Z")
    assert not when.fits(found, "2026-07-05T00:00:00Z") and not when.fits(found, None)


def test_a_memory_of_the_named_day_ranks_first_and_nothing_is_left_out(conn, project):
    def saved(content, day):
        draft = make_draft(project, type="decision", content=content, event_time=day)
        return store.remember(conn, project, draft).memory

    newer = saved("Cache TTL is 600 seconds for the pricing API", "2026-12-01T09:00:00")
    dated = saved("Cache TTL is 300 seconds for the pricing API", "2026-10-13T09:00:00")
    plain = ranked.recall(conn, project, "pricing API cache TTL", now=NOW)
    # Without a date the two tie (their order is then the ids', random within a millisecond)
    assert {h.memory.id for h in plain} == {newer.id, dated.id}
    assert plain[0].score == plain[1].score
    asked = ranked.recall(conn, project, "pricing API cache TTL on October 13, 2026", now=NOW)
    assert [h.memory.id for h in asked] == [dated.id, newer.id]  # both still there
    assert asked[0].explain["multipliers"]["when"] == 2.0
    assert asked[1].explain["multipliers"]["when"] == 1.0
    # a relative cue counts from now: no memory of yesterday, nothing moves
    none = ranked.recall(conn, project, "pricing API cache TTL we set yesterday", now=NOW)
    assert {h.memory.id for h in none} == {newer.id, dated.id}
    assert {h.explain["multipliers"]["when"] for h in none} == {1.0}
    later = saved("Cache TTL stays as it is for the pricing API", "2026-12-04T17:00:00")
    asked = ranked.recall(conn, project, "pricing API cache TTL we set yesterday", now=NOW)
    assert asked[0].memory.id == later.id and len(asked) == 3


def test_the_prompt_hook_path_does_not_import_re():
    """when.py works on plain strings: `re` costs a hook process its import."""
    code = (
        "import sys; from waymark.packets import prompt; from waymark.recall import ranked, when;"
        "when.cue('on October 13, 2023, yesterday', 0); print('re' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
