"""The sections of a SessionStart packet, each a list of lines in priority order (the line
helpers every packet uses are `lines`; what a shown packet records is `seen`)."""

from __future__ import annotations

from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.base.record import record
from waymark.packets.lines import memory_line
from waymark.packets.render import fence_text
from waymark.storage import checkpoints as handoffs
from waymark.storage import sessions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection
    from waymark.storage.memories import Memory


Checkpoint = record("Checkpoint", "id lines next_action lessons lesson_notes files", defaults=((),))


def checkpoint(
    conn: Connection, project: Project, branch: str | None = None, session_id: str | None = None
) -> Checkpoint:
    """The active checkpoint's id and lines (next action first; one saved on another branch
    than `branch`, the one checked out now, says so), and its lessons with their receipts'
    notes (which checkpoint each came from)."""
    from waymark.handoff.checkpoints import past_lessons
    from waymark.packets.briefing import checkpoint_section

    section = checkpoint_section(conn, project, files=True, session_id=session_id)
    if section is None:
        past = past_lessons(conn, project, branch=branch)
        return Checkpoint(None, [], [], [_past(x) for x in past], _past_notes(past))
    lines = []
    if section["next_action"]:
        lines.append(f"Next action: {fence_text(section['next_action'])}")
    saved_on = section.get("git_branch")
    if branch:  # compared, and named, as stored (a branch that reads as a secret, redacted)
        from waymark.handoff.ledger import stored_name

        branch = stored_name(branch)
    elsewhere = (
        f" on branch {saved_on}, not {branch}" if saved_on and branch and saved_on != branch else ""
    )
    lines.append(
        f"(checkpoint {section['id']}, revision {section['revision_id']}, saved "
        f"{section['updated_at'][:16].replace('T', ' ')} UTC"
        f"{' ' + fence_text(elsewhere) if elsewhere else ''})"
    )
    if section["evidence_state"] != "FRESH":
        stale = [
            f"{e['path']} {e['state']}" for e in section["evidence"] if e["state"] != "UNCHANGED"
        ]
        lines.append(f"RECHECK REQUIRED: evidence changed since the save: {', '.join(stale)}")
    for line in section["text"].splitlines():
        if line.startswith(("Next action:", "Lessons:")):
            continue
        if line.startswith("- ") and _is_lesson(line, section["lessons"]):
            continue
        lines.append(fence_text(line))
    lessons = [
        f"- {'(historical) ' if lesson.get('historical') else ''}{fence_text(_lesson(lesson))}"
        for lesson in section["lessons"]
    ]
    notes = [(section["id"], "lesson of the active checkpoint")] * len(lessons)
    own = {json.dumps(_bare(lesson), sort_keys=True) for lesson in section["lessons"]}
    past = past_lessons(conn, project, own, branch=branch)
    lessons += [_past(lesson) for lesson in past]
    nxt = [lines[0]] if section["next_action"] else []
    return Checkpoint(section["id"], lines, nxt, lessons, notes + _past_notes(past),
                      section["relevant_files"])  # fmt: skip


def _past_notes(past: list[dict]) -> list[tuple[str | None, str]]:
    return [(lesson["source"], "lesson of a completed checkpoint") for lesson in past]


def _past(lesson: dict) -> str:
    """A finished task's lesson, cited: which checkpoint, completed when."""
    when = lesson["finished"][:10]
    return (
        f"- (historical, from checkpoint {lesson['source']}, completed {when}) "
        f"{fence_text(_lesson(lesson))}"
    )


def _bare(lesson: dict) -> dict:
    return {k: v for k, v in lesson.items() if k not in ("historical", "source", "finished")}


def _lesson(lesson: dict) -> str:
    from waymark.handoff.revision import render_lesson

    return render_lesson(_bare(lesson))


def _is_lesson(line: str, lessons: list[dict]) -> bool:
    return any(line == f"- {_lesson(lesson)}" for lesson in lessons if not lesson.get("historical"))


RULES_READ = 15  # more than any budget shows; the rest are counted, not read
UNREAD_NAMED = 100  # rules not read, named in the receipt as left out (the rest counted)


