"""The provider's prompt cache as the clients recorded it: the token usage each model request
reported, in the transcripts Claude Code and Codex keep on this machine (`stats --impact`).

Claude Code: `<config>/projects/<project>/<session id>.jsonl`, an assistant line's
`message.usage` (`input_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens`),
once per request (a response of several blocks repeats its message id). Codex:
`<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-*-<session id>.jsonl`, each `token_count` event's
`info.last_token_usage` (`input_tokens`, of which `cached_input_tokens`). Only usage is read:
no text of the transcript is kept. A line over MAX_LINE is skipped unread.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

MAX_LINE = 2 * 1024 * 1024
CLIENTS = ("claude-code", "codex")
# What each transcript held when last read, by (path, size, mtime): the dashboard's Overview
# draws again after every write, and reads only what changed.
_READ: dict[tuple[str, int, int], dict[str, int]] = {}
READ_KEPT = 1024


def cache_usage(
    sessions: Iterable[tuple[str, str]], claude_dir: str, codex_dir: str
) -> dict[str, Any]:
    """For the sessions (id, client) whose transcript is on this machine: the requests, the
    prompt tokens they sent (cached ones included) and of those the cached ones, in all and
    per client; `cached_share` None when no request was read."""
    wanted = [(s, c) for s, c in sessions if c in CLIENTS]
    rollouts = _rollouts(codex_dir) if any(c == "codex" for _, c in wanted) else {}
    by_client: dict[str, dict[str, Any]] = {}
    for session_id, client in wanted:
        path = (_claude_transcript(claude_dir, session_id) if client == "claude-code"
                else rollouts.get(session_id))  # fmt: skip
        if path is None:
            continue
        read = _read(client, path)
        if read is None:
            continue
        row = by_client.setdefault(client, _empty())
        row["sessions"] += 1
        for key in ("requests", "input_tokens", "cached_tokens"):
            row[key] += read[key]
    total = _empty()
    for row in by_client.values():
        for key in total:
            total[key] += row[key]
        row["cached_share"] = _share(row)
    return {**total, "cached_share": _share(total), "by_client": by_client}


def _read(client: str, path: str) -> dict[str, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (path, st.st_size, st.st_mtime_ns)
    if key not in _READ:
        if len(_READ) >= READ_KEPT:
            _READ.pop(next(iter(_READ)))
        _READ[key] = _claude(path) if client == "claude-code" else _codex(path)
    return _READ[key]


def _empty() -> dict[str, Any]:
    return {"sessions": 0, "requests": 0, "input_tokens": 0, "cached_tokens": 0}


def _share(row: dict[str, Any]) -> float | None:
    return round(row["cached_tokens"] / row["input_tokens"], 3) if row["input_tokens"] else None


def _claude_transcript(claude_dir: str, session_id: str) -> str | None:
    if not session_id or "/" in session_id or session_id.startswith("."):
        return None
    base = os.path.join(claude_dir, "projects")
    try:
        folders = list(os.scandir(base))
    except OSError:
        return None
    for folder in folders:
        path = os.path.join(folder.path, session_id + ".jsonl")
        if folder.is_dir(follow_symlinks=False) and os.path.isfile(path):
            return path
    return None


def _rollouts(codex_dir: str) -> dict[str, str]:
    """session id -> its rollout file (`rollout-<time>-<session id>.jsonl`)."""
    found: dict[str, str] = {}
    for base, _, names in os.walk(os.path.join(codex_dir, "sessions")):
        for name in names:
            if name.startswith("rollout-") and name.endswith(".jsonl"):
                stem = name[: -len(".jsonl")]
                found[stem[-36:]] = os.path.join(base, name)  # a UUID's 36 characters
    return found


def _lines(path: str) -> Iterator[dict[str, Any]]:
    from waymark.base.files import json_lines

    try:
        for _, item in json_lines(path, MAX_LINE):
            yield item
    except OSError:
        return


def _number(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _claude(path: str) -> dict[str, int]:
    out = {"requests": 0, "input_tokens": 0, "cached_tokens": 0}
    seen: set[str] = set()
    for item in _lines(path):
        message = item.get("message")
        if item.get("type") != "assistant" or not isinstance(message, dict):
            continue
        usage = message.get("usage")
        key = message.get("id") or item.get("requestId") or item.get("uuid")
        if not isinstance(usage, dict) or not isinstance(key, str) or key in seen:
            continue
        seen.add(key)
        cached = _number(usage.get("cache_read_input_tokens"))
        sent = (_number(usage.get("input_tokens")) + cached
                + _number(usage.get("cache_creation_input_tokens")))  # fmt: skip
        out["requests"] += 1
        out["input_tokens"] += sent
        out["cached_tokens"] += cached
    return out


def _codex(path: str) -> dict[str, int]:
    out = {"requests": 0, "input_tokens": 0, "cached_tokens": 0}
    for item in _lines(path):
        payload = item.get("payload")
        if item.get("type") != "event_msg" or not isinstance(payload, dict):
            continue
        info = payload.get("info") if payload.get("type") == "token_count" else None
        last = info.get("last_token_usage") if isinstance(info, dict) else None
        if not isinstance(last, dict):
            continue
        out["requests"] += 1
        out["input_tokens"] += _number(last.get("input_tokens"))
        out["cached_tokens"] += _number(last.get("cached_input_tokens"))
    return out
