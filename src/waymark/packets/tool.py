"""The PreToolUse packet: what Waymark knows about the file about to be edited or the command
about to run, that this session has not been shown yet.

For an edit: memories scoped to the file, its symbols and the directories above it
(warnings first), and the active checkpoint's failed approaches that name the file. For a
shell command: its earlier failures in this project (exit code, a short redacted tail, and
what fixed it when a later run passed), warnings whose text names the command, and memories
scoped to the files it writes or names. Bounded (`packet.tool_tokens`, 300 by default), empty
when there is nothing, never the same item twice in a session.

A `[guard]` in `.waymark.toml` (`projects.guard`) makes a protected path or command ask for
confirmation, naming the memory that explains it. This runs before every edit and command:
the hottest path of all, so it reads a handful of index entries and imports nothing heavy.
"""

from __future__ import annotations

import os

from waymark.base import shell

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection
    from waymark.storage.memories import Memory

FILE_MEMORIES = 6
COMMAND_WARNINGS = 3
TAIL_SHOWN = 160
# Shown first: what most often saves a wasted edit.
TYPE_ORDER = ("warning", "lesson", "decision", "convention", "incident", "solution")

# The relevance of a warning found by the command's words, not a path (`relevance`).
WARNING_RELEVANCE = 0.5

# The confirmation a guard asks for: (key, reason). `key` names what was confirmed (Codex has
# no "ask": it is told no once, then let through). A plain tuple: a namedtuple costs a hook
# about 0.25 ms to define.
Ask = tuple[str, str]


def tool_packet(
    conn: Connection,
    project: Project,
    session_id: str,
    client: str,
    *,
    paths: list[str],
    command: str | None,
    cwd: str | None,
    record: bool = True,
    agent_id: str | None = None,
) -> tuple[str | None, Ask | None]:
    """(packet text or None, the confirmation a guard asks for or None). Inside a subagent
    (`agent_id`), "seen" is that subagent's own: its context is not the parent's."""
    from waymark.projects.pathnames import normalise
    from waymark.storage import sessions

    where = cwd or project.files
    named = list(paths)
    if command:
        named += shell.written_files(command)
    edited = normalise(project, [os.path.join(where or "", p) for p in named])
    if command and shell.program(command):
        named += _named_files(command, where)
    rel = normalise(project, [os.path.join(where or "", p) for p in named])
    if not rel and not command:
        return None, None
    from waymark.packets.seen import seen_by

    seen = seen_by(conn, session_id, agent_id)
    guarded = _configured(cwd, project)
    # A guard's reason names a memory even when it was shown: only then are the seen read.
    scoped = _scoped(conn, project, rel, frozenset() if guarded else seen) if rel else []
    naming = _warnings_naming(conn, project, command) if command else []
    ask = _guard(project, rel, command, cwd, scoped, naming) if guarded else None
    fresh = [m for m in scoped if m.id not in seen]
    approaches = [a for a in _failed_approaches(conn, project, session_id, rel)
                  if a[0] not in seen]  # fmt: skip
    failures: list[tuple[str, str]] = []
    if command:
        failures = [f for f in _failures(conn, project, command) if f[0] not in seen]
    shown = {m.id for m in fresh}
    warnings = [m for m in naming if m.id not in seen and m.id not in shown]
    impact = [d for d in _dependents(conn, project, edited) if d[0] not in seen]
    skills = [m for m in _skills(conn, project, command, rel) if m.id not in seen]
    models = [d for d in _dbt(conn, project, edited) if d[0] not in seen]
    others = [o for o in _other_agents(conn, project, session_id, edited) if o[0] not in seen]
    if not (fresh or approaches or failures or warnings or impact or skills or models or others):
        return None, ask  # the common case: nothing new, nothing more imported or written
    from waymark import settings
    from waymark.packets.render import render
    from waymark.storage.connection import read_only
    from waymark.storage.outcomes import reverted_among

    tokens, items, floor = settings.budget(conn, "tool")
    if floor > 0:  # `packet.tool_floor`: below it, a memory of a folder far above, a warning
        fresh = [m for m in fresh if relevance(m, rel) >= floor]
        warnings = [] if floor > WARNING_RELEVANCE else warnings
        if not (fresh or approaches or failures or warnings or impact or skills or models
                or others):  # fmt: skip
            return None, ask

    found = Found(skills=skills, failures=failures, fresh=fresh, approaches=approaches,
                  warnings=warnings, impact=impact, models=models, others=others,
                  reverted=reverted_among(conn, project.id, [m.id for m in fresh]),
                  one_file=len(rel) == 1)  # fmt: skip
    parts = [section(found) for section in SECTIONS]
    from waymark.packets.render import shrunk
    from waymark.storage.sessions import section_factors

    parts = shrunk(parts, section_factors(conn, project.id))
    text = render("tool", parts, tokens, items)
    if not text:
        return None, ask
    if record and not read_only(conn):
        from waymark.packets.seen import note_injected

        note_injected(
            conn,
            session_id,
            [m.id for m in fresh + warnings + skills if m.id in text],
            receipt=(project.id, "PreToolUse", "tool", text, parts),
            others=[
                k for k, line in approaches + failures + impact + models + others if line in text
            ],  # fmt: skip
            new_session=None if sessions.session_exists(conn, session_id) else client,
            agent_id=agent_id,
        )
    return text, ask


