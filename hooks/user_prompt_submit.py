"""UserPromptSubmit: the few memories that matter for this prompt (the packet is
`waymark.packets.prompt`). The prompt is never stored.

    python -I -c "from waymark.hooks.user_prompt_submit import main;main()" claude-code|codex
"""

from __future__ import annotations

import os

from .runtime import Context, context_output, run

NAME = "UserPromptSubmit"


def handle(ctx: Context) -> str | None:
    event = ctx.event
    prompt = (event.prompt or "").strip()
    if not prompt or event.agent_id:
        return None  # a subagent's task: its SubagentStart packet is what it gets
    from waymark.packets import prompt as packets

    # Asked before the database is opened: the server embeds while this process works.
    neighbours = packets.ask_neighbours(prompt, event.cwd or os.getcwd())
    if not ctx.capturing():
        return None
    text = packets.prompt_packet(
        ctx.conn,
        ctx.project,
        event.session_id,
        event.client,
        prompt,
        neighbours,
        record=ctx.records,
    )
    if ctx.records:  # after a compaction whose summary dropped facts (Codex: said here)
        from waymark.storage.sessions import compact_dropped

        if compact_dropped(ctx.conn, event.session_id):
            from waymark.packets.compaction import dropped_packet

            dropped = dropped_packet(ctx.conn, ctx.project, event.session_id, NAME)
            text = "\n".join(t for t in (text, dropped) if t) or None
    return context_output(NAME, text) if text else None


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
