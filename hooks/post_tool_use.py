"""PostToolUse: note files an edit tool changed and commands that failed; nothing else.

python -I -m waymark.hooks.post_tool_use claude-code|codex
"""

from __future__ import annotations

from .event import edited_paths, shell_command
from .runtime import Context, run

NAME = "PostToolUse"


def handle(ctx: Context) -> None:
    event = ctx.event
    if not event.tool_name or not ctx.capturing() or not ctx.records:
        return  # read-only: this session or project is never recorded
    from waymark.handoff.ledger import record_tool

    record_tool(
        ctx.conn,
        ctx.project,
        event.session_id,
        event.client,
        paths=edited_paths(event),
        command=shell_command(event),
        failed=event.failed,
        tool_name=event.tool_name,
        exit_code=event.exit_code,
        error=event.error,
        cwd=event.cwd,
    )


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
