"""The SessionStart packet: start every session informed.

startup and clear get the full packet: a reminder when the last session ended without a
handoff, the active checkpoint (next action first), lessons, pinned rules, a short ledger of
recent work, and what changed in the repository since. compact re-injects the checkpoint and
the rules; resume gets a one-line pointer, never a second copy.
"""

from __future__ import annotations

from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.packets.render import Section, render

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection

# A SessionStart the warm server answers waits at most this long for the map's refresh (the
# default `map.refresh_ms` is 150 ms): the hook waits for the whole answer 3.3 s at most.
WARM_REFRESH_S = 0.5

RESUME_POINTER = (
    "Waymark: this project's memory was given at the start of this session; call the "
    "`recall` tool for anything more."
)


def session_start(
    conn: Connection,
    project: Project,
    session_id: str,
    client: str,
    source: str | None,
    cwd: str,
    *,
    record: bool,
    started: tuple[str, Any] | None = None,
    note: Callable[[str], None] = lambda _: None,
    refresh_most_s: float | None = None,
) -> str | None:
    """All a SessionStart does, in the hook or in the warm MCP server: `.waymark.toml` keys
    Waymark does not know said through `note` (a typo would otherwise be ignored in silence),
    the code map brought up to date before the packet reads it (within `map.refresh_ms`, and
    `refresh_most_s` when given) or its refresh started in the background after (a failure
    costs the map's freshness, never the packet), then the session opened and its packet
    (`start_session`)."""
    from waymark.projects.locate import config_files, unknown_keys

    for path in config_files(cwd, project.files):
        for sentence in unknown_keys(path):
            note(f"{sentence}; Waymark ignores it")
    later: list[str] = []  # a map refresh for the background, started after the packet
    if record and (source or "startup") in ("startup", "clear"):
        from waymark.codemap.freshness import freshen

        said = freshen(conn, project, "start", later.append, most_s=refresh_most_s)
        if said.startswith("failed"):
            note(f"code map refresh {said}")
    text = start_session(conn, project, session_id, client, source, record=record,
                         started=started)  # fmt: skip
    if later:
        from waymark.codemap.freshness import in_background

        for root in later:
            in_background(root)
    return text


def begin_status(cwd: str) -> tuple[str, Any] | None:
    """(the working tree of `cwd`, its `git status` begun now), or None outside git: begun
    before the store is opened and read, it is done, or nearly, when the packet asks for it
    (at a million memories the packet had waited up to 6 ms for git, begun only then)."""
    from waymark.projects import git
    from waymark.projects.locate import locate

    try:
        where = locate(cwd)
    except Exception:  # no such directory: the caller goes on, and capture decides
        return None
    if where.how == "directory":
        return None
    status = git.start_dirty(where.top)
    return (where.top, status) if status is not None else None


def answer(conn: Connection, request: dict) -> dict:
    """The warm server's reply to a `session_start` request (a SessionStart hook's): what the
    hook would inject, made where everything is loaded (`{"ok": true, "text": str | None,
    "notes": [str]}`; the hook logs the notes, as it does its own). The map's refresh waits
    at most WARM_REFRESH_S here (past it the background finishes it): a hook waits for its
    answer, once the server took the request, a few seconds at most."""
    from waymark.projects.capture import EVENT_ERROR, hook_project, requested_event

    event = requested_event(request)
    if event is None:
        return {"ok": False, "error": EVENT_ERROR}
    source = request.get("source")
    if source is not None and not isinstance(source, str):
        return {"ok": False, "error": "source must be a string"}
    started = begin_status(event["cwd"])  # git works while the store is read
    try:
        found = hook_project(conn, event["cwd"], event["session_id"])
        if found is None or not found[1]["enabled"]:
            return {"ok": True, "text": None, "notes": []}
        project, chosen = found
        notes: list[str] = []
        text = session_start(conn, project, event["session_id"], event["client"], source,
                             event["cwd"], record=bool(chosen["records"]), started=started,
                             note=notes.append, refresh_most_s=WARM_REFRESH_S)  # fmt: skip
        return {"ok": True, "text": text, "notes": notes}
    finally:
        if started is not None:
            started[1].discard()  # a status nobody read: reaped, no zombie in the server


