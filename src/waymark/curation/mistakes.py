"""Learning from mistakes, without a model: the error log, its categories, its patterns.

The error log is every failed command the hooks recorded (Claude Code's PostToolUseFailure,
Codex's PostToolUse with its exit code) and every lesson memory, newest first, each with a
category (claude-total-memory's: code, logic, config, api, timeout, loop, wrong assumption,
missing context). An agent gives one with a `category:<name>` tag on a lesson; otherwise
rules on the text decide (first match wins, RULES below), and the third failure of one
command in one session is a `loop`. A pattern is PATTERN or more entries of one category in
PATTERN_DAYS in a project: at each SessionEnd it proposes an insight as a candidate for
review (one per category a month), never a rule by itself.
"""

from __future__ import annotations

from typing import Any

from waymark.base import clock
from waymark.projects.resolve import Project
from waymark.storage import memories as memory_rows
from waymark.storage import sessions
from waymark.storage.connection import Connection

CATEGORIES = (
    "code", "logic", "config", "api", "timeout", "loop", "wrong_assumption", "missing_context",
)  # fmt: skip
# (category, words in the lower-cased text), tried in order.
RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("timeout", ("timed out", "timeout", "deadline exceeded", "exit code 124", "took too long")),
    ("api", ("http 4", "http 5", " 401", " 403", " 429", " 502", " 503", "connection refused",
             "connection reset", "rate limit", "unauthorized", "forbidden", "status code")),
    ("config", ("no module named", "command not found", "no such file", "permission denied",
                "not installed", "environment variable", "config", "cannot find module",
                "could not find", "missing dependency", "version conflict")),
    ("missing_context", ("didn't know", "did not know", "unaware", "not documented",
                         "undocumented", "missing context", "nobody told")),
    ("wrong_assumption", ("assumed", "assumption", "thought it", "turned out")),
    ("code", ("syntaxerror", "typeerror", "nameerror", "attributeerror", "indentationerror",
              "importerror", "is not defined", "undefined", "compile", "cannot find symbol",
              "traceback", "segmentation fault", "panicked")),
    ("logic", ("assertionerror", "assert", "expected", "mismatch", "!=", "wrong result",
               "failed")),
)  # fmt: skip
PATTERN = 3
PATTERN_DAYS = 30
LOOP = 3  # failures of one command in one session that make the last ones a loop
READ = 300  # newest failures, and newest lessons, the log reads


def categorise(text: str) -> str | None:
    """The first category whose words the text holds, or None."""
    lower = " " + text.lower()
    for category, words in RULES:
        if any(w in lower for w in words):
            return category
    return None


def _given(tags: list[str]) -> str | None:
    for tag in tags:
        if tag.startswith("category:") and tag[9:].replace(" ", "_") in CATEGORIES:
            return tag[9:].replace(" ", "_")
    return None


def log(conn: Connection, project: Project, *, days: float = PATTERN_DAYS) -> list[dict]:
    """The error log of the last `days`: [{kind, id, at, category, how, text}], newest first
    (`how`: given by the agent, or the rule that inferred it)."""
    since = clock.second(clock.epoch(clock.now()) - days * 86400)
    out: list[dict[str, Any]] = []
    failures = sessions.project_failures_since(conn, project.id, since, READ)
    seen: dict[tuple[str, str], int] = {}
    for f in reversed(failures):  # oldest first, to count repeats within a session
        key = (f["session_id"], f["command"])
        seen[key] = seen.get(key, 0) + 1
        text = f"{f['command']} {f['error_tail'] or ''}"
        loop = seen[key] >= LOOP
        out.append({
            "kind": "failure", "id": f"failure:{f['id']}", "at": f["failed_at"],
            "category": "loop" if loop else categorise(text),
            "how": f"failed {seen[key]} times this session" if loop else "rules",
            "text": f["command"] + (f" (exit {f['exit_code']})" if f["exit_code"] is not None
                                    else ""),
        })  # fmt: skip
    for m in memory_rows.lessons_since(conn, project.id, since, READ):
        given = _given(m.tags)
        out.append({
            "kind": "lesson", "id": m.id, "at": m.created_at,
            "category": given or categorise(f"{m.title} {m.content}"),
            "how": "given" if given else "rules", "text": m.title,
        })  # fmt: skip
    out.sort(key=lambda e: e["at"], reverse=True)
    return out


def patterns(conn: Connection, project: Project) -> dict[str, list[dict]]:
    """category -> its entries of the last PATTERN_DAYS, for categories with PATTERN or more."""
    by: dict[str, list[dict]] = {}
    for entry in log(conn, project):
        if entry["category"]:
            by.setdefault(entry["category"], []).append(entry)
    return {c: e for c, e in by.items() if len(e) >= PATTERN}


def propose_insights(
    conn: Connection, project: Project, session_id: str | None = None
) -> list[str]:
    """Inside the caller's transaction: an insight candidate for each pattern (one per
    category a month; refreshed while it waits); their ids."""
    from waymark.curation import candidates

    month = clock.now()[:7]
    made = []
    for category, entries in sorted(patterns(conn, project).items()):
        named = "; ".join(e["text"][:80] for e in entries[:5])
        fields = {
            "type": "lesson",
            "title": f"{len(entries)} {category.replace('_', ' ')} mistakes in {PATTERN_DAYS} days",
            "content": (
                f"{len(entries)} {category.replace('_', ' ')} mistakes in this project in the"
                f" last {PATTERN_DAYS} days, newest first: {named}."
            ),
            "tags": ["insight", f"category:{category}"],
        }
        row, _ = candidates.propose(
            conn,
            project.id,
            kind="insight",
            reason=f"pattern: {len(entries)} of category {category} in {PATTERN_DAYS} days",
            fingerprint=f"insight:{category}:{month}",
            fields=fields,
            evidence=[{"command": e["text"]} for e in entries if e["kind"] == "failure"][:10],
            session_id=session_id,
        )
        made.append(str(row["id"]))
    return made
