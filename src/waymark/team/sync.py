"""`waymark sync`: this project's memories to the team store and the team's back.

The outbox is the local audit log: every memory write is an event, and the events after
`pushed_seq` are what this replica has not sent. A push sends each one's memory revision as
it stands (immutable text, current status) with an event id of its own (`<machine>:<seq>`),
so sending twice changes nothing; the local cursor moves only after the server committed.
A pull applies the team's events after `pulled_seq` (other machines' only), in order, in one
local transaction with the cursor: a crash anywhere leaves either nothing or everything
applied, and the next sync goes on from there. Nothing acknowledged locally is ever lost.

What is shared is explicit: a project whose `.waymark.toml` says `[team] share = true`,
known to every machine by its name there (else its repository's identity). Global memories
never leave the machine. A revision holding anything the redactor flagged (a
`[REDACTED:...]` marker, or a secret the redactor finds now) never leaves the machine
either: it is counted as blocked, never sent.

Two machines replacing the same memory from the same revision is a conflict, never a silent
overwrite: the revision pulled second becomes a candidate (kind `conflict`) naming both.
"""

from __future__ import annotations

import json
from typing import Any

from waymark.base import clock, redact
from waymark.curation import candidates
from waymark.errors import InvalidArgument, TeamNotConnected
from waymark.memories import store
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage import events as local_events
from waymark.storage import memories as local_memories
from waymark.storage import teamsync
from waymark.storage.connection import Connection
from waymark.team import link
from waymark.team.keys import project_key
from waymark.team.keys import slot as _slot
from waymark.teamstore import checkpoints as team_checkpoints
from waymark.teamstore import connection as team_db
from waymark.teamstore import events as team_events
from waymark.teamstore import memories as team_memories
from waymark.teamstore import search as team_search

BATCH = 500


def sync(conn: Connection, project: Project, *, dry_run: bool = False) -> dict[str, Any]:
    """Push this project's unsent memory events, then pull the team's; what moved."""
    found = link.configured()
    if found is None:
        raise TeamNotConnected("no team store here: `waymark team connect postgresql://...`")
    conninfo, _ = found
    started = clock.now()
    key = project_key(conn, project)
    slot = _slot(conninfo, project)
    state = teamsync.sync_state(conn, slot)
    if state is None and not dry_run:
        with db.write(conn):
            teamsync.start_sync(conn, slot, clock.new_id())
        state = teamsync.sync_state(conn, slot)
    machine, pushed, pulled, _ = state or ("(new)", 0, 0, None)
    pg = team_db.connect(conninfo, migrate=not dry_run)
    try:
        report: dict[str, Any] = {"project_key": key, "machine": machine, "dry_run": dry_run}
        if team_db.can_write(pg):
            report |= _push(conn, pg, project, key, slot, machine, pushed, dry_run)
            if report["pushed"] and not dry_run:
                report["vector_index"] = _tend(pg)
        else:
            report |= {"pushed": 0, "blocked": 0, "personal": 0, "read_only": True}
        sent = int(report.get("conflicts", 0))  # ours that came second, found on sending
        report |= _pull(conn, pg, project, key, slot, machine, pulled, dry_run)
        report["conflicts"] += sent
        if not dry_run and team_db.can_write(pg):  # the checkpoints first: claims name them
            from waymark.team import claims

            report |= claims.exchange(conn, pg, project, key, machine)
            report["conflicts"] += report["claims_refused"]
    finally:
        pg.close()
    report["conflicted"] = conflicted(conn, project, started) if report["conflicts"] else []
    return report


def conflicted(conn: Connection, project: Project, since: str) -> list[dict[str, Any]]:
    """The conflicts a sync started at `since` put in review: {candidate, title, reason}."""
    found = candidates.pending(conn, project, kind="conflict", limit=200)
    return [{"candidate": c["id"], "title": c["title"], "reason": c["reason"]}
            for c in found if c["updated_at"] >= since]  # fmt: skip


