"""Measured use of what the packets show: for each item a packet put in front of the model,
did the session then use it? No model: what the session did says.

Used, in this order of evidence: its id cited by the agent in its last message (the Stop
payload; the message itself is never stored) or in a tool call that changed it or gave it
feedback (`cited`, `tool`, `feedback`); a file it names (a memory's file scope or evidence
path) edited after it was shown (`file`); a command it names in backticks run after it was
shown (`command`: the program and subcommand, as the work map records them). What
PreToolUse showed was shown because of the call about to run: that call (the first edit of
the file, the first run of the command after the showing) is its cause, not its use; a
later one is. Each item is
counted once per session; a memory's `used` count drives ranking (one shown often and never
used decays faster: `recall.fusion`) and `waymark stats` reports the rates.

Settled at each Stop (the message is only there) and SessionEnd, from a few index reads.

Sections that are never used shrink: at each SessionEnd every packet section's use over the
last SECTION_DAYS is counted, and one that showed SECTION_MIN items or more keeps half its
token budget when none was used, three quarters under SECTION_LOW of them; the packets read
the factors (`section_factors`). Bounded: never below half, back to whole as soon as its items
are used again, and never the handoff's own sections or the rules (KEEP_WHOLE), which an agent
follows without citing them.
"""

from __future__ import annotations

from waymark.base import clock
from waymark.storage import connection as db
from waymark.storage import sessions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection

ID_CHARS = 26  # a memory id (ULID)
SECTION_DAYS = 30
SECTION_MIN = 30  # items shown before a section's use says anything
SECTION_LOW = 0.05
SHRUNK, HALF = 0.75, 0.5
# The handoff itself and the rules an agent follows without citing them: always whole.
KEEP_WHOLE = frozenset(("Handoff needed", "Active checkpoint", "Lessons", "Rules", "Project"))
MAX_MESSAGE = 200_000  # characters of the last message searched for ids


def settle(
    conn: Connection, project: Project, session_id: str, last_message: str | None = None
) -> list[tuple[str, str]]:
    """Record what the session used of what it was shown since the last settle; (item,
    how) of each newly used."""
    shown = sessions.shown_unused(conn, session_id)
    if not shown:
        return []
    message = (last_message or "")[:MAX_MESSAGE].upper()
    used: dict[str, str] = {}
    for item, _, _ in shown:
        if message and item.upper() in message:
            used[item] = "cited"
    memory_ids = [i for i, _, _ in shown if len(i) == ID_CHARS and i not in used]
    if memory_ids:
        from waymark.storage.events import named_in_session

        for item, how in named_in_session(conn, session_id, memory_ids).items():
            used.setdefault(item, how)
        rest = [i for i in memory_ids if i not in used]
        if rest:
            first = {item: (at, hook) for item, at, hook in shown}
            used.update(_by_work(conn, session_id, rest, first))
    if not used:
        return []
    found = sorted(used.items())
    with db.write(conn):
        sessions.mark_used(conn, session_id, found, clock.now())
    return found


def _by_work(
    conn: Connection,
    session_id: str,
    memory_ids: list[str],
    shown: dict[str, tuple[str, str]],
) -> dict[str, str]:
    """Memories whose file was edited, or whose named command ran, after they were shown
    (`shown`: when, and by which hook); after PreToolUse showed one, the first such edit or
    run is the call that brought it and does not count."""
    edits, steps = sessions.session_activity(conn, session_id)
    if not edits and not steps:
        return {}
    from waymark.storage import memories as rows

    out: dict[str, str] = {}
    for memory_id in memory_ids:
        m = rows.get_memory(conn, memory_id)
        if m is None:
            continue
        since, hook = shown[memory_id]
        caused = 1 if hook == "PreToolUse" else 0  # the call it was shown before
        files = {m.scope_target} if m.scope_type == "file" and m.scope_target else set()
        files |= {e["path"] for e in m.evidence if isinstance(e.get("path"), str)}
        if len([1 for at, path in edits if at >= since and path in files]) > caused:
            out[memory_id] = "file"
            continue
        named = _commands(m.content)
        runs = [1 for at, target in steps if at >= since and _runs(target, named)] if named else []
        if len(runs) > caused:
            out[memory_id] = "command"
    return out


def _commands(text: str) -> list[str]:
    """The program and subcommand of each `command` a memory names in backticks."""
    from waymark.base import shell

    out = []
    parts = text.split("`")
    for quoted in parts[1::2]:
        said = shell.summary(quoted)
        if said and shell.program(quoted) not in shell.READERS:
            out.append(said)
    return out


def _runs(target: str, named: list[str]) -> bool:
    """A work-map step (`pytest`, `npm run -> dist/x`) runs one of the named commands."""
    said = target.split(" -> ", 1)[0]
    return any(said == n or said.startswith(n + " ") for n in named)


def refresh_sections(conn: Connection, project: Project) -> list[tuple[str, int, int, float]]:
    """Each packet section's measured use and the budget share it keeps; stored, returned."""
    since = clock.second(clock.epoch(clock.now()) - SECTION_DAYS * 86400)
    out = []
    for section, shown, used in sessions.section_counts(conn, project.id, since):
        factor = 1.0
        if shown >= SECTION_MIN and section not in KEEP_WHOLE:
            factor = HALF if used == 0 else SHRUNK if used / shown < SECTION_LOW else 1.0
        out.append((section, shown, used, factor))
    with db.write(conn):
        sessions.put_section_use(conn, project.id, out, clock.now())
    return out
