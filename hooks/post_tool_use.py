"""PostToolUse: note files an edit tool changed and commands that failed; nothing else.

python -I -m waymark.hooks.post_tool_use claude-code|codex
"""

from __future__ import annotations

from .runtime import Context, run

NAME = "PostToolUse"


def handle(ctx: Context) -> None:
    if not ctx.event.tool_name or not ctx.capturing():
        return
    from waymark.handoff.ledger import record_tool

    record_tool(ctx.conn, ctx.project, ctx.event)


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
