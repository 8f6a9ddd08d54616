"""SessionStart: the project's memory up front (the packet is `waymark.packets.session_start`).

python -I -c "from waymark.hooks.session_start import main;main()" claude-code|codex
"""

from __future__ import annotations

import os

from .runtime import Context, context_output, log, run, send_warm, warm_output, warm_reply

NAME = "SessionStart"
LATE_S = 3.0  # a warm server that took the start, still at it: waited for this much more


def handle(ctx: Context) -> str | None:
    event = ctx.event
    # The warm MCP server makes the packet when one runs (a second session, or a clear,
    # compact or resume in this one); without one, or a refusal, the hook makes it.
    reply = _warm(ctx)
    if reply is not None:
        for note in reply.get("notes") or ():
            log(NAME, str(note))
        return warm_output(NAME, reply)
    started = _begin_status(event.cwd)  # git works while the store is opened
    if not ctx.capturing():
        return None
    from waymark.packets.session_start import session_start

    text = session_start(
        ctx.conn, ctx.project, event.session_id, event.client, event.source,
        event.cwd or os.getcwd(), record=ctx.records, started=started,
        note=lambda said: log(NAME, said),
    )  # fmt: skip
    return context_output(NAME, text) if text else None


def _warm(ctx: Context) -> dict | None:
    """The warm server's answer, or None for the hook to do the work. A server takes the
    request by the deadline or refuses it; one that took it and is still at it (waiting for
    the lock, say) is waited for up to LATE_S more, so a session is never opened twice."""
    pending = send_warm(ctx, "session_start", source=ctx.event.source)
    if pending is None:
        return None
    reply = warm_reply(ctx, "session_start", pending.reply(keep=True))
    if reply is None and pending.open:
        reply = warm_reply(ctx, "session_start", pending.later(LATE_S))
        if reply is None:
            log(NAME, f"the warm server took the start and did not answer in {LATE_S:g} s")
    return reply


def _begin_status(cwd: str | None) -> tuple[str, object] | None:
    """`git status` of `cwd`'s working tree begun now (`begin_status`), when there is a store:
    in a first session capturing() decides first."""
    from waymark import home

    if not os.path.exists(home.db_path()):
        return None
    from waymark.packets.session_start import begin_status

    return begin_status(cwd or os.getcwd())


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
