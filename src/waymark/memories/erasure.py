"""An erased memory's text in the backups taken before: which still hold it, and erasing it
from them too (`waymark erase ID --from-backups`), so "gone for good" is true of every file
Waymark keeps. A rewritten backup stays restorable: the same memories, this one erased."""

from __future__ import annotations

from waymark.projects.resolve import Project
from waymark.storage import backup
from waymark.storage import connection as db

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any


def backups_holding(memory_id: str) -> list[str]:
    """The backups that still hold `memory_id`'s text, newest first."""
    return backup.holding(memory_id)


def erase_from_backups(
    project: Project, memory_id: str, *, reason: str, team: bool = False
) -> list[dict[str, Any]]:
    """Erase `memory_id` in every backup that holds it (as `store.erase` does in the live
    database: the same tombstone and reason); each as {"was": path, "now": path}."""
    from waymark.memories import store

    rewritten = []
    for path in backup.holding(memory_id):

        def change(conn: Any) -> None:
            db.apply_migrations(conn)  # to this schema; no path: no backup of a backup
            with db.write(conn):
                store.erase_in(conn, project, memory_id, reason=reason, actor="user", team=team)

        rewritten.append({"was": path, "now": backup.rewrite(path, change)})
    return rewritten
