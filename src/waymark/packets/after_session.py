"""The process a session's end hands its extras to (`handoff.closing`): the extras of the
session, then what this wing adds after them: Codex's memories extension refreshed for the
session's project, where it is on (`packets.codex_memories`).

    python -I -c "from waymark.packets.after_session import run;run()" HAND-OVER-FILE
"""

from __future__ import annotations


def run() -> None:
    from waymark.handoff.closing import run_extras
    from waymark.packets.codex_memories import after_session

    run_extras(also=after_session)
