"""SessionEnd: close the ledger (end time, reason, HEAD) well within the client's budget
(Claude Code gives all SessionEnd hooks 1.5 s; Codex 3 s); the extras (measured use, skills,
insights from the error log) run after, in a process of their own nothing waits for.

    python -I -c "from waymark.hooks.session_end import main;main()" claude-code|codex
"""

from __future__ import annotations

from .runtime import Context, log, run

NAME = "SessionEnd"


def handle(ctx: Context) -> None:
    if not ctx.capturing() or not ctx.records:
        return
    import os

    from waymark.handoff.closing import session_ended

    event = ctx.event
    for problem in session_ended(ctx.conn, ctx.project, event.session_id, event.client,
                                 str(event.reason or "other"), event.last_message,
                                 cwd=event.cwd or os.getcwd()):  # fmt: skip
        log(NAME, problem)


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
