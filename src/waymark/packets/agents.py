"""What an agent is told of the other agents at work on its project (`handoff.tasks`): at
SessionStart, what each live agent holds and which files it is changing, and the tasks open
for the taking; before an edit, that another live agent's task is changing that file.

Light enough for PreToolUse, the hottest path: one indexed read of the project's active
tasks, and the holders' ledgers only when another agent holds one.
"""

from __future__ import annotations

from waymark.base import clock
from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.packets.render import fence_text
from waymark.storage import sessions
from waymark.storage import tasks as rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection

TASKS_READ = 30
OPEN_SHOWN = 3
FILES_SHOWN = 4


def _holder(session: str, about: str | None) -> str:
    from waymark.handoff.claims import who

    return who({"session": session, **(json.loads(about) if about else {})})


def _objective(body: str) -> str:
    return fence_text(str(json.loads(body).get("objective") or ""))[:120]


def _others(
    conn: Connection, project: Project, session_id: str
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """(tasks other live sessions hold, tasks open for the taking) of the project."""
    stamp = clock.now()
    held, free = [], []
    for row in rows.at_work(conn, project.id, stamp, TASKS_READ):
        holder, until = row[1], row[4]
        if holder and until and until > stamp:
            if holder != session_id:
                held.append(row)
        else:
            free.append(row)
    return held, free


def changing(conn: Connection, row: tuple[Any, ...]) -> list[str]:
    """The files a held task is changing: those its holder edited since the claim, then its
    relevant files."""
    edited = sessions.files_changed(conn, row[1], FILES_SHOWN, since=row[3] or "")
    named = [str(p) for p in json.loads(row[7]).get("relevant_files") or []]
    return list(dict.fromkeys(edited + named))


def at_work(conn: Connection, project: Project, session_id: str, current: str | None) -> list[str]:
    """SessionStart's lines on the other agents: each live one's task, branch and files, then
    the tasks open for the taking (not `current`, the one this session is shown as its own).
    Nothing when no other agent holds a task and none is open but `current`."""
    held, free = _others(conn, project, session_id)
    mine_open = any(row[0] == current for row in free)  # shown above, and nobody's yet
    free = [row for row in free if row[0] != current]
    lines = []
    for row in held:
        files = changing(conn, row)
        where = f" on {fence_text(str(row[5]))}" if row[5] else ""
        lines.append(
            f'- {_holder(row[1], row[2])} holds {row[0]} "{_objective(row[7])}"{where}, since '
            f"{str(row[3])[11:16]} UTC"
            + (
                f"; changing {', '.join(fence_text(f) for f in files[:FILES_SHOWN])}"
                if files
                else ""
            )
        )
    for row in free[:OPEN_SHOWN]:
        parent = f" (subtask of {row[6]})" if row[6] else ""
        lines.append(f'- open for the taking: {row[0]} "{_objective(row[7])}"{parent}')
    if free[OPEN_SHOWN:]:
        lines.append(f"- {len(free) - OPEN_SHOWN} more open (`waymark task`)")
    if lines and mine_open:
        lines.insert(
            0, "- the active checkpoint above is open: claim it, or save to it, to hold it"
        )
    if lines:
        lines.append(
            'Claim a task with the `checkpoint` tool (operation "claim") before working on '
            "it; a save to a task another agent holds is refused."
        )
    return lines


def before_edit(
    conn: Connection, project: Project, session_id: str, paths: list[str]
) -> list[tuple[str, str]]:
    """(key, line) for each file about to be edited that another live agent's task is
    changing: who, which task, on which branch. A warning, never a block."""
    if not paths:
        return []
    held, _ = _others(conn, project, session_id)
    out = []
    for row in held:
        named = set(json.loads(row[7]).get("relevant_files") or [])
        touched = set(rows.edited_since(conn, row[1], paths, row[3] or "")) | (named & set(paths))
        for path in [p for p in paths if p in touched]:
            where = f" on branch {fence_text(str(row[5]))}" if row[5] else ""
            out.append((f"task:{row[0]}:{path}", fence_text(
                f"- {path} is being changed by {_holder(row[1], row[2])}, which holds task "
                f"{row[0]} \"{_objective(row[7])}\"{where}: coordinate before editing it")))  # fmt: skip
    return out


def from_subagents(conn: Connection, session_id: str) -> str | None:
    """What the session's subagents saved to the tasks it gave them, not shown yet, as a
    packet of its own (then marked shown): a lead learns what they decided. Asked after each
    of a lead's tool calls is recorded (its Agent call's return, or, as Claude Code runs
    subagents in the background, whichever call comes next) and with its next prompt."""
    from waymark.storage.tasks import waiting_reports

    if not waiting_reports(conn, session_id):  # the common case: one indexed read
        return None
    from waymark.handoff import tasks
    from waymark.packets.render import Section, render

    lines, ids = _reported(conn, session_id)
    text = render("subagents", [Section("From your subagents", lines, 500)], 600)
    tasks.reports_shown(conn, ids)
    return text or None


def _reported(conn: Connection, session_id: str) -> tuple[list[str], list[str]]:
    """(lines, report ids) of what the session's subagents saved to the tasks it gave them,
    not shown yet: each task's status, decisions (and why), lessons, progress and next step."""
    from waymark.handoff.revision import render_lesson
    from waymark.storage.tasks import waiting_reports

    lines, ids = [], []
    for report_id, kind, task_id, status, body_text, events in waiting_reports(conn, session_id):
        body = json.loads(body_text)
        ids.append(report_id)
        lines.append(f"- {kind or 'a'} subagent on task {task_id} "
                     f"\"{fence_text(str(body.get('objective') or ''))[:120]}\" ({status}):")  # fmt: skip
        for event_type, text in json.loads(events or "[]"):
            lines.append(f"  - {'decided' if event_type == 'decision' else event_type}: "
                         f"{fence_text(text)[:300]}")  # fmt: skip
        for d in body.get("decisions") or []:
            why = f" (why: {d['why']})" if d.get("why") else ""
            lines.append(f"  - decided: {fence_text(d['decision'] + why)[:300]}")
        for lesson in body.get("lessons") or []:
            lines.append(f"  - lesson: {fence_text(render_lesson(lesson))[:300]}")
        for item in (body.get("progress") or [])[-3:]:
            lines.append(f"  - done: {fence_text(str(item))[:200]}")
        if body.get("next_action") and status == "active":
            lines.append(f"  - next: {fence_text(body['next_action'])[:200]}")
    return lines, ids