def start_session(
    conn: Connection,
    project: Project,
    session_id: str,
    client: str,
    source: str | None,
    *,
    record: bool = True,
    started: tuple[str, Any] | None = None,
) -> str | None:
    """Open the session's ledger and return the text to inject for this `source`, if any.
    With `record` False (capture read-only) nothing is written, only read. `started` is
    (a working tree, its `git status` begun by the caller): used when it is the project's."""
    from waymark.handoff import ledger
    from waymark.packets.seen import note_injected
    from waymark.projects import git

    source = source or "startup"
    root = project.files
    # git works while we read the database; begun by the caller before it opened the store,
    # it is done, or nearly
    if started and started[0] != root and started[1] is not None:
        started[1].discard()  # another working tree's: not this project's status
    status = started[1] if started and started[0] == root else git.start_dirty(root)
    snapshot: list[dict[str, str] | None] = []

    def dirty() -> dict[str, str] | None:
        if not snapshot:
            snapshot.append(git.finish_dirty(status, root))
        return snapshot[0]

    head = git.head(root)
    branch = git.branch(root)
    from waymark.storage.connection import read_only

    writable = record and not read_only(conn)  # read-only: its memory, unrecorded
    if source in ("compact", "clear") and writable:
        # What was shown before is gone from the model's context: it may be shown again.
        from waymark.storage import connection as db
        from waymark.storage.sessions import forget_injected

        with db.write(conn):
            forget_injected(conn, session_id)
    text, shown = "", ([], [])  # type: tuple[str, tuple[list[str], list[Section]]]
    if source != "resume":
        text, shown = packet(conn, project, session_id, full=source != "compact", head=head,
                             dirty=dirty, branch=branch, client=client)  # fmt: skip
    seen = dirty()
    if writable:
        stored = json.dumps(ledger.stored_dirty(seen), sort_keys=True) if seen is not None else None
        ledger.ensure_session(conn, project, session_id, client, head=head, dirty=stored,
                              branch=branch)  # fmt: skip
    if source == "resume":
        return RESUME_POINTER
    if not text:
        return None
    if writable:
        note_injected(
            conn, session_id, [m for m in shown[0] if m in text],
            receipt=(project.id, "SessionStart", source, text, shown[1]),
        )  # fmt: skip
        if "\n## Project\n" in text:  # said once: a move, a rename, a new name
            from waymark.storage import connection as db
            from waymark.storage.projects import clear_notice

            with db.write(conn):
                clear_notice(conn, project.id)
    return text


def packet(
    conn: Connection,
    project: Project,
    session_id: str,
    *,
    full: bool,
    head: str | None,
    dirty: Callable[[], dict[str, str] | None],
    branch: str | None = None,
    client: str | None = None,
) -> tuple[str, tuple[list[str], list[Section]]]:
    """The packet's text, and (the memories it may show, its sections); `dirty` is asked
    last, so git runs while the database is read. Its sections are FULL's functions (after a
    compaction, COMPACT's), in order, each a function of what was asked (`Start`)."""
    from waymark import settings
    from waymark.packets.render import shrunk
    from waymark.storage.sessions import section_factors

    start = Start(conn, project, session_id, full=full, head=head, dirty=dirty, branch=branch,
                  client=client)  # fmt: skip
    parts = [section(start) for section in (FULL if full else COMPACT)]
    budget, items, floor = settings.budget(conn, "session_start")
    parts = shrunk(floored(parts, floor), section_factors(conn, project.id))
    text = render("session-start", parts, budget, items)
    memories = [
        memory_id
        for part in parts
        if part.title in ("Rules", "Decisions")
        for memory_id, _ in part.notes or ()
        if memory_id
    ]
    return text, (memories, parts)


# What is not new since the last session, at relevance 0.5 (`packet.session_start_floor`):
# sections whole, and the older decisions of "Decisions" (their note says so).
CONTEXT = ("Recent work", "Repository since last session", "Code map")
OLDER = "newest decision"


