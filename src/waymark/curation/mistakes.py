"""Learning from mistakes, without a model: the error log, its categories, its patterns.

The error log is every failed command the hooks recorded (Claude Code's PostToolUseFailure,
Codex's PostToolUse with its exit code) and every lesson memory, newest first, each with a
category (claude-total-memory's: code, logic, config, api, timeout, loop, wrong assumption,
missing context). An agent gives one with a `category:<name>` tag on a lesson; otherwise
rules on the error's telling line decide (first match wins, RULES below), and the third
failure of one command in one session is a `loop`.

A failure's pattern is its error signature (`signature.of`: the program and the error's
shape, without paths, numbers and ids), so four `No module named requests_mock` are one
mistake and a missing `tsc` another; lessons are grouped by category. PATTERN or more of one
in PATTERN_DAYS propose, at each SessionEnd, an insight as a candidate for review (one per
pattern a month) that states the error once and what fixed it: the edits and commands after
which the same command passed next, or a lesson that names the error. Insights (and other
lessons Waymark derived) are not mistakes: they are never counted again.
"""

from __future__ import annotations

from waymark.base import clock
from waymark.base import jsonlite as json
from waymark.curation import signature
from waymark.projects.resolve import Project
from waymark.storage import command_failures, sessions
from waymark.storage import connection as db
from waymark.storage import memories as memory_rows
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

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
DERIVED = ("insight", "failure-fix", "summary")  # lesson tags of what Waymark proposed itself
FIXES_NAMED = 4
SHELL_TOOLS = ("Bash", "shell", "exec_command", "shell_command", "local_shell")


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
    """The error log of the last `days`: [{kind, id, at, category, how, text, signature,
    error}], newest first (`how`: given by the agent, or the rule that inferred it)."""
    since = clock.second(clock.epoch(clock.now()) - days * 86400)
    out: list[dict[str, Any]] = []
    failures = command_failures.project_failures_since(conn, project.id, since, READ)
    seen: dict[tuple[str, str], int] = {}
    for f in reversed(failures):  # oldest first, to count repeats within a session
        key = (f["session_id"], f["command"])
        seen[key] = seen.get(key, 0) + 1
        error = signature.telling_line(f["error_tail"] or "")
        loop = seen[key] >= LOOP
        out.append({
            "kind": "failure", "id": f"failure:{f['id']}", "at": f["failed_at"],
            "category": "loop" if loop else categorise(error or f["command"]),
            "how": f"failed {seen[key]} times this session" if loop else "rules",
            "text": f["command"] + (f" (exit {f['exit_code']})" if f["exit_code"] is not None
                                    else ""),
            "signature": f["signature"] or signature.of(f["command"], f["error_tail"]),
            "error": error,
            "failure": f,
        })  # fmt: skip
    for m in memory_rows.lessons_since(conn, project.id, since, READ):
        if any(tag in DERIVED for tag in m.tags):
            continue  # Waymark's own proposal, approved: not a new mistake
        given = _given(m.tags)
        category = given or categorise(f"{m.title} {m.content}")
        out.append({
            "kind": "lesson", "id": m.id, "at": m.created_at, "category": category,
            "how": "given" if given else "rules", "text": m.title,
            "signature": f"lesson: {category}" if category else None,
            "error": None, "lesson": f"{m.title}: {m.content}" if m.content != m.title
            else m.title,
        })  # fmt: skip
    out.sort(key=lambda e: e["at"], reverse=True)
    return out


def patterns(conn: Connection, project: Project) -> dict[str, list[dict]]:
    """signature -> its entries of the last PATTERN_DAYS, for those with PATTERN or more."""
    by: dict[str, list[dict]] = {}
    for entry in log(conn, project):
        if entry["signature"]:
            by.setdefault(entry["signature"], []).append(entry)
    return {sig: e for sig, e in by.items() if len(e) >= PATTERN}


