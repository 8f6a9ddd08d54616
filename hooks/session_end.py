"""SessionEnd: close the ledger (end time, reason, HEAD) well within the client's budget
(Claude Code gives all SessionEnd hooks 1.5 s; Codex 3 s), then look for patterns in the
error log (an insight to review; tens of milliseconds, once a session, not at each failure).

    python -I -c "from waymark.hooks.session_end import main;main()" claude-code|codex
"""

from __future__ import annotations

from .runtime import Context, log, run

NAME = "SessionEnd"


def handle(ctx: Context) -> None:
    if not ctx.capturing() or not ctx.records:
        return
    from waymark.handoff import ledger
    from waymark.projects.git import head

    event, conn, project = ctx.event, ctx.conn, ctx.project
    ledger.mark_if_unsaved(
        conn, project, event.session_id, event.client, "ended with changes and no checkpoint"
    )
    ledger.end_session(conn, event.session_id, str(event.reason or "other"), head(project.files))
    try:
        from waymark.curation.use import refresh_sections, settle

        settle(conn, project, event.session_id, event.last_message)
        refresh_sections(conn, project)
    except Exception as exc:  # measurement is extra: the session is closed already
        log(NAME, f"measured use skipped: {exc!r}")
    try:
        from waymark.curation.skills import extract

        extract(conn, project, event.session_id)
    except Exception as exc:  # extra work too
        log(NAME, f"skills skipped: {exc!r}")
    try:
        from waymark.curation.mistakes import propose_insights

        propose_insights(conn, project, event.session_id)
    except Exception as exc:  # extra work: the session is closed whatever happens here
        log(NAME, f"insights skipped: {exc!r}")


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