def relevance(memory: Memory, rel: list[str]) -> float:
    """How closely a memory scoped to a path concerns the files of the call (`rel`): 1 the
    file itself or one of its symbols, 0.5 its folder, halved for each folder further up
    (`packet.tool_floor` compares with it)."""
    target = (memory.scope_target or ".").split("::", 1)[0]
    best = 0.0
    for path in rel:
        if target == path:
            return 1.0
        if target == "." or path.startswith(target + "/"):
            between = path.count("/") - (0 if target == "." else target.count("/") + 1)
            best = max(best, 0.5 ** (between + 1))
    return best


class Found:
    """What a tool call's packet may show, gathered (each list already without what the
    session was shown): what its sections are made of."""

    def __init__(self, **parts: Any) -> None:
        self.skills: list[Memory] = parts["skills"]
        self.failures: list[tuple[str, str]] = parts["failures"]
        self.fresh: list[Memory] = parts["fresh"]
        self.approaches: list[tuple[str, str]] = parts["approaches"]
        self.warnings: list[Memory] = parts["warnings"]
        self.impact: list[tuple[str, str]] = parts["impact"]
        self.models: list[tuple[str, str]] = parts["models"]
        self.others: list[tuple[str, str]] = parts["others"]
        self.reverted: set[str] = parts["reverted"]
        self.one_file: bool = parts["one_file"]


# Titles and reasons name no command text or path: they are kept in the receipts, and a
# command can hold a secret (each memory line carries its own target).


def _another_agent(found: Found) -> Any:
    from waymark.packets.render import Section

    return Section("Another agent is on this", [o[1] for o in found.others], 160, 0,
                   [(o[0], "another live agent's task is changing it") for o in found.others])  # fmt: skip


def _skill(found: Found) -> Any:
    from waymark.packets.lines import memory_line
    from waymark.packets.render import Section

    return Section("A skill for this", [memory_line(m) for m in found.skills], 160, 0,
                   [(m.id, "its trigger matches") for m in found.skills])  # fmt: skip


def _failed_before(found: Found) -> Any:
    from waymark.packets.render import Section

    return Section("Before you run this command", [f[1] for f in found.failures], 160, 0,
                   [(f[0], "the same command failed before") for f in found.failures])  # fmt: skip


def _known(found: Found) -> Any:
    from waymark.packets.lines import memory_line
    from waymark.packets.render import Section

    flag = lambda m: "REVERTED" if m.id in found.reverted else ""  # noqa: E731
    return Section(
        f"Known about {'this file' if found.one_file else 'these files'}",
        [memory_line(m, flag(m)) for m in found.fresh] + [a[1] for a in found.approaches], 260, 0,
        [(m.id, f"path match: {m.scope_target}") for m in found.fresh]
        + [(a[0].partition("#")[0], "failed approach naming the file") for a in found.approaches],
    )  # fmt: skip


def _warned(found: Found) -> Any:
    from waymark.packets.lines import memory_line
    from waymark.packets.render import Section

    return Section("Warnings naming this command", [memory_line(m) for m in found.warnings], 160,
                   0, [(m.id, "its text names the command") for m in found.warnings])  # fmt: skip


def _depending(found: Found) -> Any:
    from waymark.packets.render import Section

    return Section("What depends on it", [d[1] for d in found.impact], 120, 0,
                   [(d[0], "the code map's static dependents") for d in found.impact])  # fmt: skip


def _lineage(found: Found) -> Any:
    from waymark.packets.render import Section

    return Section("The dbt lineage", [d[1] for d in found.models], 200, 0,
                   [(d[0], "dbt's manifest and latest results") for d in found.models])  # fmt: skip


# The packet's sections, in the order the model reads them; a new one is a function above,
# a list in `Found` and a line here.
SECTIONS = (_another_agent, _skill, _failed_before, _known, _warned, _depending, _lineage)

SKILLS_READ = 50


