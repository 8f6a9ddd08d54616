"""`waymark sync --to DIR` / `--from DIR`: the same outbox as a team store's, through a folder
(a synced folder, a mounted share) instead of a server: one person's machines converge
without one.

Each machine writes only its own files, `DIR/waymark/<project>/<machine>/<seq>.jsonl`, one
per batch of its outbox: each line one event with the revision it carries (a memory's, as
stored, or a checkpoint's with the revision it was made from), written to a temporary name,
flushed to disk and renamed, so a reader sees a whole file or none. A machine reads the
others' files in order, each in one local transaction with its cursor, and never changes
them. What is shared follows the team's rules: a shared project only, never a personal
memory, never anything the redactor flagged. With no server to say which of two revisions
of one memory or checkpoint came first, the one made first goes on (ids are time-ordered),
alike on every machine; the other waits for review, as a team conflict does.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from waymark.base import clock
from waymark.errors import InvalidArgument
from waymark.projects.resolve import Project
from waymark.storage import checkpoints as saves
from waymark.storage import connection as db
from waymark.storage import events as local_events
from waymark.storage import teamsync
from waymark.storage.connection import Connection
from waymark.team import sync as team_sync

FORMAT = 1  # each line's `v`: a reader refuses a file written by a newer format


def sync_folder(
    conn: Connection,
    project: Project,
    *,
    to: str | None = None,
    source: str | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    """Write this project's unsent events to folder `to`, then apply the other machines'
    from folder `source` (either, or both: usually the same folder); what moved."""
    key = team_sync.project_key(conn, project)
    started = clock.now()
    report: dict[str, Any] = {"project_key": key, "dry_run": dry_run}
    if to is not None:
        report |= _push(conn, project, key, _folder(to), dry_run)
    if source is not None:
        report |= _pull(conn, project, key, _folder(source), dry_run)
    found = report.get("conflicts")
    report["conflicted"] = team_sync.conflicted(conn, project, started) if found else []
    return report


def _folder(path: str) -> str:
    folder = os.path.realpath(os.path.expanduser(path))
    if not os.path.isdir(folder):
        raise InvalidArgument(f"{path} is not a folder: make it (or mount it) first", path=path)
    return folder


def _root(folder: str, key: str) -> str:
    """This project's place in the folder (its key made safe for a file name)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in key)[:80]
    digest = hashlib.sha256(key.encode()).hexdigest()[:8]
    return os.path.join(folder, "waymark", f"{safe}-{digest}")


def _slot(folder: str, project: Project, other: str | None = None) -> str:
    """This project's cursor row for the folder (and, reading, for one machine in it)."""
    place = hashlib.sha256(folder.encode()).hexdigest()[:16]
    return f"dir:{place}/{project.id}" + (f"/from/{other}" if other else "")


def _machine(conn: Connection, folder: str, project: Project, dry_run: bool) -> tuple[str, int]:
    """This machine's name in the folder and how far its outbox went there."""
    slot = _slot(folder, project)
    state = teamsync.sync_state(conn, slot)
    if state is None:
        if dry_run:
            return "(new)", 0
        with db.write(conn):
            teamsync.start_sync(conn, slot, clock.new_id())
        state = teamsync.sync_state(conn, slot)
    assert state is not None
    return str(state[0]), int(state[1])


def _push(
    conn: Connection, project: Project, key: str, folder: str, dry_run: bool
) -> dict[str, Any]:
    machine, since = _machine(conn, folder, project, dry_run)
    counts = {"pushed": 0, "blocked": 0, "personal": 0, "conflicts": 0}
    mine = os.path.join(_root(folder, key), machine)
    author = _author()
    while True:
        batch = local_events.events_after(conn, since, team_sync.BATCH)
        if not batch:
            break
        out = team_sync.outgoing(conn, project, key, machine, batch, counts)
        since = batch[-1]["seq"]
        if dry_run:
            continue
        if out.events:
            _write(mine, since, _lines(out, author))
        with db.write(conn):  # only once the file is whole on disk
            teamsync.advance(conn, _slot(folder, project), "pushed", since, clock.now())
    return counts


def _lines(out: Any, author: str) -> list[dict[str, Any]]:
    """One line per event, each with the revision it carries."""
    memories = {record["id"]: record for record, _ in out.memories}
    revisions = {values["id"]: (values, parent) for values, parent in out.saves}
    lines = []
    for event in out.events:
        line = {"v": FORMAT, **event, "author": author}
        saved = revisions.get((event["payload"] or {}).get("revision") or "")
        if saved is not None:
            line["revision"] = {**saved[0], "parent": saved[1]}
        elif event["memory_id"] in memories:
            line["memory"] = memories[event["memory_id"]]
        lines.append(line)
    return lines