def run_scheduled(conn: Connection, project: Project) -> dict[str, Any] | None:
    """The sync the MCP server runs on the user's schedule (`team.sync_minutes`): what it
    moved, or None when none is due (the setting is 0, no store is connected, the project is
    not shared, or its last sync is more recent than the interval)."""
    from waymark import settings

    minutes = settings.get(conn, "team.sync_minutes")
    found = link.configured()
    if not minutes or found is None:
        return None
    try:
        project_key(conn, project)
    except InvalidArgument:
        return None
    state = teamsync.sync_state(conn, _slot(found[0], project))
    if state and state[3] and clock.epoch(state[3]) > clock.epoch(clock.now()) - minutes * 60:
        return None
    return sync(conn, project)


def poll_seconds(conn: Connection) -> float:
    """How often the MCP server looks whether a scheduled sync is due."""
    from waymark import settings

    minutes = settings.get(conn, "team.sync_minutes")
    return min(60.0, minutes * 60) if minutes else 60.0


def _tend(pg: Any) -> str:
    """The team's vector index kept in step with the store's size (what the push grew); a
    failure here is reported, never the sync's: what was sent is committed."""
    try:
        return team_search.tend_vectors(pg)
    except team_db.driver().Error as exc:
        return f"not tended: {' '.join(str(exc).split())}"


def blocked(memory: dict[str, Any], stamp: str | None = None) -> bool:
    """True when the revision holds anything the redactor flagged: it never leaves. `stamp`
    is the clearance the revision got when written (`redact.clearance`): when it is this
    redactor's of the same text, the text is not scanned again."""
    text = store.shared_text(memory)
    return not redact.cleared(text, stamp) and redact.flagged(text)


def _push(
    conn: Connection, pg: Any, project: Project, key: str, slot: str, machine: str,
    since: int, dry_run: bool,
) -> dict[str, Any]:  # fmt: skip
    """Send the outbox in batches. While the server stores one batch (its own process), this
    one reads and checks the next (3,600 -> 5,500 events/s, bench/team.py); the cursor moves
    past a batch only once the server committed it."""
    from concurrent.futures import Future, ThreadPoolExecutor

    counts = {"pushed": 0, "blocked": 0, "personal": 0, "conflicts": 0}
    sending: tuple[Future[list[dict[str, Any]]], int] | None = None
    with ThreadPoolExecutor(1, thread_name_prefix="waymark-push") as sender:
        while True:
            batch = local_events.events_after(conn, since, BATCH)
            if not batch:
                break
            out = outgoing(conn, project, key, machine, batch, counts)
            since = batch[-1]["seq"]
            if dry_run:
                continue
            if sending is not None:
                counts["conflicts"] += _settle(conn, project, slot, *sending)
            rows = team_memories.memory_rows(out.memories, key, machine)  # while one is sent
            sending = (sender.submit(_send, pg, out, rows, key, machine), since)
        if sending is not None:
            counts["conflicts"] += _settle(conn, project, slot, *sending)
    return counts


class Outgoing:
    """What of a batch of local events leaves: memory revisions with their vectors,
    checkpoint revisions with the revision each was made from, and the events."""

    def __init__(self) -> None:
        self.memories: list[tuple[dict[str, Any], bytes | None]] = []
        self.saves: list[tuple[dict[str, Any], str | None]] = []
        self.events: list[dict[str, Any]] = []


