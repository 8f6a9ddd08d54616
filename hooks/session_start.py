"""SessionStart: the project's memory up front (the packet is `waymark.packets.session_start`).

python -I -c "from waymark.hooks.session_start import main;main()" claude-code|codex
"""

from __future__ import annotations

from .runtime import Context, context_output, run

NAME = "SessionStart"


def handle(ctx: Context) -> str | None:
    if not ctx.capturing():
        return None
    from waymark.packets.session_start import start_session

    event = ctx.event
    text = start_session(
        ctx.conn, ctx.project, event.session_id, event.client, event.source, record=ctx.records
    )
    return context_output(NAME, text) if text else None


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
