"""Shadowing: what an agent reads when tiers hold the same memory.

A memory's identity across tiers is its type and key. Read in the order of `scope.TIERS`
(agent-workspace, agent-global, workspace, global), the deepest memory with an identity stands
in for every shallower one: those are left out of what is read, named in the answer, and never
merged or changed. Memories without a key have no identity and shadow nothing.
"""

from __future__ import annotations

from waymark.base import clock
from waymark.memories.scope import TIERS, tier
from waymark.storage import guidance

TYPE_CHECKING = False  # hooks read packets through this: typing would cost them ~3 ms
if TYPE_CHECKING:
    from collections.abc import Sequence

    from waymark.storage.connection import Connection
    from waymark.storage.memories import Memory


def rank(memory: Memory) -> int:
    """The memory's place in the read order (0 is the deepest tier)."""
    return TIERS.index(tier(memory.agent, memory.project_id))


def deepest(
    conn: Connection,
    project_id: str,
    agent: str | None,
    memories: Sequence[Memory],
    now: float | None = None,
) -> dict[tuple[str, str], Memory]:
    """(type, key) -> the deepest active memory `agent` reads with that identity, for the
    identities of `memories` that a deeper tier could shadow: none for a memory already in
    the deepest tier the reader has (agent-workspace for an agent, workspace for the main
    session), so the common case, a project's own keyed memories, costs no query."""
    floor = 0 if agent else TIERS.index("workspace")
    keys = sorted({m.key for m in memories if m.key and rank(m) > floor})
    if not keys:
        return {}
    out: dict[tuple[str, str], Memory] = {}
    owners = (project_id, None) if agent else (project_id,)  # the main session: workspace only
    for m in guidance.keyed(conn, owners, agent, keys, clock.second(now or None)):
        held = out.get((m.type, m.key))
        if held is None or rank(m) < rank(held):
            out[(m.type, m.key)] = m
    return out


def winner(found: dict[tuple[str, str], Memory], memory: Memory) -> Memory:
    """The memory read in place of `memory`: the deepest of its identity, or itself."""
    if not memory.key:
        return memory
    held = found.get((memory.type, memory.key))
    return held if held is not None and rank(held) < rank(memory) else memory


def note(memory: Memory) -> dict[str, str]:
    """How an answer names a shadowed memory."""
    return {"id": memory.id, "tier": tier(memory.agent, memory.project_id)}


def resolve(
    conn: Connection,
    project_id: str,
    agent: str | None,
    memories: Sequence[Memory],
    now: float | None = None,
) -> tuple[list[Memory], list[dict[str, str]]]:
    """`memories` in order, each shadowed one replaced by the memory that shadows it (once),
    and the notes of those left out with the id of what shadowed them."""
    found = deepest(conn, project_id, agent, memories, now)
    if not found:
        return list(memories), []
    out: list[Memory] = []
    seen: set[str] = set()
    shadowed = []
    for memory in memories:
        chosen = winner(found, memory)
        if chosen.id != memory.id:
            shadowed.append({**note(memory), "by": chosen.id})
        if chosen.id not in seen:
            seen.add(chosen.id)
            out.append(chosen)
    return out, shadowed
