"""After a compaction: what the client's summary of the session no longer mentions.

Claude Code hands its PostCompact hook the summary it made (`compact_summary`). Against it,
the session's recorded facts are checked: the files it edited, the commands it saw fail, the
decisions it relied on (shown, and used first), the active checkpoint's objective and next
action. A fact is mentioned when the summary names it: a path by its path or file name, a
command by its program and subcommand, a memory by its id or most of its title's words, a
sentence by most of its words. The rest is kept on the session until a packet says it (the
PostCompact hook's own context, else the next prompt's packet), then cleared.
"""

from __future__ import annotations

from waymark.base import jsonlite as json
from waymark.storage import command_failures, sessions
from waymark.storage import connection as db

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection

RELIED_TYPES = ("decision", "lesson")
RELIED_MAX = 8
FILES_MAX = 12
WORDS_NEEDED = 0.6  # of a title's or sentence's words for the summary to mention it
_SHORT = 3


def facts(conn: Connection, project: Project, session_id: str) -> list[dict[str, str]]:
    """[{kind, key, text}] the session recorded: edits, failures, decisions relied on, the
    checkpoint's objective and next action."""
    from waymark.base import shell
    from waymark.storage import memories as rows

    out = []
    for path in sorted(sessions.edited(conn, session_id))[:FILES_MAX]:
        out.append({"kind": "file", "key": path, "text": f"edited {path}"})
    for command in command_failures.failed_commands(conn, session_id):
        said = shell.summary(command) or command.split(" ", 1)[0]
        out.append({"kind": "failure", "key": said, "text": f"`{command[:120]}` failed"})
    for memory_id in sessions.relied_on(conn, session_id, RELIED_TYPES, RELIED_MAX):
        m = rows.get_memory(conn, memory_id)
        if m is not None:
            out.append({"kind": m.type, "key": m.id, "text": f"{m.title} (id {m.id})"})
    from waymark.base.clock import now
    from waymark.storage import checkpoints

    found = checkpoints.active_revision(conn, project.id, session_id, now())
    body = json.loads(found[1]) if found and found[1] else {}
    for kind in ("objective", "next_action"):
        text = body.get(kind)
        if isinstance(text, str) and text.strip():
            out.append({"kind": kind, "key": text, "text": text})
    return out


def mentioned(fact: dict[str, str], summary: str) -> bool:
    """Whether `summary` names the fact (case aside)."""
    lower = summary.lower()
    key = fact["key"]
    if fact["kind"] == "file":
        return key.lower() in lower or key.rsplit("/", 1)[-1].lower() in lower
    if fact["kind"] == "failure":
        return key.lower() in lower
    if key.lower() in lower:
        return True
    text = fact["text"].rsplit(" (id ", 1)[0]
    words = [w for w in _words(text) if len(w) > _SHORT]
    if not words:
        return False
    said = set(_words(lower))
    return sum(1 for w in words if w in said) >= WORDS_NEEDED * len(words)


def _words(text: str) -> list[str]:
    out, word = [], []
    for ch in text.lower():
        if ch.isalnum() or ch == "_":
            word.append(ch)
        elif word:
            out.append("".join(word))
            word = []
    if word:
        out.append("".join(word))
    return out


def note_summary(conn: Connection, project: Project, session_id: str, summary: str) -> list[dict]:
    """Check the client's summary against the session's facts; keep what it no longer
    mentions for the next packet. The facts it dropped."""
    dropped = [f for f in facts(conn, project, session_id) if not mentioned(f, summary)]
    with db.write(conn):
        sessions.set_compact_dropped(conn, session_id, json.dumps(dropped) if dropped else None)
    return dropped


def take_dropped(conn: Connection, session_id: str) -> list[dict]:
    """What the last compaction's summary dropped and no packet has said yet; cleared."""
    found = sessions.compact_dropped(conn, session_id)
    if not found:
        return []
    with db.write(conn):
        sessions.set_compact_dropped(conn, session_id, None)
    return list(json.loads(found))