def outgoing(
    conn: Connection, project: Project, key: str, machine: str, batch: list[dict[str, Any]],
    counts: dict[str, int],
) -> Outgoing:  # fmt: skip
    out = Outgoing()
    revisions: dict[str, dict[str, Any]] = {}
    named = [e["memory_id"] for e in batch if e["memory_id"]]
    held = local_memories.get_memories(conn, named)  # one statement a batch, not one a row
    personal = local_memories.personal_among(conn, named)
    stamps = local_memories.clearances(conn, named)
    for event in batch:
        if event["op"] in local_events.CHECKPOINT_OPS:
            _outgoing_save(conn, project, key, machine, event, out, counts)
            continue
        memory = held.get(event["memory_id"] or "")
        if memory is None or memory.project_id != project.id:
            continue  # another project's, or a global memory: never shared from here
        if memory.id in personal:
            counts["personal"] += 1
            continue  # personal: never leaves this machine
        record = memory.to_dict()
        if blocked(record, stamps.get(memory.id)):
            counts["blocked"] += 1
            continue
        revisions[memory.id] = record
        out.events.append({
            "event_id": f"{machine}:{event['seq']}", "at": event["at"], "op": event["op"],
            "project_key": key, "memory_id": memory.id, "machine": machine,
            "client": record.get("client"), "payload": _said(event),
        })  # fmt: skip
    counts["pushed"] += len(out.events)
    vectors = _vectors(conn, list(revisions)) if revisions else {}
    out.memories = [(r, vectors.get(r["id"])) for r in revisions.values()]
    return out


def _outgoing_save(
    conn: Connection, project: Project, key: str, machine: str, event: dict[str, Any],
    out: Outgoing, counts: dict[str, int],
) -> None:  # fmt: skip
    """A checkpoint revision of this project, and the revision it was made from."""
    from waymark.storage import checkpoints as saves

    revision_id = (event.get("detail") or {}).get("revision")
    row = saves.revision_row(conn, revision_id) if revision_id else None
    if row is None or event["project_id"] != project.id:
        return
    values = dict(zip(team_checkpoints.COLUMNS, row, strict=True))
    values["body"] = json.loads(values["body"])
    if blocked({"content": json.dumps(values["body"]), "key": values["git_branch"]}):
        counts["blocked"] += 1
        return
    parent = saves.revision_at(conn, values["checkpoint_id"], values["seq"] - 1)
    out.saves.append((values, parent))
    out.events.append({
        "event_id": f"{machine}:{event['seq']}", "at": event["at"], "op": event["op"],
        "project_key": key, "memory_id": None, "machine": machine, "client": values["client"],
        "payload": {**_said(event), "checkpoint": values["checkpoint_id"],
                    "revision": revision_id},
    })  # fmt: skip


def _said(event: dict[str, Any]) -> dict[str, Any]:
    """What the team's log keeps of a local event: who here (the actor), why (an archive's
    reason, redacted when written), and that a person said `--team`."""
    detail = event.get("detail") or {}
    kept = {k: detail[k] for k in ("reason", "team") if detail.get(k) is not None}
    return {"actor": event["actor"], **kept}


def _send(
    pg: Any, out: Outgoing, rows: list[dict[str, Any]], key: str, machine: str
) -> list[dict[str, Any]]:
    """One batch into the team store, in one server transaction (the sending thread); the
    checkpoint revisions the team's line had already left (two machines revised the same
    revision: this one's came second)."""
    lost = []
    if out.events:
        with team_db.write(pg):
            team_memories.insert_rows(pg, rows)
            for values, parent in out.saves:
                if not team_checkpoints.insert_revision(pg, values, parent, key, machine):
                    lost.append(values)
            team_events.add_events(pg, out.events)
    return lost


def _settle(conn: Connection, project: Project, slot: str, sent: Any, seq: int) -> int:
    """Wait for a batch's commit (its error is the sync's), then move the cursor past it,
    with a candidate for each checkpoint revision of ours that came second: a crash before
    this commit re-sends the batch, harmlessly. How many came second."""
    lost = sent.result()
    with db.write(conn):
        for values in lost:
            _save_conflict(conn, project, values, None, None)
        teamsync.advance(conn, slot, "pushed", seq, clock.now())
    return len(lost)