def _write(mine: str, seq: int, lines: list[dict[str, Any]]) -> None:
    """A whole file or none: a temporary name, flushed, then renamed into place."""
    os.makedirs(mine, exist_ok=True)
    path = os.path.join(mine, f"{seq:012d}.jsonl")
    temporary = os.path.join(mine, f".{seq:012d}.{os.getpid()}.tmp")
    data = "".join(json.dumps(line, sort_keys=True) + "\n" for line in lines)
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    try:
        descriptor = os.open(mine, os.O_RDONLY)
    except OSError:
        return  # a folder that cannot be opened (some shares): the rename stands
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _author() -> str:
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # no user name in this environment
        return "unknown"


def _pull(
    conn: Connection, project: Project, key: str, folder: str, dry_run: bool
) -> dict[str, Any]:
    machine, _ = _machine(conn, folder, project, dry_run)
    root = _root(folder, key)
    pulled = applied = conflicts = 0
    others = sorted(n for n in _listing(root) if n != machine and not n.startswith("."))
    for other in others:
        slot = _slot(folder, project, other)
        state = teamsync.sync_state(conn, slot)
        done = int(state[2]) if state else 0
        for name in sorted(_listing(os.path.join(root, other))):
            if not name.endswith(".jsonl") or name.startswith("."):
                continue
            seq = _seq_of(name, other)
            if seq <= done:
                continue
            lines = _read(os.path.join(root, other, name))
            pulled += len(lines)
            if dry_run:
                continue
            with db.write(conn):  # the whole file and the cursor, or none of it
                if state is None:
                    teamsync.start_sync(conn, slot, machine)
                    state = (machine, 0, 0, None)
                for line in lines:
                    outcome = _apply_line(conn, project, line)
                    applied += outcome in ("applied", "overtaken")
                    conflicts += outcome in ("conflict", "overtaken")
                teamsync.advance(conn, slot, "pulled", seq, clock.now())
            done = seq
    return {"pulled": pulled, "applied": applied, "conflicts": conflicts, "machines": others}


def _listing(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except FileNotFoundError:
        return []


def _seq_of(name: str, other: str) -> int:
    try:
        return int(name.split(".")[0])
    except ValueError:
        raise InvalidArgument(
            f"{other}/{name} in the sync folder is not a Waymark sync file; nothing was read "
            "from it (move it out of the folder)"
        ) from None


def _read(path: str) -> list[dict[str, Any]]:
    """A file's events; a clear error, and nothing applied, when it is not one of ours."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    lines = []
    for number, raw in enumerate(text.splitlines(), 1):
        try:
            line = json.loads(raw)
            if not isinstance(line, dict) or "op" not in line or "event_id" not in line:
                raise ValueError("not an event")
        except ValueError:
            raise InvalidArgument(
                f"{path}: line {number} is not a Waymark sync event; nothing of this file "
                "was applied"
            ) from None
        if int(line.get("v", 0)) > FORMAT:
            raise InvalidArgument(
                f"{path} was written by a newer Waymark (format {line['v']}): install the "
                "Waymark the other machine runs"
            )
        lines.append(line)
    return lines


def _apply_line(conn: Connection, project: Project, line: dict[str, Any]) -> str:
    event = {"op": line["op"], "author": line.get("author") or "unknown",
             "machine": line.get("machine"), "client": line.get("client"),
             "payload": line.get("payload") or {}}  # fmt: skip
    revision = line.get("revision")
    if revision is not None:
        found = {**revision, "author": event["author"], "machine": event["machine"]}
        found["mainline"] = _first_on_line(conn, found)
        return team_sync.apply_checkpoint(conn, project, found, event)
    memory = line.get("memory")
    if memory is None:
        return "unchanged"
    record = {**memory, "_author": event["author"], "_machine": event["machine"]}
    return team_sync.apply_memory(conn, project, record, event, team_sync.earliest)


def _first_on_line(conn: Connection, revision: dict[str, Any]) -> bool:
    """Whether a checkpoint revision from the folder goes on top here: made from the
    revision this machine has on top, or made before the one this machine went on with
    from the same revision (`earliest`, as every machine decides)."""
    head = saves.checkpoint_head(conn, revision["checkpoint_id"])
    parent = revision.get("parent")
    if head is None or head[1] == parent:
        return True
    made_from = saves.revision_row(conn, parent) if parent else None
    if made_from is None:
        return False  # made from a revision this machine never had: review it
    ours = saves.revision_at(conn, revision["checkpoint_id"], int(made_from[2]) + 1)
    return ours is None or team_sync.earliest(str(parent), revision["id"], ours) == revision["id"]
