"""Feedback on recall: a memory marked helpful, not helpful, stale or wrong.

A verdict given on a recall (its query known) moves the memory's ranking by one bounded
multiplier (`feedback` in `recall --explain`, within ±`feedback_boost`), and only for
queries close to that one (sharing half their words or more): feedback on one question
never reorders the answers to another (`bench/feedback.py` measures it). Stale or wrong
proposes the memory's archive as a candidate for review: feedback never retires a memory by
itself.
"""

from __future__ import annotations

from waymark.base import clock
from waymark.errors import InvalidArgument
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage.connection import Connection
from waymark.storage.events import add_feedback, feedback_counts, log_event

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

VERDICTS = ("helpful", "not_helpful", "stale", "wrong")
RETIRING = ("stale", "wrong")


def give(
    conn: Connection,
    project: Project,
    memory_id: str,
    verdict: str,
    *,
    note: str | None = None,
    query: str | None = None,
    actor: str = "user",
    session_id: str | None = None,
) -> dict[str, Any]:
    """Record one verdict on the memory a recall of `query` returned; {memory_id, verdict,
    counts, ranks (whether it moves ranking: only with a query), candidate (stale or wrong:
    the archive proposed for review, else None)}."""
    from waymark.curation import candidates
    from waymark.memories import store

    if verdict not in VERDICTS:
        raise InvalidArgument(
            f"unknown verdict {verdict!r}; valid: {', '.join(VERDICTS)}", valid=list(VERDICTS)
        )
    memory_id = store.full_id(conn, memory_id)
    with db.write(conn):
        memory = store.get(conn, memory_id)
        if memory.project_id not in (project.id, None):
            from waymark.errors import NotFound

            raise NotFound(f"memory {memory_id} belongs to another project", id=memory_id)
        add_feedback(conn, memory_id, verdict, _terms(query), clock.now(), actor, session_id)
        log_event(
            conn, "feedback", project_id=project.id, memory_id=memory_id, actor=actor,
            session_id=session_id, verdict=verdict,
        )  # fmt: skip
        proposed = None
        if verdict in RETIRING and memory.status == "active":
            said = f": {note.strip()}" if note and note.strip() else ""
            row, _ = candidates.propose(
                conn,
                project.id,
                kind="feedback",
                action="archive",
                sources=[memory_id],
                reason=f"marked {verdict} by {actor}{said}",
                fingerprint=f"feedback:retire:{memory_id}",
                session_id=session_id,
            )
            proposed = row["id"]
        _rate_rule(conn, project, memory_id, verdict, actor)
        counts = feedback_counts(conn, memory_id)
    return {
        "memory_id": memory_id,
        "verdict": verdict,
        "counts": counts,
        "ranks": bool(query and _terms(query)) and verdict not in RETIRING,
        "candidate": proposed,
    }


def counts(conn: Connection, memory_id: str) -> dict[str, int]:
    """How many times each verdict was given on the memory."""
    return feedback_counts(conn, memory_id)


def _terms(query: str | None) -> list[str]:
    """The recall's words as ranking compares them, from its redacted text."""
    if not query:
        return []
    from waymark.base import redact
    from waymark.storage.match import tokens

    return tokens(redact.scrub(query)[0])


def _rate_rule(
    conn: Connection, project: Project, memory_id: str, verdict: str, actor: str
) -> None:
    """Helpful or not helpful on an active rule is that rule firing (and helping, or not)."""
    from waymark.storage.learned import get_learned

    row = get_learned(conn, memory_id)
    if (
        row
        and row["kind"] == "rule"
        and row["status"] == "active"
        and verdict in ("helpful", "not_helpful")
    ):
        from waymark.curation.learning import rate_in

        rate_in(conn, project, memory_id, verdict == "helpful", actor=actor)
