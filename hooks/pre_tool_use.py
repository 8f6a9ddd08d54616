"""PreToolUse: before an edit or a shell command, what Waymark knows about that file or
command and the session has not seen (the packet is `waymark.packets.tool`). It never blocks,
unless the project's `.waymark.toml` `[guard]` protects the path or command: then it asks for
confirmation the client's way (Claude Code: `permissionDecision: "ask"`; Codex, which has no
"ask" for hooks, is told no once with the reason and let through when the call is repeated).

    python -I -c "from waymark.hooks.pre_tool_use import main;main()" claude-code|codex
"""

from __future__ import annotations

import os

from .event import edited_paths, shell_command
from .runtime import Context, ask_warm, context_output, run, warm_output

NAME = "PreToolUse"


def handle(ctx: Context) -> str | None:
    event = ctx.event
    paths = edited_paths(event)
    command = shell_command(event)
    if not paths and not command:
        return None  # a read, a search, an MCP call: nothing to say, nothing opened
    # The warm MCP server makes the packet when it runs; without an answer by the deadline
    # the hook makes it itself.
    _, reply = ask_warm(ctx, "tool", paths=paths, command=command)
    if reply is not None:
        ask = reply.get("ask")
        text = reply.get("text") if isinstance(reply.get("text"), str) else None
        if isinstance(ask, list) and len(ask) == 2 and all(isinstance(a, str) for a in ask):
            return _ask(event.client, event.session_id, ask[0], ask[1], text)
        return warm_output(NAME, reply)
    if not ctx.capturing():
        return None
    from waymark.packets.tool import tool_packet

    text, ask = tool_packet(
        ctx.conn,
        ctx.project,
        event.session_id,
        event.client,
        paths=paths,
        command=command,
        cwd=event.cwd or os.getcwd(),
        record=ctx.records,
        agent_id=event.agent_id,
    )
    if command and ctx.records:  # after the packet: what it showed came before this call
        from waymark.handoff.ledger import note_shell_writes

        note_shell_writes(ctx.conn, ctx.project, event.session_id, event.client, command,
                          event.cwd)  # fmt: skip
    if ask is not None:
        return _ask(event.client, event.session_id, ask[0], ask[1], text)
    return context_output(NAME, text) if text else None


def _ask(client: str, session_id: str, key: str, reason: str, text: str | None) -> str | None:
    from waymark.base import jsonlite as json

    if client != "codex":
        out: dict = {"hookEventName": NAME, "permissionDecision": "ask"}
        out["permissionDecisionReason"] = reason
        if text:
            out["additionalContext"] = text
        return json.dumps({"hookSpecificOutput": out})
    if _confirmed_before(session_id, key):
        return context_output(NAME, text) if text else None
    return json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": NAME,
                "permissionDecision": "deny",
                "permissionDecisionReason": reason
                + " If the user agrees, make the same call again: Waymark lets it through.",
            }
        }
    )


def _confirmed_before(session_id: str, key: str) -> bool:
    """True when this session was already stopped once for `key` (a marker file in the data
    home, so a read-only session needs no database write); marks it otherwise."""
    import hashlib

    from waymark.base.markers import mark

    digest = hashlib.sha256(f"{session_id}\0{key}".encode()).hexdigest()[:32]
    return mark("guard", digest, GUARD_MARKER_DAYS * 86400, sweep_each=True)


GUARD_MARKER_DAYS = 7  # a confirmation outlives any session worth remembering it for


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
