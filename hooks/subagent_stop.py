"""SubagentStop: what the subagent saved to the task its lead gave it waits for the lead's
next packet (the result of its Agent tool call, or its next prompt), and the task is the
lead's again. Never asks for a handoff: a subagent's work is its lead's to hand off.

    python -I -c "from waymark.hooks.subagent_stop import main;main()" claude-code|codex
"""

from __future__ import annotations

from .runtime import Context, run

NAME = "SubagentStop"


def handle(ctx: Context) -> None:
    event = ctx.event
    if not event.agent_id or not ctx.capturing() or not ctx.records:
        return
    from waymark.storage.tasks import bound_to

    if not bound_to(ctx.conn, event.session_id, event.agent_id):  # most subagents: no task
        return
    from waymark.handoff.tasks import subagent_stopped

    subagent_stopped(ctx.conn, ctx.project, event.session_id, event.agent_id)


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