def _vectors(conn: Connection, memory_ids: list[str]) -> dict[str, bytes]:
    """The local vectors of these memories (for team recall), by memory id, as stored: the
    English model's alone, the team store's one model (a store that embeds with another
    sends none, and team recall on it is lexical: vectors of two models never meet)."""
    from waymark.recall.embed import ENGLISH
    from waymark.storage.memories import rowids_of
    from waymark.storage.vectors import get_vectors

    rowids = rowids_of(conn, memory_ids)
    by_rowid = {rowid: memory_id for memory_id, rowid in rowids.items()}
    return {
        by_rowid[rowid]: bytes(blob)
        for rowid, _, blob in get_vectors(conn, ENGLISH.id, ENGLISH.dim, list(by_rowid))
    }


def _pull(
    conn: Connection, pg: Any, project: Project, key: str, slot: str, machine: str,
    since: int, dry_run: bool,
) -> dict[str, Any]:  # fmt: skip
    from waymark.recall.embed import ENGLISH
    from waymark.recall.vectors import adopt

    pulled = applied = conflicts = adopted = 0
    while True:
        batch = team_events.events_after(pg, since, BATCH, project_keys=[key], machine=machine)
        if not batch:
            break
        found = team_memories.get_memories(pg, [e["memory_id"] for e in batch if e["memory_id"]])
        # the sender's vectors (the team's one model): no machine embeds what another did
        given = {} if dry_run else team_memories.get_vectors(pg, list(found))
        saved = team_checkpoints.get_revisions(pg, [
            e["payload"]["revision"] for e in batch if (e["payload"] or {}).get("revision")
        ])  # fmt: skip
        pulled += len(batch)
        since = batch[-1]["seq"]
        if dry_run:
            continue
        with db.write(conn):  # every event of the batch and the cursor, or none of them
            held = local_memories.get_memories(conn, list(found))
            known = {memory_id: held.get(memory_id) for memory_id in found}
            for event in batch:
                revision = saved.get((event["payload"] or {}).get("revision") or "")
                if revision is not None:
                    outcome = apply_checkpoint(conn, project, revision, event)
                elif event["memory_id"] in found:
                    record = dict(found[event["memory_id"]])
                    outcome = apply_memory(conn, project, record, event, _server_line(pg), known)
                else:
                    continue
                applied += outcome in ("applied", "overtaken")
                conflicts += outcome in ("conflict", "overtaken")
            adopted += adopt(conn, ENGLISH.id, ENGLISH.dim, given)
            teamsync.advance(conn, slot, "pulled", since, clock.now())
    return {"pulled": pulled, "applied": applied, "conflicts": conflicts, "vectors": adopted}


def _server_line(pg: Any) -> Any:
    """Which of two revisions of one memory the team's line has: the server's word."""

    def first(old_id: str, theirs: str, ours: str) -> str | None:
        return team_memories.successors(pg, [old_id]).get(old_id)

    return first


def earliest(old_id: str, theirs: str, ours: str) -> str:
    """Which of two revisions of one memory goes on, with no server to ask (a folder): the
    one made first (ids are time-ordered), as every machine decides alike."""
    return min(theirs, ours)


