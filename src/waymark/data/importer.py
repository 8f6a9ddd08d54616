"""Bulk-load memories from JSON lines, fast and re-runnable.

Each line: {"key", "text" | "content", "title"?, "type"?, "tags"?, "timestamp"?, "session"?,
"source"?}; lines of one "session" are turns of one conversation, each embedded with its
neighbours (recall/vectors.py `with_context`). A key whose
latest record holds the same content is skipped; a changed one supersedes it; one the user
archived or erased stays removed. Rows commit in batches, so thousands load per second, and
a bad line stops the run with its line number before anything of its batch is written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from waymark.base import redact
from waymark.curation import agent_writes
from waymark.errors import InvalidArgument, WaymarkError
from waymark.memories import store
from waymark.memories.draft import Draft, content_hash, make_draft
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage.connection import Connection
from waymark.storage.memories import latest_by_key, latest_by_keys

BATCH = 500
MAX_SESSION = 200  # characters of a line's "session"


@dataclass
class ImportReport:
    read: int = 0
    created: int = 0
    superseded: int = 0
    unchanged: int = 0
    removed: int = 0
    redactions: int = 0
    held: int = 0  # read as instructions to the agent: candidates for review, no memories
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def parse_line(project: Project, line: str, lineno: int) -> Draft:
    try:
        row = json.loads(line)
    except ValueError as exc:
        raise InvalidArgument(f"line {lineno}: not valid JSON ({exc})", line=lineno) from None
    if not isinstance(row, dict):
        raise InvalidArgument(f"line {lineno}: expected a JSON object", line=lineno)
    text = row.get("content", row.get("text"))
    if not isinstance(text, str) or not isinstance(row.get("key"), str) or not row["key"]:
        raise InvalidArgument(
            f'line {lineno}: needs "key" and "text" (or "content") as strings', line=lineno
        )
    session = row.get("session")
    if session is not None and (isinstance(session, bool) or not isinstance(session, (str, int))):
        raise InvalidArgument(f'line {lineno}: "session" is a string or a number', line=lineno)
    try:
        session_id, n_session = redact.scrub(str(session)[:MAX_SESSION]) if session else (None, 0)
        draft = make_draft(
            project,
            type=row.get("type") or "note",
            content=text,
            title=row.get("title"),
            tags=row.get("tags") or [],
            event_time=row.get("timestamp"),
            key=row["key"],
            actor="import",
            client="import",
            source_ref=row.get("source"),
            session_id=session_id,
        )
        return replace(draft, redactions=draft.redactions + n_session) if n_session else draft
    except WaymarkError as exc:
        exc.message = f"line {lineno}: {exc.message}"
        exc.details["line"] = lineno
        raise


def import_lines(
    conn: Connection,
    project: Project,
    lines: Iterable[str],
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    report = ImportReport()
    batch: list[Draft] = []
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        batch.append(parse_line(project, line, lineno))
        report.read += 1
        if len(batch) >= BATCH:
            _write_batch(conn, project, batch, report)
            batch.clear()
            if progress:
                progress(report.read)
    if batch:
        _write_batch(conn, project, batch, report)
    if progress:
        progress(report.read)
    return report


def _write_batch(
    conn: Connection, project: Project, batch: list[Draft], report: ImportReport
) -> None:
    held = [draft for draft in batch if draft.flags]
    with db.write(conn):
        # Every key's latest record in one statement; a key the batch already wrote is
        # looked up again (a later line of the same key supersedes what an earlier wrote).
        latest = latest_by_keys(conn, project.id, [d.key for d in batch if d.key is not None])
        written: set[str] = set()
        for draft in batch:
            report.redactions += draft.redactions
            assert draft.key is not None  # parse_line requires one
            if draft.flags:
                continue
            if draft.key in written:
                row = latest_by_key(conn, project.id, draft.key)
            else:
                row = latest.get(draft.key)
            written.add(draft.key)
            if row is None:
                store.insert(conn, project, draft)
                report.created += 1
            elif row[1] in ("archived", "erased"):
                report.removed += 1
            elif (row[2], row[3], row[4]) == (
                content_hash(draft.content),
                draft.title,
                json.dumps(draft.tags),
            ):
                report.unchanged += 1
            else:
                store.replace_active(conn, project, row[0], draft)
                report.superseded += 1
    for draft in held:  # each its own candidate, after the batch (one transaction at a time)
        agent_writes.hold(conn, project, draft)
        report.held += 1
