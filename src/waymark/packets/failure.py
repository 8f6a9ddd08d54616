"""The failure-time packet: when a command fails, what this project learned the last times
the same error came up, at most three lines.

The error is matched by its signature (`curation.signature`: the program and the error's
shape, without paths, numbers and ids; the same normalisation the insights and lessons use),
so `pytest tests/a.py` and `pytest -x` failing on one missing module are one error. The lines:
the newest earlier failure of that signature and what made it pass (the commands the session
ran before the same command passed, the files it edited), or how often it came back unfixed;
then up to two lessons, warnings or solutions whose text names the error's cause. Each line
cites its record (`failure:N`, a memory id); the packet comes once per signature per session
and stays within `packet.failure_tokens`. Reads a handful of index entries; no model.
"""

from __future__ import annotations

from waymark.storage import command_failures

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection
    from waymark.storage.memories import Memory

EARLIER = 20  # failures of one signature looked at
MEMORIES = 2
MEMORY_TYPES = ("lesson", "warning", "solution", "incident", "decision")
TITLE = "This error came up before"
# Words that say nothing of an error's cause, left out of the lookup of memories naming it.
_PLAIN_WORDS = frozenset((
    "the", "and", "for", "not", "was", "with", "from", "that", "this", "has", "have", "had",
    "are", "but", "can", "cannot", "could", "error", "failed", "named", "found", "such", "file",
    "directory", "line", "exit", "code", "status", "command", "none", "path", "unable", "into",
))  # fmt: skip


def failure_packet(
    conn: Connection,
    project: Project,
    session_id: str,
    client: str,
    *,
    hook: str,
    record: bool = True,
    agent_id: str | None = None,
) -> str | None:
    """The packet for the session's newest failed command, or None: nothing known about its
    error, or it was already said this session."""
    failure = command_failures.last_open_failure(conn, session_id)
    if failure is None or not failure["signature"]:
        return None
    import zlib  # a C builtin: hashlib would cost the hook ~5 ms (OpenSSL)

    signature = str(failure["signature"])
    raw = signature.encode("utf-8")
    key = f"error:{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}"
    from waymark.packets.seen import seen_by

    seen = seen_by(conn, session_id, agent_id)
    if key in seen:
        return None
    earlier = command_failures.failures_by_signature(
        conn, project.id, signature, EARLIER, before=int(failure["id"])
    )
    earlier = [f for f in earlier if f["passed_at"] or f["session_id"] != session_id]
    named, relevance = _naming(conn, project, failure)
    found = [m for m in named if m.id not in seen][:MEMORIES]
    from waymark import settings

    tokens, items, floor = settings.budget(conn, "failure")
    if relevance < floor:  # `packet.failure_floor`: named by the error's words only
        found = []
    lines = _failure_lines(earlier) + [(m.id, _memory_line(m)) for m in found]
    if not lines:
        return None
    from waymark.packets.render import Section, render

    notes = [(k, "the same error before" if k.startswith("failure:") else "names the error")
             for k, _ in lines]  # fmt: skip
    parts = [Section(TITLE, [line for _, line in lines], 400, 0, notes)]
    text = render("failure", parts, tokens, items)
    if not text:
        return None
    from waymark.storage.connection import read_only

    if record and not read_only(conn):
        from waymark.packets.seen import note_injected

        note_injected(
            conn,
            session_id,
            [m.id for m in found if m.id in text],
            receipt=(project.id, hook, "failure", text, parts),
            others=[key, *(k for k, line in lines if k.startswith("failure:") and line in text)],
            agent_id=agent_id,
        )
    return text


def _failure_lines(earlier: list[dict]) -> list[tuple[str, str]]:
    """One line: what made the newest earlier failure pass, else how often it came back."""
    if not earlier:
        return []
    from waymark.base import jsonlite as json
    from waymark.packets.briefing import age
    from waymark.packets.render import fence_text

    times = f"{len(earlier)} times" if len(earlier) > 1 else "once"
    passed = next((f for f in earlier if f["passed_at"]), None)
    if passed is None:
        last = earlier[0]
        line = (
            f"- [failure:{last['id']}] failed the same way {times} before in this project"
            f" (last {_ago(age(last['failed_at']))}, `{_cut(last['command'])}`), never passed"
            " on a later run"
        )
        return [(f"failure:{last['id']}", fence_text(line))]
    tried = json.loads(passed["tried"]) if passed["tried"] else []
    fix = json.loads(passed["fix"]) if passed["fix"] else []
    how = []
    if tried:
        how.append("running " + ", ".join(f"`{_cut(c)}`" for c in tried))
    if fix:
        how.append("editing " + ", ".join(fix))
    after = " after " + " and ".join(how) if how else " on its next run"
    line = (
        f"- [failure:{passed['id']}] failed the same way {times} before in this project;"
        f" {_ago(age(passed['failed_at']))} `{_cut(passed['command'])}` passed{after}"
    )
    return [(f"failure:{passed['id']}", fence_text(line))]


