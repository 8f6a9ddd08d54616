"""The three request shapes the proxy understands, read and written: Anthropic Messages
(`/v1/messages`), OpenAI Responses (`/v1/responses`) and Chat Completions
(`/v1/chat/completions`, which the OpenAI-compatible servers speak).

`read` turns a request body into what Waymark needs: the user turns (the text of each user
message that is a prompt, not only tool results), whether the conversation has an answer yet,
and the tool calls the history holds with their results. `inject` puts packets where each
protocol allows a system block: Anthropic's top-level `system` (the session packet) and a text
block at the end of a user message (a turn's packet); a `developer` item (Responses) or a
`system` message (Chat Completions) at the start and after the user message. Everything else
in the body is left as it was, in its order.
"""

from __future__ import annotations

import json
from typing import Any

from waymark.base import shell

PATHS = {
    "/v1/messages": "anthropic",
    "/v1/responses": "responses",
    "/v1/chat/completions": "chat",
    "/chat/completions": "chat",
    "/responses": "responses",
}
SHELL_TOOLS = ("bash", "shell", "exec_command", "shell_command", "local_shell", "run_command",
               "execute_command", "terminal")  # fmt: skip
EDIT_TOOLS = ("edit", "write", "multiedit", "str_replace_editor", "str_replace_based_edit_tool",
              "create_file", "edit_file", "write_file", "apply_patch", "patch", "notebookedit",
              "replace_in_file", "write_to_file")  # fmt: skip
PATH_KEYS = ("file_path", "path", "filePath", "notebook_path", "target_file", "filename")
ERROR_CHARS = 4000


def read(api: str, body: dict[str, Any]) -> dict[str, Any]:
    """{turns: [user text...], answered: bool, last_is_prompt: bool, calls: [...],
    opening: text that names the conversation (system and the user turns before the first
    answer), continued: bool}."""
    if api == "anthropic":
        items = [m for m in body.get("messages") or () if isinstance(m, dict)]
        system = _text(body.get("system"))
    elif api == "responses":
        items = _response_items(body.get("input"))
        system = _text(body.get("instructions"))
    else:
        items = [m for m in body.get("messages") or () if isinstance(m, dict)]
        system = " ".join(
            _text(m.get("content")) for m in items if m.get("role") in ("system", "developer")
        )
    turns, last_is_prompt, answered = [], False, False
    first = 0  # the user turns before the first answer: what opened the conversation
    for item in items:
        role = item.get("role")
        if role == "user" and _prompt_text(api, item) is not None:
            turns.append(_prompt_text(api, item) or "")
            last_is_prompt = True
            first += not answered
        elif role == "assistant" or item.get("type") in ("function_call", "custom_tool_call"):
            answered, last_is_prompt = True, False
        elif role in ("user", "tool") or str(item.get("type", "")).endswith("_output"):
            last_is_prompt = False
    return {
        "turns": turns,
        "answered": answered,
        "last_is_prompt": last_is_prompt,
        "calls": _calls(api, items),
        # all of them: a client may send its environment first, the same for every
        # conversation (Codex, and each of its subagents), then the prompt
        "opening": "\n".join([api, system, *turns[:first]]),
        "continued": bool(body.get("previous_response_id")),
    }


def _response_items(value: object) -> list[dict[str, Any]]:
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return [i for i in value or () if isinstance(i, dict)] if isinstance(value, list) else []


def _text(value: object) -> str:
    """The text of a string or of a list of content blocks."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            str(b.get("text"))
            for b in value
            if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return ""


def _prompt_text(api: str, item: dict[str, Any]) -> str | None:
    """A user message's prompt text, or None when it only carries tool results."""
    content = item.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    kinds = ("text", "input_text") if api != "chat" else ("text",)
    texts = [b["text"] for b in content
             if isinstance(b, dict) and b.get("type") in kinds and isinstance(b.get("text"), str)]  # fmt: skip
    return "\n".join(texts) if texts else None


