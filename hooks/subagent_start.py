"""SubagentStart: a subagent's small packet, the active checkpoint's next action and the
rules (with the memories written for its `agent_type`), or nothing (`waymark config
packet.subagent none`); a task its lead gave to the next subagent of its type (`assign` to
`subagent:TYPE`) is now its own, and its packet starts from it. Both clients fire it with the
parent's session id and the subagent's `agent_id`; what the subagent edits counts for the
parent's handoff, and a subagent's stop never asks for one (SubagentStop reports to the lead).

    python -I -c "from waymark.hooks.subagent_start import main;main()" claude-code|codex
"""

from __future__ import annotations

from .runtime import Context, context_output, run

NAME = "SubagentStart"


def handle(ctx: Context) -> str | None:
    event = ctx.event
    if not ctx.capturing():
        return None
    from waymark.packets.session_start import subagent_packet

    given = None
    if ctx.records and event.agent_id and event.agent_type:
        from waymark.handoff.tasks import subagent_started

        given = subagent_started(ctx.conn, ctx.project, event.session_id, event.agent_id,
                                 event.agent_type)  # fmt: skip
    text = subagent_packet(
        ctx.conn,
        ctx.project,
        event.session_id,
        event.client,
        event.agent_id or "subagent",
        agent_type=event.agent_type,
        record=ctx.records,
        given=given,
    )
    return context_output(NAME, text) if text else None


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
