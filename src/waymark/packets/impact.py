"""`waymark stats --impact`: what Waymark's work led to, per week, for one project.

- sessions, and those that started from a handoff (their SessionStart packet showed the
  active checkpoint), and of those the ones that carried it on (saved a revision of it);
- recalls served: prompt packets that showed a memory, and recalls an agent asked for (the
  MCP tool) that answered with one;
- items shown and used (`curation.use`), and the tokens injected per used item;
- failures whose hint (what fixed the same error before) was followed by a pass;
- decisions git settled: held, or reverted (`curation.outcomes`);
- the provider's prompt cache for the period's sessions, from the usage the clients
  recorded in their own transcripts (`packets.cache_usage`).

Weeks start on Monday (UTC) and are named by that day.
"""

from __future__ import annotations

import time

from waymark.base import clock
from waymark.projects.resolve import Project
from waymark.storage import impact as rows
from waymark.storage.connection import Connection

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DAY = 86400
COUNTS = ("sessions", "from_handoff", "handoffs_resumed", "recalls", "asked_recalls", "shown",
          "used", "tokens", "failure_hints", "hints_then_passed", "decisions_held",
          "decisions_reverted")  # fmt: skip


def week_of(stamp: str) -> str:
    """The Monday (UTC) of the week `stamp` falls in, as YYYY-MM-DD."""
    days = int(clock.epoch(stamp) // DAY)
    monday = days - (days + 3) % 7  # 1970-01-01 was a Thursday
    return time.strftime("%Y-%m-%d", time.gmtime(monday * DAY))


def impact(
    conn: Connection,
    project: Project,
    *,
    days: float = 30.0,
    claude_dir: str | None = None,
    codex_dir: str | None = None,
) -> dict[str, Any]:
    """The report: `weeks` (newest first) and `total`, each of COUNTS with the derived
    rates, and `prompt_cache` (None when no client folder is given)."""
    since = clock.second(time.time() - days * DAY)
    weeks: dict[str, dict[str, Any]] = {}
    named: dict[str, str] = {}  # a day's stamp -> its week

    def add(stamp: str, key: str, n: int = 1) -> None:
        day = stamp[:10]
        if day not in named:
            named[day] = week_of(day)
        row = weeks.setdefault(named[day], dict.fromkeys(COUNTS, 0))
        row[key] += n

    started = rows.sessions_since(conn, project.id, since)
    when = {s: at for s, _, at in started}
    saves = rows.saved(conn, project.id, since)
    used = rows.used_per_session(conn, project.id, since)
    for session_id, _, at in started:
        add(at, "sessions")
        add(at, "used", used.get(session_id, 0))
    for session, tokens, shown, recalls, handoff, failures in rows.per_session(
        conn, project.id, since
    ):
        at = when.get(session, since)
        add(at, "tokens", tokens)
        add(at, "shown", shown)
        add(at, "recalls", recalls)
        if handoff is not None and session in when:
            add(at, "from_handoff")
            if (session, handoff) in saves:
                add(at, "handoffs_resumed")
        for failed_at in failures:
            add(at, "failure_hints")
            if rows.passed_after(conn, session, failed_at):
                add(at, "hints_then_passed")
    for at in rows.asked_recalls(conn, project.id, since):
        add(at, "recalls")
        add(at, "asked_recalls")
    for at, state in rows.decision_outcomes(conn, project.id, since):
        add(at, "decisions_held" if state == "held" else "decisions_reverted")
    total = dict.fromkeys(COUNTS, 0)
    for row in weeks.values():
        for key in COUNTS:
            total[key] += row[key]
    cache = None
    if claude_dir is not None or codex_dir is not None:
        from waymark.packets.cache_usage import cache_usage

        cache = cache_usage([(s, c) for s, c, _ in started], claude_dir or "", codex_dir or "")
    return {
        "project": project.to_dict(),
        "days": days,
        "since": since,
        "weeks": [{"week": w, **_rates(weeks[w])} for w in sorted(weeks, reverse=True)],
        "total": _rates(total),
        "prompt_cache": cache,
    }


def _rates(row: dict[str, int]) -> dict[str, Any]:
    """The counts with what they make: use rate, tokens per used item, the share of
    sessions that started from a handoff, of hints followed by a pass, of decisions held."""

    def share(part: int, whole: int) -> float | None:
        return round(part / whole, 3) if whole else None

    settled = row["decisions_held"] + row["decisions_reverted"]
    return {
        **row,
        "use_rate": share(row["used"], row["shown"]),
        "tokens_per_used_item": round(row["tokens"] / row["used"], 1) if row["used"] else None,
        "from_handoff_share": share(row["from_handoff"], row["sessions"]),
        "hints_passed_share": share(row["hints_then_passed"], row["failure_hints"]),
        "held_share": share(row["decisions_held"], settled),
    }
