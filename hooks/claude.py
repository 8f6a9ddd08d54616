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
        import re  # only a failure pays for it (~6 ms in a hook)

        match = re.match(r"^Exit code (\d+)", error or "")
        exit_code = int(match.group(1)) if match else None
        if match and error:
            error = error[match.end() :].lstrip("\n")
    elif isinstance(tool_response, dict) and name == "PostToolUse":
        failed = bool(tool_response.get("interrupted"))  # a failed call is PostToolUseFailure
    return from_payload("claude-code", data, name, failed=failed, exit_code=exit_code, error=error)
