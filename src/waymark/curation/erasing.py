"""Erase, the one verb every face calls (CLI, MCP `forget`, dashboard): the memory's text
dropped for good with a tombstone kept (`store.erase`), its quantised vector out of the
approximate index file now (`ann.scrub`), and the backups taken before named, or rewritten
with `from_backups`, so "gone for good" is true of every file Waymark keeps.

    erase(conn, project, memory_id, reason=..., from_backups=False) -> Erased
"""

from __future__ import annotations

from waymark.errors import Conflict
from waymark.memories import erasure, store
from waymark.projects.resolve import Project
from waymark.recall import ann
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any


def erase(
    conn: Connection,
    project: Project,
    memory_id: str,
    *,
    reason: str,
    actor: str = "user",
    team: bool = False,
    from_backups: bool = False,
) -> dict[str, Any]:
    """{memory, already, backups_holding, backups_rewritten}: `already` when the memory was
    erased before (only with `from_backups`, which then finishes the job in the backups;
    without it, erasing twice is a Conflict)."""
    already = False
    try:
        memory = store.erase(conn, project, memory_id, reason=reason, actor=actor, team=team)
    except Conflict as exc:
        if not (from_backups and exc.details.get("status") == "erased"):
            raise
        memory, already = store.get(conn, memory_id), True
    ann.scrub(conn)  # its quantised vector leaves the index file now
    rewritten = []
    if from_backups:
        rewritten = erasure.erase_from_backups(project, memory.id, reason=reason, team=team)
    return {"memory": memory, "already": already,
            "backups_holding": erasure.backups_holding(memory.id),
            "backups_rewritten": rewritten}  # fmt: skip


def backups_said(memory_id: str, holding: list[str]) -> str:
    """What to tell a person of the backups that still hold an erased memory's text."""
    import os

    names = ", ".join(os.path.basename(p) for p in holding)
    return (f"{len(holding)} backup(s) taken before still hold its text ({names}): "
            f"`waymark erase {memory_id} --from-backups --reason ...` erases it there too")  # fmt: skip
