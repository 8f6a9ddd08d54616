"""The sections of a SessionStart packet, each a list of lines in priority order."""

from __future__ import annotations

from waymark.base import clock
from waymark.packets.render import fence_text
from waymark.storage import connection as db
from waymark.storage.events import count_use

TYPE_CHECKING = False
if TYPE_CHECKING:
    import apsw

    from waymark.memories.record import Memory
    from waymark.projects.resolve import Project

RULE_TYPES = ("convention", "warning", "decision", "preference")


def memory_line(m: Memory) -> str:
    """`- [warning · src/db.py · 2026-11-20 · id 01JD…] Title: content`, on one line."""
    where = f" · {m.scope_target}" if m.scope_target else ""
    body = m.content if m.content.strip() != m.title.strip() else ""
    text = f"{m.title}: {body}" if body else m.title
    evidence = ""
    if m.evidence:
        first = m.evidence[0]
        evidence = f" (evidence: {first.get('path') or first.get('command') or first.get('url')})"
    return (
        f"- [{m.type}{where} · {m.event_time[:10]} · id {m.id}] {fence_text(text)[:600]}{evidence}"
    )


def checkpoint(conn: apsw.Connection, project: Project) -> tuple[list[str], list[str]]:
    """(checkpoint lines, lesson lines) of the active checkpoint: next action first."""
    from waymark.packets.briefing import checkpoint_section

    section = checkpoint_section(conn, project)
    if section is None:
        return [], []
    lines = []
    if section["next_action"]:
        lines.append(f"Next action: {fence_text(section['next_action'])}")
    lines.append(
        f"(checkpoint {section['id']}, revision {section['revision_id']}, saved "
        f"{section['updated_at'][:16].replace('T', ' ')} UTC)"
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
    return lines, lessons


def _lesson(lesson: dict) -> str:
    from waymark.handoff.revision import render_lesson

    return render_lesson({k: v for k, v in lesson.items() if k != "historical"})


def _is_lesson(line: str, lessons: list[dict]) -> bool:
    return any(line == f"- {_lesson(lesson)}" for lesson in lessons if not lesson.get("historical"))


def rules(conn: apsw.Connection, project: Project) -> tuple[list[str], list[str]]:
    """Pinned memories and high-priority conventions, warnings, decisions, preferences."""
    from waymark.packets.briefing import pinned_rules

    memories = pinned_rules(conn, project, 15)
    return [memory_line(m) for m in memories], [m.id for m in memories]


def pending_handoffs(conn: apsw.Connection, project: Project, session_id: str) -> list[str]:
    from waymark.handoff.ledger import files_changed

    out = []
    for sid, created, reason in conn.execute(
        "SELECT session_id, created_at, reason FROM handoff_markers WHERE project_id = ?"
        " AND cleared_at IS NULL AND session_id <> ? ORDER BY created_at DESC LIMIT 3",
        (project.id, session_id),
    ):
        files = files_changed(conn, sid, 8)
        listed = f" Files changed: {', '.join(files)}." if files else ""
        out.append(
            f"- The session of {created[:16].replace('T', ' ')} UTC ended without a checkpoint "
            f"({reason}).{listed} Review that work (git status, git diff), then save a checkpoint "
            "with Waymark's `checkpoint` tool."
        )
    return out


def recent_work(conn: apsw.Connection, project: Project, session_id: str) -> list[str]:
    out = []
    for sid, client, started in conn.execute(
        "SELECT id, client, started_at FROM sessions WHERE project_id = ? AND id <> ?"
        " ORDER BY started_at DESC, id DESC LIMIT 3",
        (project.id, session_id),
    ):
        files = [
            r[0]
            for r in conn.execute(
                "SELECT path FROM session_ledger WHERE session_id = ? AND kind = 'edit'"
                " GROUP BY path ORDER BY max(seq) DESC LIMIT 6",
                (sid,),
            )
        ]
        fails = [
            f"`{c}` (exit {x if x is not None else '?'})"
            for c, x in conn.execute(
                "SELECT command, exit_code FROM session_ledger WHERE session_id = ? AND"
                " kind = 'failure' ORDER BY seq DESC LIMIT 3",
                (sid,),
            )
        ]
        if not files and not fails:
            continue
        line = f"- {started[:10]} ({client}):"
        if files:
            line += f" edited {', '.join(files)}."
        if fails:
            line += f" Failed: {'; '.join(fails)}."
        out.append(fence_text(line))
    return out


def repo_changes(
    conn: apsw.Connection,
    project: Project,
    session_id: str,
    head: str | None,
    dirty: dict[str, str] | None,
) -> list[str]:
    from waymark.projects import git

    out: list[str] = []
    row = conn.execute(
        "SELECT coalesce(git_head_end, git_head_start) FROM sessions WHERE project_id = ?"
        " AND id <> ? ORDER BY started_at DESC, id DESC LIMIT 1",
        (project.id, session_id),
    ).fetchone()
    last = row[0] if row else None
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


def note_injected(conn: apsw.Connection, session_id: str, memory_ids: list[str]) -> None:
    """Remember what this session has seen (never inject twice) and count the use."""
    if not memory_ids:
        return
    stamp = clock.now()
    with db.write(conn):
        for memory_id in memory_ids:
            conn.execute(
                "INSERT OR IGNORE INTO session_injected (session_id, memory_id) VALUES (?, ?)",
                (session_id, memory_id),
            )
        count_use(conn, memory_ids, stamp)


def injected(conn: apsw.Connection, session_id: str) -> set[str]:
    return {
        r[0]
        for r in conn.execute(
            "SELECT memory_id FROM session_injected WHERE session_id = ?", (session_id,)
        )
    }
