"""How much of each model request a provider's prompt cache can reuse: the share of its bytes
that repeat the previous request of the same conversation, and where the two first differ.

A request is read in the order a provider caches it (Anthropic: tools, system, messages;
OpenAI Responses: instructions, tools, input; Chat Completions: tools, messages), one segment
per tool, system block, message or input item. Two things that change no cached token are
left out: where the client puts its cache breakpoints (`cache_control`) and whether a text is
sent as a string or as one text block. A pair *appends* when the previous request's segments
are the start of the next one's: the cache keeps all of it. Otherwise the first segment that
differs is named, with whose text it was (Waymark's, by its `<waymark-memory` marker, or the
client's). Used by bench/prompt_cache.py and tests/e2e/test_prompt_cache_clients.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MARK = "<waymark-memory"


def api_of(body: dict[str, Any]) -> str:
    """The protocol of a request body (a Chat Completions body has no top-level `system`)."""
    if "input" in body or "instructions" in body:
        return "responses"
    return "anthropic" if "system" in body else "chat"


def _plain(value: Any) -> Any:
    """`value` without cache breakpoints, a lone text block as its string."""
    if isinstance(value, dict):
        out = {k: _plain(v) for k, v in value.items() if k != "cache_control"}
        content = out.get("content")
        if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
            only = content[0]
            if set(only) == {"type", "text"} and only["type"] in ("text", "input_text"):
                out["content"] = only["text"]
        return out
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def segments(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, canonical JSON) of each cached piece of the request, in cache order."""
    api = api_of(body)
    out: list[tuple[str, str]] = []

    def add(label: str, value: Any) -> None:
        out.append((label, json.dumps(_plain(value), sort_keys=True, ensure_ascii=False)))

    if api == "responses" and body.get("instructions"):
        add("instructions", body["instructions"])
    for i, tool in enumerate(body.get("tools") or []):
        add(f"tools[{i}]", tool)
    if api == "anthropic":
        system = body.get("system")
        blocks = [{"type": "text", "text": system}] if isinstance(system, str) else system or []
        for i, block in enumerate(blocks):
            add(f"system[{i}]", block)
    items = body.get("input") if api == "responses" else body.get("messages")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    name = "input" if api == "responses" else "messages"
    for i, item in enumerate(items or []):
        role = item.get("role") or item.get("type") if isinstance(item, dict) else None
        add(f"{name}[{i}] ({role})", item)
    return out


def conversation(body: dict[str, Any]) -> str:
    """What tells one conversation's requests from another's (a subagent's, a side
    request's): its system or instructions and the client's own text in the user messages
    before the first answer (Codex sends its environment, the same for a lead and its
    subagents, then the prompt). Waymark's text is left out: it is compared, not a name."""
    found = [s for label, s in segments(body) if label.startswith(("system", "instructions"))]
    api = api_of(body)
    items = body.get("input") if api == "responses" else body.get("messages")
    items = [{"role": "user", "content": items}] if isinstance(items, str) else items or []
    for item in items:
        if (
            not isinstance(item, dict)
            or item.get("role") == "assistant"
            or item.get("type") in ("function_call", "custom_tool_call", "reasoning")
        ):
            break
        if item.get("role") != "user":
            continue
        content = item.get("content")
        blocks = [content] if isinstance(content, str) else [
            b.get("text") for b in content or [] if isinstance(b, dict)]  # fmt: skip
        found += [b for b in blocks if isinstance(b, str) and MARK not in b]
    return "\n".join(found)


@dataclass
class Pair:
    """One request against the previous request of its conversation."""

    index: int  # the later request's place among all the requests given
    previous_bytes: int
    kept_bytes: int  # of the previous request's bytes, those the cache can reuse
    appends: bool
    differs_at: str | None  # the first segment that differs, when it does not append
    whose: str | None  # "waymark" when that segment held Waymark's text, else "client"

    @property
    def kept(self) -> float:
        return self.kept_bytes / self.previous_bytes if self.previous_bytes else 1.0


def compare(index: int, before: list[tuple[str, str]], after: list[tuple[str, str]]) -> Pair:
    size = sum(len(s) for _, s in before)
    kept = 0
    for n, (label, text) in enumerate(before):
        if n < len(after) and after[n][1] == text:
            kept += len(text)
            continue
        other = after[n][1] if n < len(after) else ""
        common = 0
        while common < min(len(text), len(other)) and text[common] == other[common]:
            common += 1
        whose = "waymark" if MARK in text or MARK in other else "client"
        where = after[n][0] if n < len(after) else label  # as the later request has it
        return Pair(index, size, kept + common, False, where, whose)
    return Pair(index, size, size, True, None, None)


def pairs(bodies: list[dict[str, Any]]) -> list[Pair]:
    """Each request against the previous request of the same conversation, in order."""
    last: dict[str, list[tuple[str, str]]] = {}
    out = []
    for i, body in enumerate(bodies):
        key = conversation(body)
        now = segments(body)
        if key in last:
            out.append(compare(i, last[key], now))
        last[key] = now
    return out


def summary(found: list[Pair]) -> dict[str, Any]:
    """Pairs, those that append, the bytes kept over all pairs, the least kept, and where the
    others first differ (segment, whose text)."""
    size = sum(p.previous_bytes for p in found)
    breaks = [p for p in found if not p.appends]
    return {
        "pairs": len(found),
        "appends": len(found) - len(breaks),
        "kept": sum(p.kept_bytes for p in found) / size if size else 1.0,
        "least": min((p.kept for p in found), default=1.0),
        "breaks": [(p.index, p.differs_at, p.whose, round(p.kept, 3)) for p in breaks],
    }
