"""When each hook last ran and how long it took, from the hooks' own records
(`base.hookruns`): the proof that they fire, beyond a config that looks right.

A hook is *silent* when it is wired in its client's config, has not run since the last
install, and the same client's other hooks have: a session came and this hook was not part of
it. Only the events every session has (EVERY_SESSION) can be silent; a compaction, a subagent
or a failed command may simply not have happened yet.
"""

from __future__ import annotations

import math
from typing import Any

from waymark.base import hookruns

EVERY_SESSION = ("SessionStart", "UserPromptSubmit", "Stop")


def by_hook(runs: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Per client and event: {client, event, runs, errors, last_at, last_outcome, p50, p95}
    (milliseconds, of the runs that did their work), sorted by client then event."""
    found = (hookruns.runs() if runs is None
             else [tuple(r[k] for k in hookruns.KEYS) for r in runs])  # fmt: skip
    groups: dict[tuple[str, str], list[Any]] = {}
    for run in found:
        groups.setdefault((run[1], run[2]), []).append(run)
    out = []
    for (client, event), mine in sorted(groups.items()):
        worked = sorted(r[4] for r in mine if r[3] == "ok")
        out.append({
            "client": client, "event": event, "runs": len(mine),
            "errors": sum(1 for r in mine if r[3] == "error"),
            "last_at": mine[-1][0], "last_outcome": mine[-1][3],
            "p50": _rank(worked, 0.50), "p95": _rank(worked, 0.95),
        })  # fmt: skip
    return out


def _rank(values: list[float], q: float) -> float | None:
    """The nearest-rank percentile of sorted values."""
    if not values:
        return None
    return values[max(0, math.ceil(q * len(values)) - 1)]


def wired_state(
    client: str, wired: list[str], installed_at: str | None, rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """One row per event wired for `client`: its by_hook row (or none), `since_install`
    (ran after the install), and `silent`."""
    mine = {r["event"]: r for r in rows if r["client"] == client}
    since = installed_at or ""
    ran_since = any(r["last_at"] >= since for r in mine.values())
    out = []
    for event in sorted(wired):
        row = mine.get(event)
        fresh = row is not None and row["last_at"] >= since
        out.append({
            "client": client, "event": event, "row": row, "since_install": fresh,
            "silent": ran_since and not fresh and event in EVERY_SESSION,
        })  # fmt: skip
    return out


def finding(client: str, wired: list[str], installed_at: str | None) -> dict[str, str]:
    """The doctor's line on whether `client`'s wired hooks fire."""
    from waymark.health.doctor import OK, WARN
    from waymark.health.doctor import finding as make

    check = f"{client} hooks fired"
    state = wired_state(client, wired, installed_at, by_hook())
    ran = [s for s in state if s["since_install"]]
    when = f"since the install at {installed_at[:16].replace('T', ' ')}" if installed_at else ""
    if not ran:
        return make(
            check, WARN, f"no {client} hook has run {when or 'yet'}".strip(),
            f"start a {client} session in a git repository; if this stays, run "
            "`waymark doctor` there and check the hooks' interpreter"
            + (" and that the hooks are trusted (/hooks in Codex)" if client == "codex" else ""),
        )  # fmt: skip
    silent = [s["event"] for s in state if s["silent"]]
    if silent:
        return make(check, WARN, f"wired but silent {when}: {', '.join(silent)}",
                    f"waymark install --client {client}")  # fmt: skip
    failing = [s["event"] for s in ran if s["row"]["last_outcome"] == "error"]
    if failing:
        return make(check, WARN, f"last run failed open: {', '.join(failing)}",
                    "see hooks.log in the data home")  # fmt: skip
    last = max(ran, key=lambda s: s["row"]["last_at"])["row"]
    return make(check, OK, f"{len(ran)} of {len(state)} wired events ran {when}; last "
                f"{last['event']} at {last['last_at'][:16].replace('T', ' ')}")  # fmt: skip


def table(wired: dict[str, list[str]], installed_at: str | None) -> list[dict[str, Any]]:
    """Every hook a client has wired or that ran (a plugin's hooks are not in the config
    files): one row per client and event, as `wired_state` gives them, `wired` said."""
    rows = by_hook()
    out = []
    for client in sorted(set(wired) | {r["client"] for r in rows}):
        events = wired.get(client, [])
        state = wired_state(client, events, installed_at, rows)
        for extra in sorted({r["event"] for r in rows if r["client"] == client} - set(events)):
            state += wired_state(client, [extra], installed_at, rows)
        for s in state:
            s["wired"] = s["event"] in events
        out += sorted(state, key=lambda s: s["event"])
    return out
