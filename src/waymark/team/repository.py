"""Memory that lives in the repository: `waymark share export` writes the project's shared
memories into `.waymark/memories/`, one small file per memory (`<id>.json`, sorted keys, the
same bytes for the same record), so a pull request shows what changed and merges cleanly;
`waymark share import` applies what a pull brought: new memories, superseded and archived
ones, with conflicts (two revisions of one memory) as candidates, by the team's own rules
(`team.sync.apply_memory`, the first revision made goes on).

Opt-in per project (`[repository] share = true` in `.waymark.toml`). Personal memories,
agent-scoped ones and global ones never leave; anything the redactor flags is a hard block:
the export writes nothing and names each memory to fix. A retired memory (superseded,
archived, erased) travels as its state only, never its text. Nothing is committed: the files are
left for git like any change (docs/knowledge.md: a hook or CI line keeps them current).
"""

from __future__ import annotations

import json
import os
from typing import Any

from waymark.base import clock, files
from waymark.errors import InvalidArgument, SecretRefused
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage import memories as local_memories
from waymark.storage.connection import Connection
from waymark.team import sync as team_sync

FOLDER = os.path.join(".waymark", "memories")
# What travels: the record without what only means something on this machine.
LOCAL_ONLY = ("project_id", "session_id")


def _opted_in(project: Project) -> str:
    """The project's root, when `[repository] share = true`; else a clear refusal."""
    from waymark.projects.ignore import nearest_table

    if not project.files:
        raise InvalidArgument("sharing memory in the repository needs a project directory")
    found = nearest_table(project.files, project.files, "repository")
    if found is None or found[1].get("share") is not True:
        raise InvalidArgument(
            "this project keeps no memory in the repository: add `[repository]` with"
            " `share = true` to its .waymark.toml to opt in"
        )
    return project.files


def folder_of(project: Project) -> str:
    return os.path.join(project.files or "", FOLDER)


