"""What happens when an agent's turn ends and when its session ends, whichever face saw it:
the Stop and SessionEnd hooks, or the memory proxy (an answer without tool calls; a
conversation gone quiet, or the proxy stopping).

At a turn's end: the opt-in session summary is refreshed as a candidate and what was shown
is checked for use. At the session's end: the ledger is closed (with a handoff marker when
work changed and no checkpoint was saved), then the extras: measured use, skills learned
from work, insights from the error log. An extra that fails is reported, never raised: the
session is closed whatever happens after.
"""

from __future__ import annotations

from waymark.projects.resolve import Project
from waymark.storage.connection import Connection


def turn_ended(
    conn: Connection, project: Project, session_id: str, cwd: str | None, last_message: str | None
) -> list[str]:
    """The summary candidate and measured use after an answer; what was skipped, and why."""
    problems = []
    try:
        from waymark.curation import summary

        summary.refresh(conn, project, session_id, cwd, last_message)
    except Exception as exc:  # the summary is extra
        problems.append(f"session summary skipped: {exc!r}")
    try:
        from waymark.curation.use import settle

        settle(conn, project, session_id, last_message)
    except Exception as exc:  # measurement is extra too
        problems.append(f"measured use skipped: {exc!r}")
    return problems


def session_ended(
    conn: Connection,
    project: Project,
    session_id: str,
    client: str,
    reason: str,
    last_message: str | None = None,
) -> list[str]:
    """Close the session's ledger, then the extras; what was skipped, and why."""
    from waymark.handoff import ledger
    from waymark.projects.git import head

    ledger.mark_if_unsaved(
        conn, project, session_id, client, "ended with changes and no checkpoint"
    )
    ledger.end_session(conn, session_id, reason, head(project.files))
    problems = []
    try:
        from waymark.curation.use import refresh_sections, settle

        settle(conn, project, session_id, last_message)
        refresh_sections(conn, project)
    except Exception as exc:  # measurement is extra: the session is closed already
        problems.append(f"measured use skipped: {exc!r}")
    try:
        from waymark.curation.skills import extract

        extract(conn, project, session_id)
    except Exception as exc:  # extra work too
        problems.append(f"skills skipped: {exc!r}")
    try:
        from waymark.curation.mistakes import propose_insights

        propose_insights(conn, project, session_id)
    except Exception as exc:  # extra work: the session is closed whatever happens here
        problems.append(f"insights skipped: {exc!r}")
    return problems