def _ago(said: str) -> str:
    return "just now" if said == "now" else f"{said} ago"


def _cut(command: str) -> str:
    flat = " ".join(command.split()).replace("`", "'")
    return flat if len(flat) <= 100 else flat[:99] + "…"


def _memory_line(m: Memory) -> str:
    from waymark.packets.lines import memory_line

    return memory_line(m)[:400]


def _naming(conn: Connection, project: Project, failure: dict) -> tuple[list[Memory], float]:
    """Active lessons, warnings and solutions whose text names the error's cause: its
    quoted names when it has some (`No module named 'requests_mock'`), else its words; and
    their relevance (1 by the quoted names, 0.5 by the words: `packet.failure_floor`)."""
    from waymark.curation import signature

    line = signature.telling_line(failure["error_tail"] or "")
    if not line:
        return [], 0.0
    from waymark.storage import memories as rows
    from waymark.storage import search

    for terms, relevance in _cause_terms(line):
        match = " ".join('"' + t.replace('"', "") + '"' for t in terms)
        rowids = search.typed_matches(conn, project.id, match, MEMORY_TYPES, MEMORIES * 2)
        by_rowid = rows.by_rowids(conn, rowids)
        out = [by_rowid[r] for r in rowids if r in by_rowid]
        if out:
            return out, relevance
    return [], 0.0


def _cause_terms(line: str) -> list[tuple[list[str], float]]:
    """The lookups to try, strictest first, each with its relevance: the quoted names of
    the error (the cause, in most messages), then its telling words (four at most, the
    error class among them)."""
    import re

    quoted = [q for q in re.findall(r"[`'\"]([^`'\"]{2,80})[`'\"]", line) if _words(q)]
    words = [w for w in _words(signature_free(line)) if w.lower() not in _PLAIN_WORDS]
    out = []
    if quoted:
        out.append((quoted[:3], 1.0))
    if words:
        out.append((list(dict.fromkeys(words))[:4], 0.5))
    return out


def signature_free(line: str) -> str:
    """The line without the paths, numbers and ids a signature folds away."""
    from waymark.curation import signature

    return signature.shape(line).replace("<path>", " ").replace("<n>", " ").replace("<id>", " ")


def _words(text: str) -> list[str]:
    import re

    return [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", text)]


# What a hook hands over with a failed command (`ledger.record_tool`'s arguments).
GIVEN = {
    "paths": list, "command": str, "failed": bool, "tool_name": str, "exit_code": int,
    "error": str, "cwd": str, "looked_at": str, "key": str,
}  # fmt: skip


def answer(conn: Connection, request: dict) -> dict:
    """The warm server's reply to a `tool_result` request: a hook's tool call recorded (once,
    by its delivery key) where hooks record, and for a failed command the packet to inject.
    `{"ok": true, "recorded": bool, "text": str | None}`."""
    from waymark.projects.capture import EVENT_ERROR, hook_project, requested_event

    event, given = requested_event(request), request.get("given")
    if event is None:
        return {"ok": False, "error": EVENT_ERROR}
    if not isinstance(given, dict) or not isinstance(given.get("key"), str):
        return {"ok": False, "error": "given must be an object with the delivery key"}
    wrong = [k for k, v in given.items() if v is not None and not _typed(k, v)]
    if wrong:
        return {"ok": False, "error": f"unexpected or mistyped fields: {', '.join(sorted(wrong))}"}
    from waymark.handoff.ledger import record_tool

    found = hook_project(conn, event["cwd"], event["session_id"])
    if found is None or not (found[1]["enabled"] and found[1]["records"]):
        return {"ok": True, "recorded": False, "text": None}
    project, session = found[0], event["session_id"]
    if not record_tool(conn, project, session, event["client"], **given):
        return {"ok": True, "recorded": False, "text": None}
    agent = event["agent_id"]
    text = None
    if given.get("failed") and given.get("command"):
        text = failure_packet(conn, project, session, event["client"], hook=event["name"],
                              agent_id=agent)  # fmt: skip
    elif not agent:  # a lead's call: what its subagents saved, if any
        from waymark.packets.agents import from_subagents

        text = from_subagents(conn, session)
    return {"ok": True, "recorded": True, "text": text}


def _typed(key: str, value: object) -> bool:
    kind = GIVEN.get(key)
    if kind is None or (kind is int and isinstance(value, bool)):
        return False
    if kind is list:
        return isinstance(value, list) and all(isinstance(p, str) for p in value)
    return isinstance(value, kind)