def floored(parts: list[Section], floor: float) -> list[Section]:
    """`parts` without what falls below `floor`: at 0.5 or under, everything; above it only
    what the last session left and what is new since (relevance 1)."""
    if floor <= 0.5:
        return parts
    out = []
    for part in parts:
        if part.title in CONTEXT:
            part = part._replace(items=[], more=0, notes=None, unread=())
        elif part.notes and any(why == OLDER for _, why in part.notes):
            pairs = [(line, note) for line, note in zip(part.items, part.notes, strict=False)
                     if note[1] != OLDER]  # fmt: skip
            part = part._replace(items=[line for line, _ in pairs],
                                 notes=[note for _, note in pairs])  # fmt: skip
        out.append(part)
    return out


class Start:
    """What every section of a SessionStart packet reads; the checkpoint and the rules,
    which more than one section reads, read once."""

    def __init__(
        self, conn: Connection, project: Project, session_id: str, *, full: bool,
        head: str | None, dirty: Callable[[], dict[str, str] | None], branch: str | None,
        client: str | None,
    ) -> None:  # fmt: skip
        from waymark.packets import sections

        self.conn, self.project, self.session_id, self.full = conn, project, session_id, full
        self.head, self.dirty, self.branch, self.client = head, dirty, branch, client
        self.checkpoint = sections.checkpoint(conn, project, branch, session_id)
        self.rules = sections.rules(conn, project, client=client)


def _project(start: Start) -> Section:
    """A notice of the project (a move, a rename) and how many proposals wait for review."""
    from waymark.storage.candidates import count_candidates
    from waymark.storage.projects import notice

    said = notice(start.conn, start.project.id) if start.full else None
    waiting = count_candidates(start.conn, start.project.id) if start.full else 0
    heard = [said] if said else []
    if waiting:  # how many, never their text: that waits for a review
        heard.append(
            f"{waiting} proposed {'memory waits' if waiting == 1 else 'memories wait'}"
            " for review (`waymark candidates`)"
        )
    return Section("Project", heard, 80)


def _handoffs(start: Start) -> Section:
    from waymark.packets import sections

    found = (
        sections.pending_handoffs(start.conn, start.project, start.session_id) if start.full else []
    )
    return Section("Handoff needed", found, 200)


def _checkpoint(start: Start) -> Section:
    lines, checkpoint_id = start.checkpoint.lines, start.checkpoint.id
    return Section("Active checkpoint", lines, 650, 0,
                   [(checkpoint_id, "active checkpoint")] * len(lines))  # fmt: skip


def _agents(start: Start) -> Section:
    """The other agents at work here, and the tasks open for the taking (`handoff.tasks`)."""
    from waymark.packets.agents import at_work

    lines = at_work(start.conn, start.project, start.session_id, start.checkpoint.id)
    return Section("Agents at work", lines, 220, 0, [(None, "agents at work")] * len(lines))


def _lessons(start: Start) -> Section:
    return Section("Lessons", start.checkpoint.lessons, 300, 0, start.checkpoint.lesson_notes)


def _rules(start: Start) -> Section:
    lines, notes, more, unread = start.rules
    return Section("Rules", lines, 450, more, notes, unread)


def _relied_on(start: Start) -> Section:
    """After a compaction: what this session already relied on."""
    from waymark.packets.compaction import relied_on_section

    return relied_on_section(start.conn, start.session_id)


def _so_far(start: Start) -> Section:
    from waymark.packets import sections

    return Section("This session so far", sections.work_map(start.conn, start.session_id), 180)


def _decisions(start: Start) -> Section:
    from waymark.packets import sections

    shown = {memory_id for memory_id, _ in start.rules[1] if memory_id}
    lines, notes, more, unread = sections.decisions(start.conn, start.project, start.session_id,
                                                    shown, start.client)  # fmt: skip
    return Section("Decisions", lines, 250, more, notes, unread)


def _recent(start: Start) -> Section:
    from waymark.packets import sections

    return Section("Recent work", sections.recent_work(start.conn, start.project,
                                                       start.session_id), 250)  # fmt: skip


def _repository(start: Start) -> Section:
    from waymark.packets import sections

    changes = sections.repo_changes(start.conn, start.project, start.session_id, start.head,
                                    start.dirty(), start.branch)  # fmt: skip
    return Section("Repository since last session", changes, 200, raw=True)


def _code(start: Start) -> Section:
    return code_section(start.conn, start.project, start.session_id, start.checkpoint.files)


