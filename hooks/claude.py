"""Claude Code's hook payloads, normalised; and the output forms it accepts."""

from __future__ import annotations

from .event import Event, from_payload


def normalise(data: dict, name: str) -> Event:
    tool_response = data.get("tool_response")
    failed = None
    exit_code = None
    error = data.get("error") if isinstance(data.get("error"), str) else None
    if name == "PostToolUseFailure":
        failed = True
        from waymark.base.shell import exit_code_after

        found = exit_code_after(error or "", ("exit code ",), at_start=True)
        exit_code = found[0] if found and found[0] >= 0 else None
        if found and found[0] >= 0 and error:
            error = error[found[1] :].lstrip("\n")
    elif isinstance(tool_response, dict) and name == "PostToolUse":
        failed = bool(tool_response.get("interrupted"))  # a failed call is PostToolUseFailure
    return from_payload("claude-code", data, name, failed=failed, exit_code=exit_code, error=error)
