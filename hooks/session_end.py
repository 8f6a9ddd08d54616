"""SessionEnd: close the ledger (end time, reason, HEAD) well within the client's budget
(Claude Code gives all SessionEnd hooks 1.5 s; Codex 3 s).

    python -I -m waymark.hooks.session_end claude-code|codex
"""

from __future__ import annotations

from waymark.base import clock
from waymark.storage import connection as db

from .runtime import Context, run

NAME = "SessionEnd"


def handle(ctx: Context) -> None:
    if not ctx.capturing():
        return
    from waymark.handoff import ledger

    from .session_start import _head

    event, conn, project = ctx.event, ctx.conn, ctx.project
    ledger.mark_if_unsaved(conn, project, event, "ended with changes and no checkpoint")
    with db.write(conn):
        conn.execute(
            "UPDATE sessions SET ended_at = ?, end_reason = ?, git_head_end = ? WHERE id = ?",
            (
                clock.now(),
                str(event.reason or "other")[:40],
                _head(project.files),
                event.session_id,
            ),
        )


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