# The packet's sections, in the order the model reads them: at a session's start (startup,
# clear) and after a compaction. A new section is a function above and a line here.
FULL = (_project, _handoffs, _checkpoint, _agents, _lessons, _rules, _decisions, _recent,
        _repository, _code)  # fmt: skip
COMPACT = (_project, _handoffs, _checkpoint, _agents, _lessons, _rules, _relied_on, _so_far)


def code_section(
    conn: Connection, project: Project, session_id: str, files: Sequence[str]
) -> Section:
    """The code map's part of the packet: what changed in the code's structure since the
    last session began, the static dependents of the checkpoint's relevant files (two at
    most), and, when there is room, an overview of the map. Nothing without a map."""
    from waymark.codemap import facts

    changed, more = facts.since_session(conn, project.id, session_id)
    lines = list(changed)
    for path in list(files)[:2]:
        found = facts.dependents(conn, project.id, path)
        if found:
            lines.append(facts.dependents_line(path, found))
    lines += facts.overview(conn, project.id)  # last: the first thing the budget drops
    return Section("Code map", lines, 220, more, raw=True)


def _agent_name(agent_type: str | None) -> str | None:
    """The agent a subagent's memories are written for, or None when its type is not a
    name Waymark stores (it then reads everyone's only)."""
    from waymark.errors import InvalidScope
    from waymark.memories.scope import check_agent

    try:
        return check_agent(agent_type or None)
    except InvalidScope:
        return None


def _given_lines(task: Any) -> list[str]:
    """A task a lead gave its subagent: what to do, when it is done, and how to save to it
    (its decisions and lessons reach the lead when the subagent stops)."""
    from waymark.handoff.revision import render_done
    from waymark.packets.render import fence_text

    body = task.revision.body
    lines = [f"Objective: {fence_text(str(body.get('objective') or ''))}"]
    if body.get("next_action"):
        lines.append(f"Next action: {fence_text(body['next_action'])}")
    lines += [f"Done when: {fence_text(render_done(d))}" for d in body.get("done_when") or []]
    lines.append(
        f"Save what you decide and learn to it with the `checkpoint` tool: operation "
        f'"revise" (or "complete"), checkpoint_id "{task.id}", expected_revision_id '
        f'"{task.revision.id}"; your lead reads it when you finish.'
    )
    return lines


def subagent_packet(
    conn: Connection,
    project: Project,
    session_id: str,
    client: str,
    agent_id: str,
    *,
    agent_type: str | None = None,
    record: bool = True,
    given: Any = None,
) -> str | None:
    """A subagent's packet (`packet.subagent`): "small" is the task its lead gave it
    (`given`, a checkpoint: what to do and how to save to it) or else the active checkpoint's
    next action, and the rules (everyone's and those of its `agent_type`), within
    `packet.subagent_tokens`; "none" is nothing. Recorded as that subagent's own (its
    context is not the parent's)."""
    from waymark import settings
    from waymark.packets import sections
    from waymark.packets.seen import note_injected
    from waymark.storage.connection import read_only

    if settings.get(conn, "packet.subagent") != "small":
        return None
    checkpoint = sections.checkpoint(conn, project, session_id=session_id)  # its lead's task
    nxt = checkpoint.next_action
    rules = sections.rules(conn, project, _agent_name(agent_type), client)
    mine = _given_lines(given) if given is not None else []
    parts = [
        Section("Your task, from your lead", mine, 300, 0,
                [(given.id if given else None, "a task its lead gave it")] * len(mine)),
        Section(
            "Active checkpoint", [] if mine else nxt, 150, 0,
            [(checkpoint.id, "active checkpoint")] * (0 if mine else len(nxt)),
        ),
        Section("Rules", rules[0], 400, rules[2], rules[1], rules[3]),
    ]  # fmt: skip
    text = render("subagent", parts, settings.get(conn, "packet.subagent_tokens"))
    if not text:
        return None
    if record and not read_only(conn):
        from waymark.storage.sessions import session_exists

        note_injected(
            conn,
            session_id,
            [memory_id for memory_id, _ in rules[1] if memory_id and memory_id in text],
            receipt=(project.id, "SubagentStart", "subagent", text, parts),
            new_session=None if session_exists(conn, session_id) else client,
            agent_id=agent_id,
        )
    return text