def rules(
    conn: Connection, project: Project, agent: str | None = None, client: str | None = None
) -> tuple[list[str], list[tuple[str, str]], int, list[str]]:
    """Pinned memories and high-priority conventions, warnings, decisions, preferences
    (everyone's, and `agent`'s for a subagent of that type): their lines, (id, why) notes,
    how many more there are than were read, and the ids of those (UNREAD_NAMED at most).
    One that a file `client` loads states already is left out."""
    from waymark.packets.briefing import RULES_COUNTED, count_rules, pinned_rules
    from waymark.packets.render import AtLeast

    memories = pinned_rules(conn, project, RULES_READ, agent)
    more = 0
    unread: list[str] = []
    if len(memories) == RULES_READ:
        counted = count_rules(conn, project, agent)
        more = counted - len(memories)
        if counted > RULES_COUNTED:  # stopped counting: at least this many more
            more = AtLeast(RULES_COUNTED - len(memories))
        if more:
            from waymark.base import clock
            from waymark.storage.guidance import rule_ids

            read, now, most = {m.id for m in memories}, clock.second(), RULES_READ + UNREAD_NAMED
            ids = rule_ids(conn, project.id, now, agent, most) + rule_ids(
                conn, None, now, agent, most
            )
            unread = [i for i in ids if i not in read][:UNREAD_NAMED]
    stated = not_restated(project, memories, client)
    memories = [m for m in memories if m not in stated]
    notes = [(m.id, "pinned" if m.pinned else f"{m.type}, priority {m.priority}") for m in memories]
    lines = [memory_line(m) for m in memories]
    if stated:
        files = {"claude-code": "CLAUDE.md or MEMORY.md", "codex": "AGENTS.md"}.get(
            client or "", "CLAUDE.md, AGENTS.md or MEMORY.md"
        )
        lines.append(f"- ({len(stated)} more already in {files})")
        notes.append((None, "said by the client's own instructions: left out"))
    return lines, notes, more if isinstance(more, AtLeast) else max(0, more), unread


DECISIONS_NEW = 8  # decisions made since the last session began, shown at most
DECISIONS_SHOWN = 5  # with older ones, when fewer are new: the newest active decisions
DECISIONS_READ = 30


def decisions(
    conn: Connection, project: Project, session_id: str, shown: set[str],
    client: str | None = None,
) -> tuple[list[str], list[tuple[str, str]], int, list[str]]:  # fmt: skip
    """The decisions made since the last session began (DECISIONS_NEW at most, newest
    first), then the newest older active ones while fewer than DECISIONS_SHOWN are listed:
    their lines (a decision whose change git reverted flagged REVERTED, as every packet
    flags it), (id, why) notes, and how many new ones were not listed, and their ids (the
    receipt names them). Those `shown` (the packet's rules) are not repeated, nor those a
    file `client` loads states already (Codex's own memories among them)."""
    from waymark.base import clock
    from waymark.storage.guidance import newest_decisions

    found = [
        m
        for m in newest_decisions(conn, project.id, clock.second(), DECISIONS_READ)
        if m.id not in shown
    ]
    said = {m.id for m in not_restated(project, found, client)}
    found = [m for m in found if m.id not in said]
    if not found:
        return [], [], 0, []
    last = sessions.recent_sessions(conn, project.id, session_id, 1)
    since = last[0][2] if last else ""
    new = [m for m in found if m.created_at >= since]
    older = [m for m in found if m.created_at < since]
    listed = new[:DECISIONS_NEW] + older[: max(0, DECISIONS_SHOWN - len(new))]
    from waymark.storage.outcomes import reverted_among

    reverted = reverted_among(conn, project.id, [m.id for m in listed])
    lines = [
        memory_line(
            m, "REVERTED" if m.id in reverted else "new" if since and m.created_at >= since else ""
        )
        for m in listed
    ]
    notes = [
        (m.id, "decision since the last session" if m.created_at >= since else "newest decision")
        for m in listed
    ]
    unlisted = [m.id for m in new[DECISIONS_NEW:]]
    return lines, notes, len(unlisted), unlisted


