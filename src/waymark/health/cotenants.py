"""The co-tenant view: Waymark's hooks beside the other hooks on the same events, from what
Claude Code records in its own transcripts (read-only, numbers only).

Claude Code writes a line for each hook run that printed something or failed (an
`attachment` with `hookEvent`, `command`, `durationMs`, keyed by the event's `toolUseID`) and,
for every Stop, a `stop_hook_summary` with each Stop hook's command and duration. The hooks
of one event run at once, so an event's chain takes as long as its slowest hook: per event,
the chain's p50/p95 over the instances seen, Waymark's own p50/p95 and its share of the chain
(its time over the chain's, summed), and a warning when the chain's p95 nears the client's
timeout (half of it). Only lines holding `durationMs` are parsed and only the event, the
command (to tell Waymark's from the others) and the time are kept; nothing is stored.
"""

from __future__ import annotations

import os

from waymark.base import jsonlite as json
from waymark.base.files import tail_bytes
from waymark.health.fired import rank

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

FILES = 30  # newest transcripts read
TAIL_BYTES = 2 * 1024 * 1024  # of each
NEAR = 0.5  # of the timeout: past it, the chain is near it


def instances(folder: str) -> list[dict[str, Any]]:
    """[{event, key, hooks: [(command, ms)]}] from the newest transcripts under `folder`
    (Claude Code's `projects/`), oldest first within each file."""
    files = []
    try:
        for project in os.scandir(folder):
            if not project.is_dir(follow_symlinks=False):
                continue
            for entry in os.scandir(project.path):
                if entry.name.endswith(".jsonl") and entry.is_file(follow_symlinks=False):
                    files.append((entry.stat().st_mtime, entry.path))
    except OSError:
        return []
    out: list[dict[str, Any]] = []
    for _, path in sorted(files)[-FILES:]:
        out += _read(path)
    return out


def _read(path: str) -> list[dict[str, Any]]:
    tail = tail_bytes(path, TAIL_BYTES)
    if tail is None:
        return []
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for line in tail.split(b"\n"):
        if b'"durationMs"' not in line:
            continue
        try:
            item = json.loads(line)
        except ValueError:
            continue  # the first line of a tail read, cut
        if not isinstance(item, dict):
            continue
        for event, key, command, ms in _runs(item):
            slot = found.setdefault((event, key), {"event": event, "key": key, "hooks": []})
            slot["hooks"].append((command, ms))
    return list(found.values())


def _runs(item: dict[str, Any]) -> list[tuple[str, str, str, float]]:
    """(event, instance key, command, ms) of each hook run one transcript line records."""
    if item.get("type") == "system" and item.get("subtype") == "stop_hook_summary":
        key = str(item.get("toolUseID") or item.get("uuid") or "")
        return [
            ("Stop", key, str(h.get("command") or ""), float(h["durationMs"]))
            for h in item.get("hookInfos") or []
            if isinstance(h, dict) and isinstance(h.get("durationMs"), int | float)
        ]
    a = item.get("attachment")
    if item.get("type") == "attachment" and isinstance(a, dict):
        ms, event = a.get("durationMs"), a.get("hookEvent")
        if isinstance(ms, int | float) and isinstance(event, str) and event != "Stop":
            key = str(a.get("toolUseID") or item.get("uuid") or "")
            return [(event, key, str(a.get("command") or ""), float(ms))]
    return []


def chains(found: list[dict[str, Any]], ours: Callable[[str], bool]) -> list[dict[str, Any]]:
    """Per event: {event, instances, hooks (distinct commands seen), chain_p50, chain_p95,
    ours_p50, ours_p95, share (Waymark's time over the chain's, 0-1), others}, by event."""
    by: dict[str, list[dict[str, Any]]] = {}
    for inst in found:
        by.setdefault(inst["event"], []).append(inst)
    out = []
    for event, insts in sorted(by.items()):
        chain = sorted(max(ms for _, ms in i["hooks"]) for i in insts)
        mine = sorted(ms for i in insts for c, ms in i["hooks"] if ours(c))
        mine_total = sum(max((ms for c, ms in i["hooks"] if ours(c)), default=0.0) for i in insts)
        commands = {c for i in insts for c, _ in i["hooks"]}
        out.append({
            "event": event, "instances": len(insts), "hooks": len(commands),
            "others": sum(1 for c in commands if not ours(c)),
            "chain_p50": rank(chain, 0.5), "chain_p95": rank(chain, 0.95),
            "ours_p50": rank(mine, 0.5), "ours_p95": rank(mine, 0.95),
            "share": round(mine_total / sum(chain), 3) if sum(chain) else None,
        })  # fmt: skip
    return out


def finding(rows: list[dict[str, Any]], timeouts: dict[str, float]) -> dict[str, str]:
    """The doctor's line: every event's chain against the client's timeout for it (seconds)."""
    from waymark.health.doctor import OK, SKIP, WARN
    from waymark.health.doctor import finding as make

    check = "claude-code hook chain"
    if not rows:
        return make(check, SKIP, "no hook timings in Claude Code's transcripts yet")
    near = [
        f"{r['event']} p95 {r['chain_p95'] / 1000:.1f} s of {timeouts[r['event']]:g} s"
        for r in rows
        if r["event"] in timeouts and r["chain_p95"] > NEAR * 1000 * timeouts[r["event"]]
    ]
    if near:
        return make(check, WARN, f"near the client's timeout: {'; '.join(near)}",
                    "find the slow hook in `waymark status --json` (hooks.chain) and give it"
                    " less to do, or a longer timeout")  # fmt: skip
    said = "; ".join(
        f"{r['event']} p95 {r['chain_p95']:.0f} ms"
        + (f" (Waymark {100 * r['share']:.0f}%)" if r["share"] is not None else "")
        for r in rows
    )
    return make(check, OK, said)
