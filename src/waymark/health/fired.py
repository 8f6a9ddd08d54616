"""When each hook last ran and how long it took, from the hooks' own records
(`base.hookruns`): the proof that they fire, beyond a config that looks right.

A hook is *silent* when it is wired in its client's config, has not run since the last
install, and the same client's other hooks have: a session came and this hook was not part of
it. Only the events every session has (EVERY_SESSION) can be silent; a compaction, a subagent
or a failed command may simply not have happened yet.
"""

from __future__ import annotations

from waymark.base import hookruns

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

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
            "p50": rank(worked, 0.50), "p95": rank(worked, 0.95),
        })  # fmt: skip
    return out


def rank(values: list[float], q: float) -> float | None:
    """The nearest-rank percentile of sorted values."""
    if not values:
        return None
    return values[max(0, int(-(-q * len(values) // 1)) - 1)]  # ceil, without importing math


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


# A client's session that made its files this long after the client's last hook run ran
# none of Waymark's hooks (they run at its start and at every prompt).
MISSED_S = 600


def finding(
    client: str,
    wired: list[str],
    installed_at: str | None,
    started_at: str | None = None,
    rows: list[dict[str, Any]] | None = None,
) -> dict[str, str]:
    """The doctor's line on whether `client`'s wired hooks fire. `started_at`: when the
    client last started a session here, by its own files (None: unknown)."""
    from waymark.health.doctor import OK, WARN
    from waymark.health.doctor import finding as make

    check = f"{client} hooks fired"
    rows = by_hook() if rows is None else rows
    state = wired_state(client, wired, installed_at, rows)
    ran = [s for s in state if s["since_install"]]
    when = f"since the install at {_minute(installed_at)}" if installed_at else ""
    missed = _missed(client, installed_at, started_at, rows)
    why = (" (hooks not trusted: /hooks in Codex; a headless `codex exec` runs them only with"
           " --dangerously-bypass-hook-trust)" if client == "codex" else "")  # fmt: skip
    if not ran:
        return make(
            check, WARN, f"no {client} hook has run {when or 'yet'}".strip()
            + (f", though {client} started a session at {_minute(started_at)}" if missed else ""),
            f"start a {client} session in a git repository; if this stays, run "
            "`waymark doctor --self-test` and check the hooks' interpreter"
            + (" and that the hooks are trusted (/hooks in Codex)" if client == "codex" else ""),
        )  # fmt: skip
    if missed:
        return make(
            check, WARN, f"{client} started a session at {_minute(started_at)} and no Waymark"
            f" hook ran in it{why}",
            "`waymark doctor --self-test` fires each hook as the client would",
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
                f"{last['event']} at {_minute(last['last_at'])}")  # fmt: skip


def _minute(stamp: str | None) -> str:
    return (stamp or "")[:16].replace("T", " ")


def _missed(
    client: str, installed_at: str | None, started_at: str | None, rows: list[dict[str, Any]]
) -> bool:
    """The client started a session after the install, and none of its hooks ran since
    (within MISSED_S of that start)."""
    from waymark.base import clock

    if not started_at or (installed_at and clock.epoch(started_at) < clock.epoch(installed_at)):
        return False
    last = max((r["last_at"] for r in rows if r["client"] == client), default=None)
    return last is None or clock.epoch(last) < clock.epoch(started_at) - MISSED_S


def table(
    wired: dict[str, list[str]], installed_at: str | None, rows: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Every hook a client has wired or that ran (a plugin's hooks are not in the config
    files): one row per client and event, as `wired_state` gives them, `wired` said."""
    rows = by_hook() if rows is None else rows
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


def client_summary(
    client: str,
    wired: list[str],
    installed_at: str | None,
    started_at: str | None,
    rows: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """What `waymark status` says of one client's hooks: the doctor's line on them, and per
    event its last run, outcome, count and p50/p95 (ms), wired or not, silent or not."""
    rows = by_hook() if rows is None else rows
    said = finding(client, wired, installed_at, started_at, rows) if wired else None
    events = [
        {"event": s["event"], "wired": s["wired"], "silent": s["silent"],
         "since_install": s["since_install"],
         **({k: s["row"][k] for k in ("last_at", "last_outcome", "runs", "errors", "p50", "p95")}
            if s["row"] else {"last_at": None, "last_outcome": None, "runs": 0})}
        for s in table({client: wired}, installed_at, rows) if s["client"] == client
    ]  # fmt: skip
    return {
        "client": client, "installed_at": installed_at, "session_started": started_at,
        "status": said["status"] if said else "skip",
        "said": said["detail"] if said else "no Waymark hook in its config",
        "fix": said["fix"] if said else "", "events": events,
    }  # fmt: skip