def apply_memory(
    conn: Connection,
    project: Project,
    record: dict[str, Any],
    event: dict[str, Any],
    first: Any,
    known: dict[str, Any] | None = None,
) -> str:
    """One revision from the team into the local file, inside the caller's transaction:
    "applied", "unchanged", "conflict" (theirs waits for review) or "overtaken" (theirs
    applied, ours waits). Each change is audited here as `team.pull`, with who made it (the
    server's stamp: role, machine, client) and the team event's op. `known`: the local
    memories of the batch read beforehand (None where absent), each taken once."""
    author, sender = record.pop("_author"), record.pop("_machine")
    record.pop("_project_key", None)
    if known is not None and record["id"] in known:
        local = known.pop(record["id"])  # read with its batch; this event may change it
    else:
        local = local_memories.get_memory(conn, record["id"])
    stamp = clock.now()
    payload = event.get("payload") or {}
    said = {"team_op": event["op"], "author": event["author"], "machine": event["machine"],
            "client": event.get("client"), "reason": payload.get("reason")}  # fmt: skip
    if local is not None:
        if record["updated_at"] <= local.updated_at or record["status"] == local.status:
            return "unchanged"
        _take_status(conn, record, stamp)
        local_events.log_event(
            conn, "team.pull", project_id=project.id, memory_id=record["id"], actor="import",
            **{k: v for k, v in said.items() if v is not None},
        )  # fmt: skip
        return "applied"
    old_id = record.get("supersedes")
    old = local_memories.get_memory(conn, old_id) if old_id else None
    rival, outcome = None, "applied"
    if old is not None and old.superseded_by not in (None, record["id"]):
        # Two revisions of one memory: the team's line has the one that reached it first.
        if first(old.id, record["id"], old.superseded_by) != record["id"]:
            _conflict(conn, project, record, old, author, sender)
            return "conflict"
        rival = local_memories.get_memory(conn, old.superseded_by)  # ours, second: reviewed
    fields = {**record, "project_id": project.id, "client": f"team:{author}"}
    memory = local_memories.Memory(**{k: fields.get(k) for k in local_memories.FIELDS})
    local_memories.insert_memory(conn, memory)
    if old is not None and (old.status == "active" or rival is not None):
        local_memories.mark_superseded(conn, old.id, record["id"], stamp)
        candidates.withdraw_settled(conn, project.id, source=old.id, by=record["id"])
    if rival is not None:
        if rival.status == "active":
            local_memories.mark_superseded(conn, rival.id, record["id"], stamp)
        _conflict(conn, project, rival.to_dict(), old, "", "here", replaces=record["id"])
        outcome = "overtaken"  # theirs applied, ours waiting for review
    said |= {"author": author, "machine": sender, "client": record.get("client")}
    local_events.log_event(
        conn, "team.pull", project_id=project.id, memory_id=record["id"], actor="import",
        **{k: v for k, v in said.items() if v is not None},
    )  # fmt: skip
    return outcome


def apply_checkpoint(
    conn: Connection, project: Project, revision: dict[str, Any], event: dict[str, Any]
) -> str:
    """One checkpoint revision from the team, inside the caller's transaction. On the team's
    line it goes on top of the checkpoint here (over a revision of ours that came second,
    which waits for review already); one that came second is a conflict: a candidate."""
    from waymark.storage import checkpoints as saves

    if saves.revision_row(conn, revision["id"]) is not None:
        return "unchanged"
    if not revision["mainline"]:
        _save_conflict(conn, project, revision, revision["author"], revision["machine"])
        return "conflict"
    head = saves.checkpoint_head(conn, revision["checkpoint_id"])
    if head is not None and head[0] != project.id:
        return "unchanged"  # the same id in another project: never mixed
    overtaken = False
    if head is not None and head[1] != revision.get("parent"):
        # Ours went on from the same revision and came second: it waits for review (when
        # the server said so on sending, this finds that candidate again).
        ours = dict(zip(team_checkpoints.COLUMNS, saves.revision_row(conn, head[1]) or (),
                        strict=False))  # fmt: skip
        if ours:
            ours["body"] = json.loads(ours["body"])
            overtaken = _save_conflict(conn, project, ours, None, None)
    if head is None:
        saves.insert_checkpoint(conn, revision["checkpoint_id"], project.id, revision["created_at"])
    seq = 1 if head is None else head[2] + 1
    values = [revision[k] for k in team_checkpoints.COLUMNS]
    values[2] = seq  # this file's numbering; the team's line is the same order
    values[5] = json.dumps(revision["body"], sort_keys=True)
    values[8] = f"team:{revision['author']}"
    values[9] = None  # a session of another machine means nothing here
    saves.insert_revision(conn, tuple(values))
    saves.set_checkpoint_status(conn, revision["checkpoint_id"], revision["status"])
    candidates.withdraw_settled(
        conn, project.id, checkpoint_body=revision["body"], by=revision["id"]
    )
    local_events.log_event(
        conn, "team.pull", project_id=project.id, actor="import", team_op=event["op"],
        checkpoint=revision["checkpoint_id"], revision=revision["id"],
        author=revision["author"], machine=revision["machine"],
        **({"client": revision["client"]} if revision.get("client") else {}),
    )  # fmt: skip
    return "overtaken" if overtaken else "applied"


