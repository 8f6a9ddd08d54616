"""PostToolUse: note files an edit tool changed, commands that failed, and the call as a step
of the session's work map; where the project opted in (`[output]`), keep a long shell output
out of the model's context (`waymark.handoff.outputs`). When a command failed (Claude Code's
PostToolUseFailure, Codex's PostToolUse with a non-zero exit), what fixed the same error
before (`waymark.packets.failure`), as context.

python -I -c "from waymark.hooks.post_tool_use import main;main()" claude-code|codex
"""

from __future__ import annotations

import os

from .event import EDIT_TOOLS, Event, edited_paths, shell_command
from .runtime import Context, context_output, log, run, send_warm, warm_output, warm_reply

NAME = "PostToolUse"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.warm import Pending


# How long a hook that found its call recorded by the warm server (which took the request in
# time but answered late) waits on for that server's packet: it comes on the same connection.
LATE_S = 3.0


def handle(ctx: Context) -> str | None:
    event = ctx.event
    if not event.tool_name:
        return None
    given = {
        "paths": edited_paths(event), "command": shell_command(event), "failed": event.failed,
        "tool_name": event.tool_name, "exit_code": event.exit_code, "error": event.error,
        "cwd": event.cwd, "looked_at": _looked_at(event),
    }  # fmt: skip
    late = None
    if ctx.key and not _long_shell_output(event):  # trimming an output stays in the hook
        # A request that reached the server carries the event's delivery key on to the local
        # fallback, so a reply that missed the deadline never means the call is recorded twice.
        pending = send_warm(ctx, "tool_result", given={**given, "key": ctx.key})
        if pending is not None:
            reply = warm_reply(ctx, "tool_result", pending.reply(keep=True))
            if reply is not None:
                return warm_output(event.name, reply)
            given["key"] = ctx.key
            late = pending if pending.open else None  # no reply yet: the server may be at it
    try:
        return _record(ctx, given, late)
    finally:
        if late is not None:
            late.close()


def _record(ctx: Context, given: dict, late: Pending | None) -> str | None:
    """The call recorded here (the server did not answer in time); a failed command's packet.
    When the server recorded it after all (it took the request in time and is still at it),
    its packet is what this failure shows: `late` is the connection it comes on."""
    event = ctx.event
    if not ctx.capturing() or not ctx.records:
        return None  # read-only: this session or project is never recorded
    from waymark.handoff.ledger import record_tool

    try:
        kept = record_tool(ctx.conn, ctx.project, event.session_id, event.client, **given)
    except BaseException as exc:
        from . import spool

        if not spool.busy(exc):
            raise
        spool.keep(event, given)  # locked: the next hook records it (nothing is lost)
        log(NAME, f"database locked: the event waits in the spool ({exc!r})")
        return None
    if not kept and late is not None and event.failed and given["command"]:
        reply = warm_reply(ctx, "tool_result", late.later(LATE_S))
        log(event.name, "the warm server recorded the call late; its packet "
                  + ("came" if reply is not None else f"did not come in {LATE_S:g} s"))  # fmt: skip
        return warm_output(event.name, reply) if reply is not None else None
    if kept and event.failed and given["command"]:
        return _failure_context(ctx)
    if kept and _long_shell_output(event):
        return _trimmed(ctx)
    if kept and not event.agent_id:  # a lead's call: what its subagents saved, if any
        from waymark.storage.tasks import waiting_reports  # loaded already by the ledger

        if waiting_reports(ctx.conn, event.session_id):  # the packet's modules only then
            from waymark.packets.agents import from_subagents

            text = from_subagents(ctx.conn, event.session_id)
            return context_output(event.name, text) if text else None
    return None


def _failure_context(ctx: Context) -> str | None:
    from waymark.packets.failure import failure_packet

    event = ctx.event
    text = failure_packet(
        ctx.conn, ctx.project, event.session_id, event.client, hook=event.name,
        agent_id=event.agent_id,
    )  # fmt: skip
    return context_output(event.name, text) if text else None


def _long_shell_output(event: Event) -> bool:
    """A Claude Code shell result with a stream longer than any threshold allows: only
    Claude Code lets a hook replace what the model sees (`updatedToolOutput`)."""
    response = event.tool_response
    if event.client != "claude-code" or event.name != NAME or not isinstance(response, dict):
        return False
    if shell_command(event) is None:
        return False
    return any(len(response.get(k) or "") > MIN_TRIM for k in ("stdout", "stderr"))


MIN_TRIM = 1000


def _trimmed(ctx: Context) -> str | None:
    from waymark.base import jsonlite as json
    from waymark.handoff import outputs

    event = ctx.event
    rules = outputs.rules_for(event.cwd, ctx.project.files)
    if rules is None:
        return None
    updated = outputs.trim(
        ctx.conn, ctx.project, event.session_id, event.tool_name, shell_command(event),
        event.tool_response, rules,
    )  # fmt: skip
    if updated is None:
        return None
    return json.dumps({"hookSpecificOutput": {"hookEventName": NAME, "updatedToolOutput": updated}})


def _looked_at(event: Event) -> str | None:
    """The file a read-like tool names (Read's file_path), as an absolute path."""
    if event.tool_name in EDIT_TOOLS:
        return None
    data = event.tool_input or {}
    path = data.get("file_path") or data.get("notebook_path")
    if not isinstance(path, str) or not path:
        return None
    return path if os.path.isabs(path) else os.path.join(event.cwd or os.getcwd(), path)


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
