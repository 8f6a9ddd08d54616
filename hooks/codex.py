"""Codex's hook payloads, normalised; and the output forms it accepts.

Codex rejects unknown keys in hook output, and its Stop output must be JSON or nothing.
It reports the shell tool as `Bash` and fires PostToolUse for a failed command too, with
the output as a plain string and no exit code (0.171). The exit code is in the session's
rollout file, written before the hook runs: its last 256 KB are searched for the call's
completed item, so a failure is known without parsing the output.
"""

from __future__ import annotations

from .event import Event, from_payload


def normalise(data: dict, name: str) -> Event:
    response = data.get("tool_response")
    failed, exit_code, error = None, None, None
    if isinstance(response, dict):
        code = response.get("exit_code", response.get("exitCode"))
        if isinstance(code, int):
            exit_code, failed = code, code != 0
            error = response.get("stderr") or response.get("output")
    elif isinstance(response, str):
        from waymark.base.shell import EXIT_PHRASES, exit_code_after

        found = exit_code_after(response[-2000:], EXIT_PHRASES)
        if found and found[0] != 0:
            exit_code, failed, error = found[0], True, response
        elif name == "PostToolUse" and data.get("tool_name") == "Bash":
            exit_code = rollout_exit_code(data.get("transcript_path"), data.get("tool_use_id"))
            if exit_code is not None:
                failed = exit_code != 0
                error = response if failed else None
    return from_payload("codex", data, name, failed=failed, exit_code=exit_code, error=error)


ROLLOUT_TAIL = 256 * 1024


def rollout_exit_code(path: object, call_id: object) -> int | None:
    """The exit code Codex recorded for the shell call `call_id`, or None when not found."""
    if not isinstance(path, str) or not isinstance(call_id, str) or not call_id:
        return None
    from waymark.base.files import tail_bytes

    tail = tail_bytes(path, ROLLOUT_TAIL)
    if tail is None:
        return None
    key = call_id.encode()
    for line in reversed(tail.split(b"\n")):
        if key in line and b'"exit_code"' in line:
            from waymark.base import jsonlite as json

            try:
                item = json.loads(line)["payload"]["item"]
            except (ValueError, KeyError, TypeError):
                continue
            code = item.get("exit_code") if isinstance(item, dict) else None
            if isinstance(code, int) and item.get("id") == call_id:
                return code
    return None
