"""UserPromptSubmit: the few memories that matter for this prompt (the packet is
`waymark.packets.prompt`). The prompt is never stored.

    python -I -c "from waymark.hooks.user_prompt_submit import main;main()" claude-code|codex
"""

from __future__ import annotations

import os

from .runtime import Context, ask_warm, context_output, run, warm_output

NAME = "UserPromptSubmit"


def handle(ctx: Context) -> str | None:
    event = ctx.event
    prompt = (event.prompt or "").strip()
    if not prompt or event.agent_id:
        return None  # a subagent's task: its SubagentStart packet is what it gets
    # The warm MCP server makes the packet when it runs (everything loaded, the model too);
    # without an answer by the deadline the hook makes it itself.
    _, reply = ask_warm(ctx, "prompt", prompt=prompt)
    if reply is not None:
        return warm_output(NAME, reply)
    from waymark.packets import prompt as packets

    # Asked before the database is opened: the server embeds while this process works.
    neighbours = packets.ask_neighbours(prompt, event.cwd or os.getcwd())
    if not ctx.capturing():
        return None
    text = packets.for_prompt(ctx.conn, ctx.project, event.session_id, event.client, prompt,
                              neighbours, record=ctx.records)  # fmt: skip
    return context_output(NAME, text) if text else None


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
