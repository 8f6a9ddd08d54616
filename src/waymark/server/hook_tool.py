"""`hook`: a prompt hook answered inside the server, for Claude Code's `mcp_tool` hooks.

Claude Code (2.1.118 and later) can run a hook as a call to a connected MCP server instead
of a process: `{"type": "mcp_tool", "server": "waymark", "tool": "hook", "input": {...}}`
with `${prompt}`, `${prompt_id}`, `${session_id}`, `${cwd}` and `${agent_id}` filled in from
the hook's input (`installers/commands.TOOL_HOOK_INPUT`). The tool answers what the
UserPromptSubmit command hook prints (the same packet, made by the code the
warm socket runs), so the client applies it as it would a command's output. The command hook
may be registered beside it as the fallback: both mark the prompt (`markers.prompt_key`)
and only the first to arrive answers, so a session whose server is not connected still gets
its packet from the process, and one whose server is gets it without waiting for one.

Not advertised in `tools/list` (`sdk.HIDDEN`): no model needs it and every listed tool costs
every model request tokens; the client calls it by name.
"""

from __future__ import annotations

import time

from mcp.server.mcpserver import Context

from waymark.base import hookruns, markers
from waymark.base.hookout import context_output
from waymark.errors import InvalidArgument
from waymark.server.state import state_of, tool_errors

EVENTS = ("UserPromptSubmit",)
CLIENT = "claude-code"  # the one client that runs hooks as MCP calls


@tool_errors
def hook(
    ctx: Context,
    event: str,
    prompt: str = "",
    session_id: str = "",
    prompt_id: str = "",
    cwd: str = "",
    agent_id: str = "",
) -> str:
    """A hook's output for `event`, as the command hook prints it (empty: nothing to add)."""
    if event not in EVENTS:
        raise InvalidArgument(f"the hook tool answers {', '.join(EVENTS)}, not {event!r}")
    started = time.perf_counter()
    outcome = "error"
    try:
        if not markers.first_delivery(markers.prompt_key(session_id, prompt_id, prompt)):
            outcome = "repeat"  # the command hook (or another server) came first
            return ""
        request = {"op": "prompt", "prompt": prompt, "event": {
            "cwd": cwd, "session_id": session_id, "client": CLIENT, "name": event,
            "agent_id": agent_id or None}}  # fmt: skip
        reply = state_of(ctx).answer_warm(request)
        if not reply.get("ok"):
            raise InvalidArgument(str(reply.get("error")))
        outcome = "ok"
        text = reply.get("text")
        return context_output(event, text) if text else ""
    finally:
        hookruns.append(CLIENT, event, outcome, 1000 * (time.perf_counter() - started))