def _skills(
    conn: Connection, project: Project, command: str | None, rel: list[str]
) -> list[Memory]:
    """Approved skills (`curation.skills`: keyed `skill:`) whose trigger is the command's
    program and subcommand or one of the files; one index range when there are none."""
    from waymark.storage import memories as rows

    said = shell.summary(command) if command else ""
    found = []
    for m in rows.by_key_prefix(conn, project.id, "skill:", SKILLS_READ):
        commands = {e.get("command") for e in m.evidence}
        paths = {e.get("path") for e in m.evidence}
        if (said and said in commands) or any(p in paths for p in rel):
            found.append(m)
    return found[:2]


def _dependents(conn: Connection, project: Project, edited: list[str]) -> list[tuple[str, str]]:
    """(seen key, line) of the static dependents of the files an edit changes (two at most),
    from the code map's newest resolved snapshot: how many files, and the top three."""
    from waymark.codemap import facts

    out = []
    for path in edited[:2]:
        found = facts.dependents(conn, project.id, path)
        if found:
            out.append((f"map:{found['snapshot']}:{path}", facts.dependents_line(path, found)))
    return out


def _dbt(conn: Connection, project: Project, edited: list[str]) -> list[tuple[str, str]]:
    """(seen key, line) of the dbt models the edited files define: their downstream models
    and exposures and their failing tests (`knowledge.lineage`); one index probe without dbt."""
    from waymark.storage.dbt import any_project

    if not edited or not any_project(conn, project.id):
        return []
    from waymark.knowledge.lineage import edit_lines
    from waymark.packets.render import fence_text

    return [(key, fence_text(line)) for key, line in edit_lines(conn, project, edited)]


def _scoped(
    conn: Connection, project: Project, rel: list[str], seen: set[str] | frozenset[str]
) -> list[Memory]:
    from waymark.packets.briefing import file_memories

    found = file_memories(conn, project, rel, FILE_MEMORIES * 2, exclude=seen)
    rank = {t: i for i, t in enumerate(TYPE_ORDER)}
    found.sort(key=lambda m: rank.get(m.type, len(TYPE_ORDER)))  # stable: nearest first within
    return found[:FILE_MEMORIES]


def _other_agents(
    conn: Connection, project: Project, session_id: str, edited: list[str]
) -> list[tuple[str, str]]:
    """(key, line) for each file about to be changed that another live agent's task is
    changing (`packets.agents`)."""
    if not edited:
        return []
    from waymark.packets.agents import before_edit

    return before_edit(conn, project, session_id, edited)


def _failed_approaches(
    conn: Connection, project: Project, session_id: str, rel: list[str]
) -> list[tuple[str, str]]:
    """(key, line) of the failed approaches of the active checkpoint the session works on
    that name one of the files."""
    from waymark.base import jsonlite as json
    from waymark.base.clock import now
    from waymark.storage import checkpoints

    found = checkpoints.active_revision(conn, project.id, session_id, now())
    if found is None:
        return []
    revision_id, body = found
    items = json.loads(body).get("failed_approaches") or []
    names = set(rel) | {p.rsplit("/", 1)[-1] for p in rel if "." in p.rsplit("/", 1)[-1]}
    out = []
    for i, item in enumerate(items):
        approach = item.get("approach", "") if isinstance(item, dict) else str(item)
        why = item.get("why_failed", "") if isinstance(item, dict) else ""
        text = f"{approach} {why}"
        if any(name in text for name in names):
            from waymark.packets.render import fence_text

            line = f"- [failed approach · checkpoint] {approach}" + (
                f": failed because {why}" if why else ""
            )
            out.append((f"{revision_id}#failed{i}", fence_text(line)[:400]))
    return out


def _failures(conn: Connection, project: Project, command: str) -> list[tuple[str, str]]:
    """(key, line) for the command's earlier failures: one line, the newest, with the count."""
    from waymark.base import jsonlite as json
    from waymark.handoff import ledger
    from waymark.packets.briefing import age
    from waymark.packets.render import fence_text

    found = ledger.earlier_failures(conn, project, command)
    if not found:
        return []
    last = found[0]
    times = f"{len(found)} times" if len(found) > 1 else "once"
    code = f", exit {last['exit_code']}" if last["exit_code"] is not None else ""
    when = age(last["failed_at"])
    when = "just now" if when == "now" else f"{when} ago"
    line = f"- failed {times} in this project (last {when}{code})"
    tail = " ".join((last["error_tail"] or "").split())[-TAIL_SHOWN:]
    if tail:
        line += f": …{tail}"
    passed = next((f for f in found if f["passed_at"]), None)
    if passed is not None:
        fix = json.loads(passed["fix"]) if passed["fix"] else []
        line += f". It passed later ({passed['passed_at'][:10]})" + (
            f" after edits to {', '.join(fix)}" if fix else ""
        )
    return [(f"failure:{last['id']}", fence_text(line))]


