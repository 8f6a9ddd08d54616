"""Codex's hook payloads, normalised; and the output forms it accepts.

Codex rejects unknown keys in hook output, and its Stop output must be JSON or nothing.
It reports the shell tool as `Bash` and fires PostToolUse for a failed command too, with
the output as a plain string and no exit code, so a failure is known only when the
response says so.
"""

from __future__ import annotations

from .event import Event, from_payload

_EXIT_PATTERN = r"(?:exit code|exited with code|Exit code:?)\s*(-?\d+)"


def normalise(data: dict, name: str) -> Event:
    response = data.get("tool_response")
    failed, exit_code, error = None, None, None
    if isinstance(response, dict):
        code = response.get("exit_code", response.get("exitCode"))
        if isinstance(code, int):
            exit_code, failed = code, code != 0
            error = response.get("stderr") or response.get("output")
    elif isinstance(response, str):
        tail = response[-2000:]
        match = None
        if "code" in tail.lower():  # every pattern says "code": most outputs skip `re` (~6 ms)
            import re

            match = re.search(_EXIT_PATTERN, tail, re.IGNORECASE)
        if match and match.group(1) != "0":
            exit_code, failed, error = int(match.group(1)), True, response
    return from_payload("codex", data, name, failed=failed, exit_code=exit_code, error=error)
