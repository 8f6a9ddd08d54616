"""Stop: no session that changed the project ends without a handoff, and none loops.

When the session changed files and no checkpoint revision was saved after the last change,
block once with a short reason asking for Waymark's `checkpoint` tool. When the client says
this Stop already follows a block (`stop_hook_active`), or the agent was already asked about
this same unsaved state, never block: record a "handoff needed" marker instead, which the
next SessionStart shows and only a real checkpoint save clears.

    python -I -m waymark.hooks.stop claude-code|codex
"""

from __future__ import annotations

from waymark.storage import connection as db

from .runtime import Context, block_output, run

NAME = "Stop"


def handle(ctx: Context) -> str | None:
    if not ctx.capturing():
        return None
    from waymark.handoff import ledger

    event, conn, project = ctx.event, ctx.conn, ctx.project
    since = ledger.settle(conn, project, event)
    if since is None:
        return None
    asked = conn.execute(
        "SELECT asked_for FROM sessions WHERE id = ?", (event.session_id,)
    ).fetchone()
    if event.stop_hook_active or (asked and asked[0] == since):
        ledger.mark_handoff_needed(
            conn, project, event.session_id, "stopped with changes and no checkpoint"
        )
        return None
    with db.write(conn):
        conn.execute("UPDATE sessions SET asked_for = ? WHERE id = ?", (since, event.session_id))
    return block_output(reason(ctx))


def reason(ctx: Context) -> str:
    from waymark.handoff.checkpoints import active
    from waymark.handoff.ledger import files_changed

    files = files_changed(ctx.conn, ctx.event.session_id, 6)
    current = active(ctx.conn, ctx.project)
    how = (
        f'operation "revise" with checkpoint_id "{current.id}" and expected_revision_id '
        f'"{current.revision.id}"'
        if current
        else 'operation "create"'
    )
    return (
        f"Waymark: this session changed {', '.join(files) or 'files'} and no checkpoint was "
        f"saved since. Before stopping, call Waymark's `checkpoint` tool ({how}) with one "
        "line each: objective; progress (what is done); decisions (and why); "
        "failed_approaches (and why they failed); tests (command and pass/fail); next_action "
        "(the exact next step). Then stop."
    )


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
