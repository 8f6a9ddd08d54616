"""PostCompact: the client's summary of the compacted session, checked against what the
session recorded (`waymark.handoff.compaction`); what it no longer mentions is said back as
context (Claude Code passes it to the model with the next request) or, where the client takes
no context here, with the next prompt's packet.

python -I -c "from waymark.hooks.post_compact import main;main()" claude-code|codex
"""

from __future__ import annotations

from .runtime import Context, context_output, run

NAME = "PostCompact"


def handle(ctx: Context) -> str | None:
    event = ctx.event
    summary = event.summary
    if not summary or not ctx.capturing() or not ctx.records:
        return None
    from waymark.handoff.compaction import note_summary

    if not note_summary(ctx.conn, ctx.project, event.session_id, summary):
        return None
    if event.client != "claude-code":
        return None  # the next prompt's packet says it
    from waymark.packets.compaction import dropped_packet

    text = dropped_packet(ctx.conn, ctx.project, event.session_id, NAME)
    return context_output(NAME, text) if text else None


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