def _save_conflict(
    conn: Connection, project: Project, revision: dict[str, Any], author: str | None,
    sender: str | None,
) -> bool:  # fmt: skip
    """A candidate for a checkpoint revision that came second on the team's line: ours
    (`author` None, found as we sent it) or a teammate's; approving puts it on top. Whether
    it is new."""
    from waymark.handoff import revision as handoff

    checkpoint_id = revision["checkpoint_id"]
    who = "this machine's" if author is None else f"{author}'s (machine {(sender or '?')[:10]})"
    body = revision["body"]
    _, created = candidates.propose(
        conn,
        project.id,
        kind="conflict",
        action="checkpoint",
        fields={
            "title": f"checkpoint {checkpoint_id[:10]}: {body.get('objective') or 'revision'}",
            "content": handoff.render(body, status=revision["status"]),
            "checkpoint": {
                "id": checkpoint_id,
                "revision": revision["id"],
                "status": revision["status"],
                "body": body,
                "tokens": revision["tokens"],
                "git_branch": revision["git_branch"],
            },
        },  # fmt: skip
        sources=[revision["id"]],
        reason=(
            f"a team conflict: {who} revision {revision['id']} of checkpoint "
            f"{checkpoint_id} was made from a revision the team had already revised; the "
            "team's line goes on from the other; approving puts this one on top of it"
        ),
        fingerprint=f"conflict:{revision['id']}",
    )
    return created


def _take_status(conn: Connection, record: dict[str, Any], stamp: str) -> None:
    status = record["status"]
    if status == "archived":
        local_memories.mark_archived(conn, record["id"], stamp)
    elif status == "active":
        local_memories.mark_active(conn, record["id"], stamp)
    elif status == "superseded" and record.get("superseded_by"):
        local_memories.mark_superseded(conn, record["id"], record["superseded_by"], stamp)
    elif status == "erased":
        local_memories.erase_payload(conn, record["id"], record.get("erased_reason") or "", stamp)


def _conflict(
    conn: Connection, project: Project, record: dict[str, Any], old: Any, who: str,
    sender: str, *, replaces: str | None = None,
) -> None:  # fmt: skip
    """A candidate for `record`, a revision of `old` that came second on the team's line
    (`replaces`, else the revision that replaced `old` here, is first): approving puts its
    text in place of the first."""
    line = replaces or old.superseded_by
    fields = {k: record[k] for k in ("type", "title", "content", "tags", "priority", "key")
              if record.get(k) not in (None, "", [])}  # fmt: skip
    by = "this machine" if sender == "here" else f"{who} (machine {sender[:10]})"
    candidates.propose(
        conn,
        project.id,
        kind="conflict",
        action="supersede",
        fields=fields,
        sources=[line],
        reason=(
            f"a team conflict: {old.id} was replaced by {line}, first on the team's line, "
            f"and by {by} as {record['id']}; approving puts this text in place of {line}"
        ),
        fingerprint=f"conflict:{record['id']}",
    )


def status_of(conn: Connection, project: Project) -> dict[str, Any]:
    """Where this project stands with the team store: its key, the cursors, what waits to
    be sent (for `team status` and `doctor`)."""
    found = link.configured()
    if found is None:
        return {}
    try:
        key = project_key(conn, project)
    except InvalidArgument as exc:
        return {"shared": False, "why": exc.message}
    state = teamsync.sync_state(conn, _slot(found[0], project))
    pushed = state[1] if state else 0
    waiting = sum(1 for e in local_events.events_after(conn, pushed, 100_000)
                  if e["project_id"] == project.id)  # fmt: skip
    conflicts = len(candidates.pending(conn, project, kind="conflict", limit=200))
    return {"shared": True, "project_key": key, "last_sync": state[3] if state else None,
            "unsent": waiting, "conflicts": conflicts}  # fmt: skip
