"""One hook event, whichever client sent it.

Each client's JSON is normalised once (`claude.py`, `codex.py`) into this type; everything
after that is client-free. A namedtuple: hooks cannot afford `dataclasses`.
"""

from __future__ import annotations

from waymark.base.record import record

CLIENTS = ("claude-code", "codex")

_Fields = record(
    "_Fields",
    "client name session_id cwd source prompt tool_name tool_input tool_response failed"
    " exit_code error stop_hook_active reason agent_id agent_type last_message summary",
    defaults=(
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
    ),
)


class Event(_Fields):
    """`name` is the hook event (SessionStart, ...); `failed` is True when the tool call
    failed, None when the client does not say; `error` is the failure text when known.
    `agent_id` is set inside a subagent (both clients send the parent's `session_id`);
    `last_message` is the assistant's last message at Stop (both clients send it);
    `summary` the client's summary of a compacted session (Claude Code's PostCompact)."""

    __slots__ = ()


_ID_CHARS = frozenset("0123456789abcdefABCDEF-")


def stored_id(value: str) -> str:
    """An id from the payload as it may be stored: the clients send UUIDs, and a word of at
    most 12 letters and digits is shorter than anything the redactor flags (kept as they are,
    at no cost: the redactor brings `re`); anything else goes through the redactor first, as
    every stored field does, since an id keys rows that backups and exports carry."""
    if not value or set(value) <= _ID_CHARS or (len(value) <= 12 and value.isalnum()):
        return value
    from waymark.base.redact import scrub

    return scrub(value)[0]


def from_payload(
    client: str,
    data: dict,
    name: str,
    *,
    failed: bool | None,
    exit_code: int | None,
    error: object,
) -> Event:
    """The fields both clients name alike; each client module works out the failure."""
    tool_input = data.get("tool_input")
    return Event(
        client=client,
        name=data.get("hook_event_name") or name,
        session_id=stored_id(str(data.get("session_id") or "")),
        cwd=data.get("cwd"),
        source=data.get("source"),
        prompt=data.get("prompt"),
        tool_name=data.get("tool_name"),
        tool_input=tool_input if isinstance(tool_input, dict) else None,
        tool_response=data.get("tool_response"),
        failed=failed,
        exit_code=exit_code,
        error=error if isinstance(error, str) else None,
        stop_hook_active=bool(data.get("stop_hook_active")),
        reason=data.get("reason") or data.get("trigger"),
        agent_id=stored_id(str(data["agent_id"])) if data.get("agent_id") else None,
        agent_type=str(data["agent_type"]) if data.get("agent_type") else None,
        last_message=last if isinstance(last := data.get("last_assistant_message"), str) else None,
        summary=said if isinstance(said := data.get("compact_summary"), str) else None,
    )


def shell_command(event: Event) -> str | None:
    """The command of a shell tool call, whichever name the client gives the tool."""
    if event.tool_name in ("Bash", "shell", "exec_command", "shell_command", "local_shell"):
        value = (event.tool_input or {}).get("command") or (event.tool_input or {}).get("cmd")
        if isinstance(value, list):
            value = " ".join(str(v) for v in value)
        return value if isinstance(value, str) else None
    return None


EDIT_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit", "apply_patch")


def edited_paths(event: Event) -> list[str]:
    """Files an edit tool says it changed (absolute or relative, as given)."""
    if event.tool_name not in EDIT_TOOLS:
        return []
    data = event.tool_input or {}
    paths = [data.get(k) for k in ("file_path", "notebook_path", "path")]
    if event.tool_name == "apply_patch":
        patch = data.get("input") or data.get("patch") or data.get("command") or ""
        if isinstance(patch, str):
            from waymark.base.shell import written_files  # its patch headers

            paths += written_files(patch)
    return [p for p in paths if isinstance(p, str) and p]
