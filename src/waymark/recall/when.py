"""The dates a query names, matched against a memory's event time.

"What did we decide on 13 October 2023", "the cache change in July 2023", "in June", "the
weekend before April 10, 2023", "yesterday", "last week", "three days ago": each names days a
memory's event time can fall on. A memory that does gets a bounded boost in fusion
(`Settings.when_boost`); nothing is filtered out, and the query's words are searched as
before. Relative cues count from now (the moment of the query). Plain string work, no `re`:
the prompt hook imports this, and `re` is not otherwise on its path.
"""

from __future__ import annotations

import time

from waymark.base.clock import epoch
from waymark.base.record import record

MONTHS = {
    name: n
    for n, names in enumerate(
        (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
         ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
         ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
         ("december", "dec")),
        1,
    )
    for name in names
}  # fmt: skip
# A bare month is a cue only after one of these ("in june"): "may" and "march" are verbs too.
MONTH_LEADS = ("in", "during", "of", "since", "before", "after", "early", "mid", "late", "until")
UNITS = {"day": 1, "days": 1, "week": 7, "weeks": 7, "month": 30, "months": 30, "year": 365,
         "years": 365}  # fmt: skip
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple": 2, "few": 3}  # fmt: skip
YEAR_LEADS = ("in", "of", "during")
RELATIVE = ("today", "yesterday", "last", "this", "ago", "recently", "lately")
AROUND = 14  # days before a date "before" names, or after one "after" names

# days: inclusive ('YYYY-MM-DD', 'YYYY-MM-DD') spans; months: month numbers of any year.
Cue = record("Cue", "days months")


def cue(query: str, now: float | None = None) -> Cue | None:
    """The dates `query` names, or None when it names none."""
    words = _words(query)
    if not any(w[0].isdigit() or w in MONTHS or w in RELATIVE for w in words):
        return None
    today = _day(now if now is not None else time.time())
    days: list[tuple[str, str]] = []
    months: set[int] = set()
    for i, w in enumerate(words):
        before = words[i - 1] if i else ""
        after = words[i + 1 : i + 4]
        if len(w) == 10 and w[4] == "-" and w[7] == "-" and w.replace("-", "").isdigit():
            days.append(_near(w, before))
        elif w in MONTHS:
            _month(w, before, after, words[i - 2] if i > 1 else "", days, months)
        elif len(w) == 4 and w.isdigit() and w[:2] in ("19", "20") and before in YEAR_LEADS:
            days.append((f"{w}-01-01", f"{w}-12-31"))
        elif w in RELATIVE or w in UNITS:
            span = _relative(w, before, after, words[i - 2] if i > 1 else "", today)
            if span is not None:
                days.append(span)
    if not days and not months:
        return None
    return Cue(days=tuple(sorted(set(days))), months=frozenset(months))


def fits(found: Cue, event_time: str | None) -> bool:
    """Whether a memory of `event_time` falls on a day (or in a month) `found` names."""
    if not event_time:
        return False
    day = event_time[:10]
    return any(lo <= day <= hi for lo, hi in found.days) or (
        bool(found.months) and day[5:7].isdigit() and int(day[5:7]) in found.months
    )


def _words(query: str) -> list[str]:
    out = []
    for raw in query.lower().replace(",", " ").replace("?", " ").replace("'s", " ").split():
        word = raw.strip(".!;:()[]\"'")
        if word:
            out.append(word[:-2] if len(word) > 2 and word[-2:] in ("st", "nd", "rd", "th")
                       and word[:-2].isdigit() else word)  # fmt: skip
    return out


def _month(
    w: str, before: str, after: list[str], earlier: str, days: list, months: set[int]
) -> None:
    """A month name with what stands around it: "13 october 2023", "october 13 2023",
    "july 2023", "in june"."""
    month = MONTHS[w]
    year = next((a for a in after[:2] if len(a) == 4 and a.isdigit()), None)
    day = before if before.isdigit() and 1 <= int(before) <= 31 else None
    if day is None and after and after[0].isdigit() and 1 <= int(after[0]) <= 31:
        day = after[0]
    lead = earlier if day == before and day is not None else before
    if year is not None and day is not None:
        days.append(_near(f"{year}-{month:02d}-{int(day):02d}", lead))
    elif year is not None:
        last = 29 if month == 2 else 30 if month in (4, 6, 9, 11) else 31
        days.append((f"{year}-{month:02d}-01", f"{year}-{month:02d}-{last:02d}"))
    elif before in MONTH_LEADS or day is not None and len(w) > 3:
        months.add(month)


def _near(day: str, lead: str) -> tuple[str, str]:
    """The span a named day stands for: the day, or AROUND days before or after it."""
    if lead == "before":
        return _shift(day, -AROUND), day
    if lead == "after":
        return day, _shift(day, AROUND)
    return day, day


def _relative(w: str, before: str, after: list[str], earlier: str, today: str) -> tuple | None:
    """'today', 'yesterday', 'last week', 'this month', 'three days ago', 'recently'."""
    if w == "today":
        return today, today
    if w == "yesterday":
        day = _shift(today, -1)
        return day, day
    if w in ("recently", "lately"):
        return _shift(today, -30), today
    if w in ("last", "this") and after:
        unit = "week" if after[0] == "weekend" else after[0]
        if unit == "week":
            return (_shift(today, -6), today) if w == "this" else (_shift(today, -13), today)
        if unit in ("month", "year"):
            start = today[:8] + "01" if unit == "month" else today[:5] + "01-01"
            if w == "this":
                return start, today
            end = _shift(start, -1)  # the last day of the month (year) before
            return (end[:8] + "01" if unit == "month" else end[:5] + "01-01"), end
        return None
    if w in UNITS and after and after[0] == "ago":
        count = int(before) if before.isdigit() else NUMBERS.get(before)
        if count is None and before == "of" and earlier == "couple":
            count = 2
        if count is None:
            return None
        back = count * UNITS[w]
        slack = max(1, back // 7)
        return _shift(today, -back - slack), _shift(today, -back + slack)
    return None


def _day(t: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(t))


def _shift(day: str, by: int) -> str:
    """`day` ('YYYY-MM-DD') moved by `by` days."""
    return _day(epoch(day) + by * 86400)
