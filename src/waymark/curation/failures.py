"""Lessons proposed from the ledger: a command that failed and was then fixed, repeatedly.

When a command passes after failing, the ledger marks its failures passed and names the
files edited in between (the fix). Once the same command has gone through that two or more
times in a project, the pattern is worth a lesson, so one is proposed as a candidate (never
an active memory): what failed, how, and what was edited each time before it passed.
"""

from __future__ import annotations

from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.storage.connection import Connection

EPISODES = 2  # failure-then-fix episodes of one command before a lesson is proposed
FILES_NAMED = 4
TAIL_SHOWN = 160


def propose_lesson(
    conn: Connection, project_id: str, session_id: str, failures: list[dict[str, Any]]
) -> str | None:
    """Inside the caller's transaction: `failures` are the stored failures of one command
    (newest first, as `ledger.earlier_failures` reads them, already redacted). Proposes or
    refreshes the lesson when enough of them were fixed; its candidate id, else None."""
    fixed = [f for f in failures if f.get("passed_at")]
    episodes = {(f["passed_session"], f["passed_at"]) for f in fixed}
    if len(episodes) < EPISODES:
        return None
    from waymark.curation import candidates

    command = fixed[0]["command"]
    files: dict[str, int] = {}
    for f in fixed:
        for path in json.loads(f["fix"]) if f.get("fix") else []:
            files[path] = files.get(path, 0) + 1
    named = sorted(files, key=lambda p: (-files[p], p))[:FILES_NAMED]
    last = failures[0] if not failures[0].get("passed_at") else fixed[0]
    tail = " ".join((last.get("error_tail") or "").split())[-TAIL_SHOWN:]
    how = f"exit {last['exit_code']}" if last.get("exit_code") is not None else "failed"
    content = (
        f"`{command}` failed and was fixed {len(episodes)} times in this project"
        f" (last failure: {how}{': ' + tail if tail else ''})."
    )
    if named:
        content += " Each time it passed after editing: " + ", ".join(named) + "."
    fields = {
        "type": "lesson",
        "title": f"`{command[:80]}` keeps failing until it is fixed the same way",
        "content": content,
        "tags": ["failure-fix"],
    }
    evidence = [{"command": command}, *({"path": p} for p in named)]
    row, _ = candidates.propose(
        conn,
        project_id,
        kind="failure_fix",
        reason=f"{len(fixed)} failures of this command, fixed in {len(episodes)} sessions",
        fingerprint=f"failure_fix:{command}",
        fields=fields,
        evidence=evidence,
        session_id=session_id,
    )
    return str(row["id"])