def record_text(record: dict[str, Any]) -> str:
    """A memory's file: sorted keys, two-space indent, sorted tags, a final newline."""
    out = {k: v for k, v in record.items() if k not in LOCAL_ONLY}
    out["tags"] = sorted(out.get("tags") or [])
    return json.dumps(out, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def export(conn: Connection, project: Project, *, dry_run: bool = False) -> dict[str, Any]:
    """Write each shareable memory whose file is missing or older; never a file of a memory
    this machine does not have, nor over a newer one (import that first). Refused whole,
    nothing written, when a memory the redactor flags would go."""
    _opted_in(project)
    folder = folder_of(project)
    out: list[tuple[str, str]] = []
    counts = {"written": 0, "unchanged": 0, "personal": 0, "newer_there": 0}
    blocked = []
    for memory in local_memories.of_project(conn, project.id):
        if memory.agent or local_memories.is_personal(conn, memory.id):
            counts["personal"] += 1
            continue
        record = memory.to_dict() if memory.status == "active" else _retired(memory.to_dict())
        if memory.status == "active" and team_sync.blocked(record):
            blocked.append(memory.id)
            continue
        path = os.path.join(folder, f"{memory.id}.json")
        text = record_text(record)
        there = _read(path)
        if there is not None and there.get("updated_at", "") > memory.updated_at:
            counts["newer_there"] += 1
            continue
        if there is not None and record_text(there) == text:
            counts["unchanged"] += 1
            continue
        out.append((path, text))
    if blocked:
        shown = ", ".join(blocked[:10]) + (
            f" and {len(blocked) - 10} more" if len(blocked) > 10 else ""
        )
        raise SecretRefused(
            f"nothing was written: {len(blocked)} memories hold text the redactor flags ({shown});"
            " replace them (`waymark supersede ID --content ...`) or erase them (`waymark erase"
            " ID --reason ...`), then export",
            memories=blocked,
        )
    if not dry_run:
        os.makedirs(folder, exist_ok=True)  # the repository's own folder: its usual mode
        for path, text in out:
            files.write_atomic(path, text.encode("utf-8"), mode=0o644)
    counts["written"] = len(out)
    return {**counts, "folder": folder, "dry_run": dry_run}


RETIRED_KEEPS = ("id", "type", "status", "created_at")


def _retired(record: dict[str, Any]) -> dict[str, Any]:
    """A superseded, archived or erased memory travels as its state only: no text (history
    stays on the machines that had it; a newcomer has no use for it), and nothing that
    differs between two clones that retired it alike (no time, no successor: that one's
    own file names what it replaces), so their merge is clean."""
    out = {k: record.get(k) for k in RETIRED_KEEPS}
    return {**out, "title": "", "content": "", "tags": []}


def _read(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as f:
            found = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise InvalidArgument(f"{path} is not a memory file Waymark can read ({exc}); nothing"
                              " was applied") from exc  # fmt: skip
    if not isinstance(found, dict) or not isinstance(found.get("id"), str):
        raise InvalidArgument(f"{path} is not a memory file (no id); nothing was applied")
    return found


REQUIRED = ("id", "type", "title", "content", "status", "created_at")


def import_(conn: Connection, project: Project, *, dry_run: bool = False) -> dict[str, Any]:
    """Apply the memory files the repository holds, oldest first, in one transaction: every
    file is read and checked before anything is applied."""
    _opted_in(project)
    folder = folder_of(project)
    records = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if not name.endswith(".json"):
            continue
        record = _read(os.path.join(folder, name))
        assert record is not None
        missing = [k for k in REQUIRED if k not in record]
        if missing or name != f"{record['id']}.json":
            raise InvalidArgument(f"{os.path.join(folder, name)}: not a memory file"
                                  f" ({'missing ' + ', '.join(missing) if missing else 'its name is not its id'});"
                                  " nothing was applied")  # fmt: skip
        records.append(record)
    # New memories first, oldest first (a revision after what it replaces), then the
    # retired ones: a state change never names a memory not here yet.
    records.sort(key=lambda r: (r["status"] != "active", r["created_at"], r["id"]))
    counts = {"read": len(records), "applied": 0, "unchanged": 0, "conflict": 0, "overtaken": 0}
    if dry_run:
        counts["new"] = sum(1 for r in records if local_memories.get_memory(conn, r["id"]) is None)
        return counts
    event: dict[str, Any] = {"op": "repository.import", "author": "repository",
             "machine": "repository",
             "client": None, "payload": {}}  # fmt: skip
    conflicted = []
    with db.write(conn):
        for record in records:
            if record["status"] != "active":
                counts[_retire(conn, project, record)] += 1
                continue
            outcome = team_sync.apply_memory(
                conn, project, {**record, "_author": "repository", "_machine": "repository"},
                event, team_sync.earliest,
            )  # fmt: skip
            counts[outcome] += 1
            if outcome in ("conflict", "overtaken"):
                conflicted.append(record["id"])
    return {**counts, "conflicted": conflicted, "at": clock.now()}


def _retire(conn: Connection, project: Project, record: dict[str, Any]) -> str:
    """A retired memory's state, applied here: archived or erased as the file says; a
    superseded one only through its successor's file (which names it)."""
    from waymark.storage.events import log_event

    local = local_memories.get_memory(conn, record["id"])
    if local is None or local.status != "active" or record["status"] == "superseded":
        return "unchanged"  # retired before this machine had it, or already, or by its successor
    stamp = clock.now()
    if record["status"] == "archived":
        local_memories.mark_archived(conn, local.id, stamp)
    elif record["status"] == "erased":
        local_memories.erase_payload(conn, local.id, "erased in the repository", stamp)
    else:
        return "unchanged"
    log_event(conn, "team.pull", project_id=project.id, memory_id=local.id, actor="import",
              team_op=f"repository.{record['status']}", author="repository")  # fmt: skip
    return "applied"
