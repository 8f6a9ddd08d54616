"""`waymark stats`: how much of what the packets inject the sessions then use, and what it
costs, from the receipts and the measured use (`curation.use`).

Use rate per packet section, per hook and per memory type (an item counts once per session,
used or not); tokens injected per session, per prompt (UserPromptSubmit packets), per
subagent (SubagentStart packets) and per used item; and what the MCP tool definitions cost
every request the client sends.
"""

from __future__ import annotations

from waymark.base import clock
from waymark.packets.sessions import tool_definitions
from waymark.projects.resolve import Project
from waymark.storage import sessions
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any


def stats(conn: Connection, project: Project, *, days: float = 30.0) -> dict[str, Any]:
    since = clock.second(clock.epoch(clock.now()) - days * 86400)
    rows = sessions.use_rows(conn, project.id, since)
    shown: dict[tuple[str, str], dict[str, Any]] = {}  # (session, item) -> where, how
    tokens_by_session: dict[str, int] = {}
    packets: dict[str, dict[str, Any]] = {}
    for session, hook, kind, section, item, tokens, mtype, how, packet in rows:
        tokens_by_session[session] = tokens_by_session.get(session, 0) + int(tokens)
        p = packets.setdefault(packet, {"hook": hook, "kind": kind, "tokens": 0})
        p["tokens"] += int(tokens)
        if item is None or not tokens:
            continue
        shown.setdefault((session, item), {"section": section, "hook": hook,
                                           "type": mtype or _kind_of(item), "how": how})  # fmt: skip
    used = [s for s in shown.values() if s["how"]]
    return {
        "days": days,
        "sessions": len(tokens_by_session),
        "shown": len(shown),
        "used": len(used),
        "use_rate": _rate(len(used), len(shown)),
        "by_section": _rates(shown.values(), "section"),
        "by_hook": _rates(shown.values(), "hook"),
        "by_type": _rates(shown.values(), "type"),
        "by_how": {
            h: sum(1 for s in used if s["how"] == h) for h in sorted({s["how"] for s in used})
        },  # fmt: skip
        "tokens": {
            "total": sum(tokens_by_session.values()),
            "per_session": _mean(list(tokens_by_session.values())),
            "per_prompt": _mean(
                [p["tokens"] for p in packets.values() if p["hook"] == "UserPromptSubmit"]
            ),  # fmt: skip
            "per_subagent": _mean(
                [p["tokens"] for p in packets.values() if p["hook"] == "SubagentStart"]
            ),  # fmt: skip
            "per_used_item": round(sum(tokens_by_session.values()) / len(used), 1)
            if used
            else None,
        },
        "tool_definitions": tool_definitions(),
    }


def _kind_of(item: str) -> str:
    """What a receipt's item is when it is not a memory: `failure:12` -> failure."""
    return item.split(":", 1)[0] if ":" in item else "checkpoint"


def _rate(used: int, shown: int) -> float | None:
    return round(used / shown, 3) if shown else None


def _rates(shown: Any, key: str) -> list[dict[str, Any]]:
    groups: dict[str, list[int]] = {}
    for s in shown:
        g = groups.setdefault(s[key] or "other", [0, 0])
        g[0] += 1
        g[1] += bool(s["how"])
    return [{key: k, "shown": n, "used": u, "rate": _rate(u, n)}
            for k, (n, u) in sorted(groups.items(), key=lambda kv: (-kv[1][0], kv[0]))]  # fmt: skip


def _mean(values: list[int]) -> float | None:
    return round(sum(values) / len(values), 1) if values else None
