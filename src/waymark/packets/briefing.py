"""What a session should know up front: the active checkpoint, pinned rules, and the
memories scoped to the files in play. Shared by the MCP `recall` tool and the hooks' packets.
"""

from __future__ import annotations

from waymark.base import clock
from waymark.projects import pathnames
from waymark.projects.resolve import Project
from waymark.storage import guidance
from waymark.storage import memories as rows

TYPE_CHECKING = False  # typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

    from waymark.storage.connection import Connection
    from waymark.storage.memories import Memory


def checkpoint_section(
    conn: Connection, project: Project, *, files: bool = False, session_id: str | None = None
) -> dict[str, Any] | None:
    """The active checkpoint (the one `session_id` works on: its own, else one no other
    session holds) with its lessons (historical ones marked) and evidence state; with
    `files`, its relevant files too (what the packet's code map part starts from)."""
    from waymark.handoff import (
        checkpoints,  # hashes evidence files: only the callers that show it pay
    )

    current = checkpoints.active(conn, project, session_id)
    if current is None:
        return None
    fresh = checkpoints.freshness(current, project.files)
    relevant = {"relevant_files": list(current.revision.body.get("relevant_files") or [])}
    return (relevant if files else {}) | {
        "id": current.id,
        "revision_id": current.revision.id,
        "updated_at": current.updated_at,
        "next_action": current.revision.body.get("next_action"),
        "git_branch": current.revision.git_branch,
        "text": current.render(),
        "lessons": checkpoints.lessons(conn, current),
        "evidence_state": fresh["state"],
        "evidence": fresh["evidence"],
    }


def pinned_rules(
    conn: Connection, project: Project, limit: int = 20, agent: str | None = None
) -> list[Memory]:
    """Pinned memories, and conventions, warnings, decisions and preferences of high
    priority: the project's and the global ones, everyone's and `agent`'s, best first; a
    deeper tier's memory in place of one it shadows (`memories.shadow`). A correction (a
    memory that supersedes another) is pinned when either it or what it replaced was, and
    ranks ahead of every rule of its class whatever their priority: it is the newest word
    on its matter, and a tight budget never shows older rules instead of it."""
    now = clock.second()
    found: list[Memory] = []
    for owner in (project.id, None):
        read = guidance.rules(conn, owner, limit * 2, agent)
        ids = {m.id for m in read}
        read += [m for m in guidance.corrections(conn, owner, limit, agent) if m.id not in ids]
        found += [m for m in read if not m.valid_until or m.valid_until > now]
    replaced = [m.supersedes for m in found if m.supersedes]
    was = rows.ranks_of(conn, replaced) if replaced else {}

    def rank(m: Memory) -> tuple:
        pinned, priority = was.get(m.supersedes or "", (False, -99))
        return (
            m.pinned or pinned,
            bool(m.supersedes),
            max(m.priority, priority),
            m.created_at,
            m.id,
        )

    found.sort(key=rank, reverse=True)
    if any(m.key for m in found):
        from waymark.memories.shadow import resolve

        found, _ = resolve(conn, project.id, agent, found)
    return found[:limit]


# Rules are counted up to this many: a packet says "1000+" past it (a million memories held
# 65,000 rules, and counting them cost a session start several milliseconds).
RULES_COUNTED = 1000


def count_rules(conn: Connection, project: Project, agent: str | None = None) -> int:
    """Every rule `pinned_rules` could show, the project's and the global ones, counted up to
    RULES_COUNTED: a larger count is RULES_COUNTED + 1 (say it "RULES_COUNTED+")."""
    now = clock.second()
    mine = guidance.count_rules(conn, project.id, now, agent, RULES_COUNTED)
    if mine > RULES_COUNTED:
        return mine
    return min(
        RULES_COUNTED + 1, mine + guidance.count_rules(conn, None, now, agent, RULES_COUNTED)
    )


EXPIRED_SLACK = 20  # rows read past what a packet shows, for ones found expired


def file_memories(
    conn: Connection,
    project: Project,
    paths: list[str],
    limit: int = 20,
    exclude: set[str] | frozenset[str] = frozenset(),
    agent: str | None = None,
) -> list[Memory]:
    """Memories scoped to the given files, their symbols, or the directories above them,
    everyone's and `agent`'s; those in `exclude` (ids a session was shown) are dropped
    before any row is read whole."""
    named = pathnames.normalise(project, paths)
    targets: list[str] = []
    for path in named:
        targets += [path, *pathnames.ancestors(path)]
    if not targets:
        return []
    # Ranked on what memories_by_target holds; only the chosen rows are read whole. Each
    # target's best `limit` + excluded + EXPIRED_SLACK are enough for the same `limit` best
    # overall; past that many expired ones, every row is read.
    now = clock.second()
    want = limit + len(exclude) + EXPIRED_SLACK
    read = guidance.targeted(conn, project.id, targets, named, agent, want)
    live = [r for r in read if not r[5] or r[5] > now]
    if len(read) - len(live) > EXPIRED_SLACK:  # a target's window may have run short
        live = [r for r in guidance.targeted(conn, project.id, targets, named, agent)
                if not r[5] or r[5] > now]  # fmt: skip
    found = [r for r in live if r[4] not in exclude]
    found.sort(key=lambda r: (len(r[1]), r[2], r[3], r[4]), reverse=True)
    chosen = [int(r[0]) for r in found[:limit]]
    by_rowid = rows.by_rowids(conn, chosen)
    out = [by_rowid[r] for r in chosen if r in by_rowid]  # one may be gone since ranked
    if any(m.key for m in out):
        from waymark.memories.shadow import resolve

        out, _ = resolve(conn, project.id, agent, out)
    return out


def age(stamp: str, now: float | None = None) -> str:
    """'3d', '5h', '2mo': a short age for a timestamp, for people and models alike."""
    found = clock.age(stamp, now or None)
    return f"{found[0]}{found[1]}" if found else "now"


def memory_view(memory: Memory, detail: str, now: float | None = None) -> dict[str, Any]:
    """A memory at one of three levels of detail: compact, summary or full."""
    view: dict[str, Any] = {
        "id": memory.id,
        "type": memory.type,
        "title": memory.title,
        "age": age(memory.event_time, now),
    }
    if memory.scope_target:
        view["scope"] = f"{memory.scope_type}:{memory.scope_target}"
    if memory.agent:
        view["agent"] = memory.agent
    if detail == "compact":
        return view
    if detail == "summary":
        text = memory.content
        view["content"] = text if len(text) <= 300 else text[:297].rstrip() + "..."
        if memory.tags:
            view["tags"] = memory.tags
        if memory.evidence:
            view["evidence"] = memory.evidence
        return view
    return memory.to_dict() | {"age": view["age"]}
