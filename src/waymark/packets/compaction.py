"""The packets a compaction brings: at the SessionStart that follows it, the decisions the
session relied on, by id (beside the checkpoint's verbatim objective and next action); and
once the client's summary is known (PostCompact), what it no longer mentions of the
session's recorded facts (`handoff.compaction`), said once."""

from __future__ import annotations

from waymark.packets.render import Section

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection

RELIED_ON = "Decisions this session relied on"
DROPPED = "The compaction summary no longer mentions"
BUDGET = 400


def relied_on_section(conn: Connection, session_id: str) -> Section:
    from waymark.handoff.compaction import RELIED_MAX, RELIED_TYPES
    from waymark.packets.lines import memory_line
    from waymark.storage import memories as rows
    from waymark.storage import sessions

    found = [rows.get_memory(conn, i)
             for i in sessions.relied_on(conn, session_id, RELIED_TYPES, RELIED_MAX)]  # fmt: skip
    shown = [m for m in found if m is not None]
    return Section(RELIED_ON, [memory_line(m) for m in shown], 300, 0,
                   [(m.id, "relied on before the compaction") for m in shown])  # fmt: skip


def dropped_packet(
    conn: Connection, project: Project, session_id: str, hook: str, *, record: bool = True
) -> str | None:
    """What the last compaction's summary dropped, fenced, or None; said once."""
    from waymark.handoff.compaction import take_dropped
    from waymark.packets.render import fence_text, render

    dropped = take_dropped(conn, session_id)
    if not dropped:
        return None
    labels = {"objective": "the objective: ", "next_action": "the next action: "}
    lines = [f"- {labels.get(f['kind'], '')}{fence_text(f['text'])[:300]}" for f in dropped]
    notes = [(f["key"] if len(f["key"]) == 26 else None, "dropped by the summary") for f in dropped]
    parts = [Section(DROPPED, lines, BUDGET, 0, notes)]
    text = render("compaction", parts, BUDGET + 100)
    if text and record:
        from waymark.packets.seen import note_injected

        note_injected(conn, session_id, [k for k, _ in notes if k and k in text],
                      receipt=(project.id, hook, "compaction", text, parts))  # fmt: skip
    return text or None