def fixes(conn: Connection, entries: list[dict], lessons: list[dict]) -> list[str]:
    """What fixed the failures in `entries`: for each that the same command passed after,
    the edits and the other commands run in between (as the failure kept them, arguments
    and all; else the session's steps, which name only a command's program); else a lesson
    that names their error."""
    found: dict[str, int] = {}
    for entry in entries:
        f = entry.get("failure")
        if not f or not f.get("passed_at"):
            continue
        for path in json.loads(f["fix"]) if f.get("fix") else []:
            found[f"editing {path}"] = found.get(f"editing {path}", 0) + 1
        tried = json.loads(f["tried"]) if f.get("tried") else []
        for command in tried:  # whole, as the failure hint says them (stored redacted)
            found[f"running `{command}`"] = found.get(f"running `{command}`", 0) + 1
        if not tried and f.get("passed_session") == f["session_id"]:
            for tool, target, outcome in sessions.steps_between(
                conn, f["session_id"], f["failed_at"], f["passed_at"]
            ):
                ran = target and outcome == "ok" and tool in SHELL_TOOLS
                if ran and not f["command"].startswith(str(target)):
                    found[f"running `{target}`"] = found.get(f"running `{target}`", 0) + 1
    named = sorted(found, key=lambda k: (-found[k], k))[:FIXES_NAMED]
    if named:
        return named
    error = next((e["error"] for e in entries if e.get("error")), "")
    message = error.split(":", 1)[-1].strip().lower()
    for lesson in lessons:
        if message and message in lesson["lesson"].lower():
            return [f"the lesson {lesson['id']}: {lesson['lesson'][:200]}"]
    return []


def propose_insights(
    conn: Connection, project: Project, session_id: str | None = None
) -> list[str]:
    """An insight candidate for each pattern (one per signature a month; refreshed while it
    waits), in one transaction of its own; their ids."""
    with db.write(conn):
        return _propose_insights(conn, project, session_id)


def _propose_insights(conn: Connection, project: Project, session_id: str | None) -> list[str]:
    import hashlib

    from waymark.curation import candidates

    month = clock.now()[:7]
    made = []
    entries_all = log(conn, project)
    lessons = [e for e in entries_all if e["kind"] == "lesson"]
    for sig, entries in sorted(patterns(conn, project).items()):
        category = next((e["category"] for e in entries if e["category"]), None)
        fields = _insight(conn, sig, entries, lessons, category)
        digest = hashlib.sha256(sig.encode("utf-8")).hexdigest()[:16]
        row, _ = candidates.propose(
            conn,
            project.id,
            kind="insight",
            reason=f"pattern: {len(entries)} times `{sig}` in {PATTERN_DAYS} days",
            fingerprint=f"insight:{digest}:{month}",
            fields=fields,
            evidence=[{"command": e["text"]} for e in entries if e["kind"] == "failure"][:10],
            session_id=session_id,
        )
        made.append(str(row["id"]))
    return made


def _insight(
    conn: Connection, sig: str, entries: list[dict], lessons: list[dict], category: str | None
) -> dict[str, Any]:
    """The insight's fields: the error once, how often, the commands it hit, what fixed it."""
    tags = ["insight", *([f"category:{category}"] if category else [])]
    if entries[0]["kind"] == "lesson":
        kind = (category or "").replace("_", " ")
        named = "; ".join(e["text"][:80] for e in entries[:5])
        return {
            "type": "lesson",
            "title": f"{len(entries)} {kind} lessons in {PATTERN_DAYS} days",
            "content": f"{len(entries)} {kind} lessons in this project in the last "
            f"{PATTERN_DAYS} days, newest first: {named}.",
            "tags": tags,
        }
    error = next((e["error"] for e in entries if e["error"]), "") or "the same error"
    runs = list(dict.fromkeys(e["failure"]["command"] for e in entries))
    program = sig.split(": ", 1)[0]
    fixed = fixes(conn, entries, lessons)
    content = (
        f"`{program}` failed {len(entries)} times in {PATTERN_DAYS} days with: {error}"
        f" (runs: {'; '.join(f'`{r[:80]}`' for r in runs[:3])})."
    )
    content += (
        " What fixed it: " + ", ".join(fixed) + "."
        if fixed
        else " Not fixed yet: no later run of the same command passed."
    )
    return {
        "type": "lesson",
        "title": f"`{program}`: {error[:100]}",
        "content": content,
        "tags": tags,
    }