def _calls(api: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool calls the history holds that have a result: {id, tool, command, paths,
    failed, exit_code, error, turn: the ordinal of the user turn it was made in}."""
    made: dict[str, tuple[str, dict[str, Any]]] = {}
    turn_of: dict[str, int] = {}
    results: dict[str, tuple[str, bool]] = {}
    turn = -1
    for item in items:
        if item.get("role") == "user" and _prompt_text(api, item) is not None:
            turn += 1
        before = set(made)
        if api == "anthropic":
            content = item.get("content")
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    made[block["id"]] = (str(block.get("name") or ""), _object(block.get("input")))
                elif block.get("type") == "tool_result" and isinstance(
                    block.get("tool_use_id"), str
                ):
                    results[block["tool_use_id"]] = (_text(block.get("content")),
                                                     bool(block.get("is_error")))  # fmt: skip
        elif api == "responses":
            kind, call_id = item.get("type"), item.get("call_id")
            if not isinstance(call_id, str):
                continue
            if kind == "function_call":
                made[call_id] = (str(item.get("name") or ""), _arguments(item.get("arguments")))
            elif kind == "custom_tool_call":
                made[call_id] = (str(item.get("name") or ""), {"input": item.get("input")})
            elif kind in ("function_call_output", "custom_tool_call_output"):
                results[call_id] = (_text(item.get("output")), False)
        else:
            for call in item.get("tool_calls") or () if item.get("role") == "assistant" else ():
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict) and isinstance(call.get("id"), str):
                    made[call["id"]] = (str(function.get("name") or ""),
                                        _arguments(function.get("arguments")))  # fmt: skip
            if item.get("role") == "tool" and isinstance(item.get("tool_call_id"), str):
                results[item["tool_call_id"]] = (_text(item.get("content")), False)
        turn_of.update((call_id, turn) for call_id in made if call_id not in before)
    out = []
    for call_id, (name, given) in made.items():
        if call_id in results:
            output, is_error = results[call_id]
            out.append({**_neutral(call_id, name, given, output, is_error),
                        "turn": turn_of[call_id]})  # fmt: skip
    return out


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _arguments(value: object) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    try:
        parsed = json.loads(value) if isinstance(value, str) else None
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _neutral(
    call_id: str, name: str, given: dict[str, Any], output: str, is_error: bool
) -> dict[str, Any]:
    """One call as the ledger records it: its command (a shell tool's), the files an edit
    tool names, and whether it failed (the protocol's error flag, or an exit code)."""
    short = name.rsplit("__", 1)[-1].lower()
    command = None
    if short in SHELL_TOOLS:
        raw = given.get("command", given.get("cmd"))
        command = (
            " ".join(map(str, raw))
            if isinstance(raw, list)
            else raw
            if isinstance(raw, str)
            else None
        )
    paths: list[str] = []
    if short in EDIT_TOOLS:
        paths = [given[k] for k in PATH_KEYS if isinstance(given.get(k), str) and given[k]]
        patch = given.get("input") if isinstance(given.get("input"), str) else given.get("patch")
        if isinstance(patch, str):
            paths += shell.written_files(patch)  # apply_patch's headers
    said = shell.exit_code_after(output[:2000], shell.EXIT_PHRASES) if command else None
    exit_code = said[0] if said else None
    failed = bool(is_error or (exit_code not in (None, 0)))
    return {"id": call_id, "tool": name[:60], "command": command, "paths": paths,
            "failed": failed, "exit_code": exit_code,
            "error": output[-ERROR_CHARS:] if failed else None}  # fmt: skip


def inject(
    api: str, body: dict[str, Any], opening: str | None, packets: dict[int, str]
) -> dict[str, Any]:
    """`body` with the session packet (`opening`) and each user turn's packet (by the turn's
    ordinal) where the protocol allows a system block; the same packets give the same bytes."""
    out = dict(body)
    if api == "anthropic":
        if opening:
            system = out.get("system")
            blocks = [{"type": "text", "text": system}] if isinstance(system, str) and system else (
                list(system) if isinstance(system, list) else [])  # fmt: skip
            out["system"] = [*blocks, {"type": "text", "text": opening}]
        out["messages"] = _after_turns(api, out.get("messages") or [], packets)
    elif api == "responses":
        items = _response_items(out.get("input"))
        items = _after_turns(api, items, packets)
        if opening:
            items = [{"role": "developer", "content": opening}, *items]
        out["input"] = items
    else:
        messages = _after_turns(api, out.get("messages") or [], packets)
        if opening:
            lead = 0
            while (
                lead < len(messages)
                and isinstance(messages[lead], dict)
                and messages[lead].get("role") in ("system", "developer")
            ):
                lead += 1
            messages = [*messages[:lead], {"role": "system", "content": opening}, *messages[lead:]]
        out["messages"] = messages
    return out


def _after_turns(api: str, items: list[Any], packets: dict[int, str]) -> list[Any]:
    if not packets:
        return list(items)
    out, ordinal = [], -1
    for item in items:
        is_turn = (isinstance(item, dict) and item.get("role") == "user"
                   and _prompt_text(api, item) is not None)  # fmt: skip
        ordinal += is_turn
        said = packets.get(ordinal) if is_turn else None
        if said and api == "anthropic":
            content = item.get("content")
            blocks = (
                [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
            )
            out.append({**item, "content": [*blocks, {"type": "text", "text": said}]})
            continue
        out.append(item)
        if said:
            out.append({"role": "developer" if api == "responses" else "system", "content": said})
    return out


def answer_of(api: str, raw: bytes, streamed: bool) -> tuple[str, bool] | None:
    """(the assistant's text, whether it asked for tools) from an answer's bytes, JSON or
    server-sent events; None when they say neither (an error, a cut stream)."""
    try:
        if not streamed:
            return _final(api, json.loads(raw))
        return _streamed(api, raw.decode("utf-8", "replace"))
    except (ValueError, TypeError, AttributeError, KeyError, IndexError):
        return None


def _final(api: str, data: dict[str, Any]) -> tuple[str, bool] | None:
    if api == "anthropic":
        blocks = data.get("content") or []
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        return text, any(b.get("type") == "tool_use" for b in blocks)
    if api == "responses":
        items = data.get("output") or []
        text = "".join(c.get("text", "") for i in items if i.get("type") == "message"
                       for c in i.get("content") or () if c.get("type") == "output_text")  # fmt: skip
        tools = any(str(i.get("type", "")).endswith("_call") for i in items)
        return text, tools
    choice = (data.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    return str(message.get("content") or ""), bool(message.get("tool_calls"))


def _events(text: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        if line.startswith("data:"):
            payload = line[5:].strip()
            if payload and payload != "[DONE]":
                parsed = json.loads(payload)
                if isinstance(parsed, dict):
                    out.append(parsed)
    return out


def _streamed(api: str, text: str) -> tuple[str, bool] | None:
    events = _events(text)
    if not events:
        return None
    if api == "anthropic":
        said = "".join(e["delta"].get("text", "") for e in events
                       if e.get("type") == "content_block_delta")  # fmt: skip
        tools = any(e.get("type") == "content_block_start"
                    and (e.get("content_block") or {}).get("type") == "tool_use" for e in events)  # fmt: skip
        return said, tools
    if api == "responses":
        done = [e for e in events if e.get("type") == "response.completed"]
        return _final(api, done[-1]["response"]) if done else None
    said, tools = "", False
    for e in events:
        for choice in e.get("choices") or ():
            delta = choice.get("delta") or {}
            said += delta.get("content") or ""
            tools = (
                tools
                or bool(delta.get("tool_calls"))
                or choice.get("finish_reason") == "tool_calls"
            )
    return said, tools


def response_id(head: bytes) -> str | None:
    """The id a Responses answer gives itself (`resp_...`), from its first bytes (the JSON
    object's or the `response.created` event's), or None."""
    at = head.find(b'"resp_')
    if at < 0:
        return None
    end = head.find(b'"', at + 1)
    if end < 0:
        return None
    found = head[at + 1 : end].decode("ascii", "replace")
    return found if found.replace("_", "").replace("-", "").isalnum() else None
