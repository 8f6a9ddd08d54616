"""Stop: ask once for a handoff when the session changed files without saving a checkpoint
(the rule is `waymark.handoff.stop`).

    python -I -c "from waymark.hooks.stop import main;main()" claude-code|codex
"""

from __future__ import annotations

from .runtime import Context, block_output, log, run

NAME = "Stop"


def handle(ctx: Context) -> str | None:
    if ctx.event.agent_id:
        return None  # a subagent never asks: its edits are the parent session's to hand off
    if not ctx.capturing() or not ctx.records:
        return None  # nothing recorded, nothing to hand off
    from waymark.handoff.closing import turn_ended
    from waymark.handoff.stop import decide

    event = ctx.event
    for problem in turn_ended(ctx.conn, ctx.project, event.session_id, event.cwd,
                              event.last_message):  # fmt: skip
        log(NAME, problem)  # the summary and measured use are extra: the decision still runs
    why = decide(
        ctx.conn,
        ctx.project,
        event.session_id,
        event.client,
        stop_hook_active=bool(event.stop_hook_active),
    )
    if why:  # work without a handoff: the code map catches up, in the background
        from waymark.codemap.freshness import freshen

        said = freshen(ctx.conn, ctx.project, "stop")
        if said.startswith("failed"):
            log(NAME, f"code map refresh {said}")
    return block_output(why) if why else None


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
