"""PreCompact: compaction with unsaved work leaves a "handoff needed" marker.

python -I -c "from waymark.hooks.pre_compact import main;main()" claude-code|codex
"""

from __future__ import annotations

from .runtime import Context, run

NAME = "PreCompact"


def handle(ctx: Context) -> None:
    if not ctx.capturing() or not ctx.records:
        return
    from waymark.handoff import ledger

    event = ctx.event
    ledger.mark_if_unsaved(
        ctx.conn,
        ctx.project,
        event.session_id,
        event.client,
        "context compacted with changes and no checkpoint",
    )


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