def _warnings_naming(conn: Connection, project: Project, command: str) -> list[Memory]:
    """Active warnings whose text names the command's first words (not for plain readers)."""
    if shell.program(command) in shell.READERS:
        return []
    phrase = _phrase(command)
    if not phrase:
        return []
    from waymark.storage import memories as rows
    from waymark.storage import search

    match = '"' + phrase + '"'
    rowids = search.typed_matches(conn, project.id, match, ("warning",), COMMAND_WARNINGS)
    by_rowid = rows.by_rowids(conn, rowids)
    return [by_rowid[r] for r in rowids if r in by_rowid]


def _phrase(command: str) -> str:
    """The words of the command's head a warning must name: no flags, no punctuation."""
    words = [w for w in shell.head(command).split() if w.replace("-", "").isalnum()]
    return " ".join(w for w in words if not w.startswith("-"))


def _guard(
    project: Project,
    rel: list[str],
    command: str | None,
    cwd: str | None,
    scoped: list[Memory],
    naming: list[Memory],
) -> Ask | None:
    from waymark.projects import guard

    rules = guard.guard_for(cwd, project.files)
    if not (rules.paths or rules.commands):
        return None
    source = os.path.relpath(rules.source, project.files) if project.files else rules.source
    for path in rel:
        pattern = guard.protected_path(path, rules)
        if pattern is not None:
            about = next((m for m in scoped if m.scope_target), scoped[0] if scoped else None)
            return f"path:{path}", _reason(f"{path} is", pattern, source, about)
    if command:
        pattern = guard.protected_command(command, rules)
        if pattern is not None:
            return (
                f"command:{shell.normal(command)[:200]}",
                _reason(f"`{_short(command)}` is", pattern, source, next(iter(naming), None)),
            )
    return None


def _reason(what: str, pattern: str, source: str, memory: Memory | None) -> str:
    from waymark.packets.render import fence_text

    text = f"Waymark: {what} protected by {source} [guard] ({pattern!r})."
    if memory is not None:
        said = fence_text(memory.content)[:240].rstrip(". ")
        text += f" Memory {memory.id} ({memory.type}): {said}."
    return text + " Confirm with the user before going on."


def _named_files(command: str, where: str | None) -> list[str]:
    """Arguments of the command that are existing files (a test file, a script), at most 4."""
    out: list[str] = []
    for word in command.split()[1:]:
        word = word.strip("'\"")
        if word.startswith("-") or ("/" not in word and "." not in word) or len(word) > 200:
            continue
        full = word if os.path.isabs(word) else os.path.join(where or "", word)
        if os.path.isfile(full):
            out.append(word)
            if len(out) == 4:
                break
    return out


def _configured(cwd: str | None, project: Project) -> bool:
    """True when a `.waymark.toml` lies between `cwd` and the project root: only then is the
    guard read."""
    from waymark.projects.locate import config_files

    return bool(config_files(cwd, project.files))


def _short(command: str | None) -> str:
    text = shell.normal(command or "").replace("`", "'")
    return (text[:60] + "…") if len(text) > 60 else text


def answer(conn: Connection, request: dict) -> dict:
    """The warm server's reply to a `tool` request (a PreToolUse hook's): the packet and the
    confirmation a guard asks for, made where everything is loaded (`{"ok": true, "text":
    str | None, "ask": [key, reason] | None}`); the hook words the ask its client's way."""
    from waymark.projects.capture import EVENT_ERROR, hook_project, requested_event

    event = requested_event(request)
    if event is None:
        return {"ok": False, "error": EVENT_ERROR}
    paths, command = request.get("paths"), request.get("command")
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        return {"ok": False, "error": "paths must be a list of strings"}
    if command is not None and not isinstance(command, str):
        return {"ok": False, "error": "command must be a string"}
    found = hook_project(conn, event["cwd"], event["session_id"])
    if found is None or not found[1]["enabled"]:
        return {"ok": True, "text": None, "ask": None}
    project, chosen = found
    text, ask = tool_packet(
        conn, project, event["session_id"], event["client"], paths=list(paths),
        command=command, cwd=event["cwd"], record=bool(chosen["records"]),
        agent_id=event["agent_id"],
    )  # fmt: skip
    if command and chosen["records"]:  # after the packet: what it showed came before this call
        from waymark.handoff.ledger import note_shell_writes

        note_shell_writes(conn, project, event["session_id"], event["client"], command,
                          event["cwd"])  # fmt: skip
    return {"ok": True, "text": text, "ask": list(ask) if ask else None}
