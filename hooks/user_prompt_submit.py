"""UserPromptSubmit: the few memories that matter for this prompt (the packet is
`waymark.packets.prompt`). The prompt is never stored.

    python -I -c "from waymark.hooks.user_prompt_submit import main;main()" claude-code|codex
"""

from __future__ import annotations

import os

from .runtime import Context, context_output, run, send_warm, warm_output, warm_reply

NAME = "UserPromptSubmit"


def handle(ctx: Context) -> str | None:
    event = ctx.event
    prompt = (event.prompt or "").strip()
    if not prompt or event.agent_id:
        return None  # a subagent's task: its SubagentStart packet is what it gets
    lowered = prompt.lower()  # the exact rules are loaded only for a prompt with a tag
    if "#no-" in lowered:
        from waymark.packets.prompt import asks_no_capture, asks_no_recall

        quiet, silent = asks_no_capture(prompt), asks_no_recall(prompt)
    else:
        quiet, silent = False, False
    from waymark.base.markers import quiet_turn

    quiet_turn(event.session_id, quiet)  # this turn records nothing, or the last one is over
    if silent:
        return None  # the user asked for nothing: no server asked, no store opened
    # The warm process makes the packet when one runs (everything loaded, the model too):
    # one round trip. Without its answer the hook makes the packet itself. A server that
    # refused at once (an older one, without this op) is asked for the prompt's neighbours
    # alone; one that took the request and did not answer in time is busy and is not asked
    # again (that would be a second deadline).
    pending = send_warm(ctx, "prompt", prompt=prompt)
    said = pending.reply() if pending is not None else None
    reply = warm_reply(ctx, "prompt", said)
    if reply is not None:
        return warm_output(NAME, reply)
    from waymark.packets import prompt as packets

    neighbours = None
    if pending is None or said is not None:  # none there (one may start), or it refused
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