def not_restated(
    project: Project, memories: list[Memory], client: str | None = None
) -> list[Memory]:
    """The memories whose text a file `client` loads (CLAUDE.md and Claude Code's MEMORY.md,
    or Codex's AGENTS.md) already put in front of the model: a packet leaves them out."""
    if not memories:
        return []
    from waymark.projects.client_files import already_stated, stated_text

    stated = stated_text(project, client)
    return (
        [m for m in memories if already_stated(m.content, m.title, stated, m.id)] if stated else []
    )


def pending_handoffs(conn: Connection, project: Project, session_id: str) -> list[str]:
    out = []
    for sid, reason, created in handoffs.open_markers(
        conn, project.id, newest_first=True, limit=3, except_session=session_id
    ):
        files = sessions.files_changed(conn, sid, 8)
        listed = f" Files changed: {', '.join(files)}." if files else ""
        out.append(
            f"- The session of {created[:16].replace('T', ' ')} UTC ended without a checkpoint "
            f"({reason}).{listed} Review that work (git status, git diff), then save a checkpoint "
            "with Waymark's `checkpoint` tool."
        )
    return out


def recent_work(conn: Connection, project: Project, session_id: str) -> list[str]:
    out = []
    for sid, client, started in sessions.recent_sessions(conn, project.id, session_id, 3):
        files = sessions.files_changed(conn, sid, 6)
        fails = [
            f"`{c}` (exit {x if x is not None else '?'})"
            for c, x in sessions.failures(conn, sid, 3)
        ]
        if not files and not fails:
            continue
        line = f"- {started[:10]} ({client}):"
        if files:
            line += f" edited {', '.join(files)}."
        if fails:
            line += f" Failed: {'; '.join(fails)}."
        out.append(fence_text(line))
    from waymark.storage.guidance import recent_events

    for event in recent_events(conn, project.id, 3):
        kind = next((t for t in event.tags if t != "event"), event.type)
        out.append(fence_text(f"- {event.created_at[:10]} {kind}: {event.content} (id {event.id})"))
    return out


def repo_changes(
    conn: Connection,
    project: Project,
    session_id: str,
    head: str | None,
    dirty: dict[str, str] | None,
    branch: str | None = None,
) -> list[str]:
    from waymark.projects import git

    out: list[str] = []
    before = sessions.previous_branch(conn, project.id, session_id)
    if branch and before and branch != before:
        out.append(fence_text(f"- branch: {before} last session, {branch} now"))
    last = sessions.previous_head(conn, project.id, session_id)
    if head and last and head != last and project.files:
        commits = git.commits_since(project.files, last) or []
        out += [f"- commit {fence_text(c)}" for c in commits]
        if not commits:
            out.append(f"- HEAD moved from {last[:10]} to {head[:10]}")
    if dirty:
        names = sorted(dirty)
        shown = ", ".join(names[:15]) + (f" and {len(names) - 15} more" if len(names) > 15 else "")
        out.append(f"- uncommitted changes: {shown}")
    return out


WORK_MAP_STEPS = 20
STEPS_PER_LINE = 5


def work_map(conn: Connection, session_id: str) -> list[str]:
    """What this session did, oldest first, in a few words a step: repeats of one step are
    counted (`Edit src/a.py x3`), five steps a line."""
    runs: list[list] = []
    for tool, target, outcome in sessions.steps(conn, session_id, 3 * WORK_MAP_STEPS):
        step = (tool, target, outcome)
        if runs and runs[-1][0] == step:
            runs[-1][1] += 1
        else:
            runs.append([step, 1])
    said = []
    for (tool, target, outcome), times in runs[-WORK_MAP_STEPS:]:
        text = tool + (f" {target}" if target else "")
        text += "" if outcome in ("ok", "done") else f": {outcome}"
        said.append(text + (f" x{times}" if times > 1 else ""))
    return [
        fence_text("- " + "; ".join(said[i : i + STEPS_PER_LINE]))
        for i in range(0, len(said), STEPS_PER_LINE)
    ]
