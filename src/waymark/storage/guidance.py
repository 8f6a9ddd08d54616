"""SQL the packets read from `memories`: the rules (pinned, and conventions, warnings,
decisions and preferences of positive priority), the corrections that replaced one, the
memories of files and declarations, keyed memories (an agent's shadows), the newest
decisions and events. Each query holds to the exact condition of the index it uses.
"""

from __future__ import annotations

from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.storage.memories import COLUMNS, Memory, agent_where, from_row

TYPE_CHECKING = False  # typing costs a hook ~3 ms
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from waymark.storage.connection import Connection

_RULES_WHERE = (
    "status = 'active' AND (pinned = 1 OR (type IN ('convention', 'warning', 'decision',"
    " 'preference') AND priority > 0))"
)  # the exact condition of the memories_rules index, so SQLite uses it
_TARGET_WHERE = "status = 'active' AND scope_target IS NOT NULL"  # memories_by_target's


def rules(
    conn: Connection, project_id: str | None, limit: int, agent: str | None = None
) -> list[Memory]:
    """Pinned memories, and rule types of positive priority, best first: the project's
    (`project_id`) or the global ones (None), everyone's and `agent`'s."""
    owner = "project_id IS NULL" if project_id is None else "project_id = ?"
    whose, whose_params = agent_where(agent)
    params: tuple[Any, ...] = () if project_id is None else (project_id,)
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM memories WHERE {owner} AND {_RULES_WHERE} AND {whose}"
        " ORDER BY pinned DESC, priority DESC, created_at DESC, id DESC LIMIT ?",
        (*params, *whose_params, limit),
    ).fetchall()
    return [from_row(r) for r in rows]


def corrections(
    conn: Connection, project_id: str | None, limit: int, agent: str | None = None
) -> list[Memory]:
    """The rules of `rules` that supersede another memory, newest first (read through their
    own small index, m027): a correction must reach the packet whatever its priority."""
    owner = "project_id IS NULL" if project_id is None else "project_id = ?"
    whose, whose_params = agent_where(agent)
    params: tuple[Any, ...] = () if project_id is None else (project_id,)
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM memories INDEXED BY memories_corrections WHERE {owner} AND"
        f" {_RULES_WHERE} AND supersedes IS NOT NULL AND {whose}"
        " ORDER BY created_at DESC, id DESC LIMIT ?",
        (*params, *whose_params, limit),
    ).fetchall()
    return [from_row(r) for r in rows]


def recent_events(conn: Connection, project_id: str, limit: int) -> list[Memory]:
    """The project's active recorded events (`record_event`, keys `event:...`), newest
    first; read through the key index, which holds only keyed memories."""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM memories INDEXED BY memories_by_key"
        " WHERE project_id = ? AND key >= 'event:' AND key < 'event;' AND status = 'active'"
        " ORDER BY created_at DESC, id DESC LIMIT ?",
        (project_id, limit),
    ).fetchall()
    return [from_row(r) for r in rows]


def count_rules(
    conn: Connection, project_id: str | None, now: str, agent: str | None = None, cap: int = 0
) -> int:
    """How many rules `rules` could return, unexpired (the packet says how many it left out);
    with `cap`, counting stops past `cap` (cap + 1 means "more than cap")."""
    owner = "project_id IS NULL" if project_id is None else "project_id = ?"
    whose, whose_params = agent_where(agent)
    params: tuple[Any, ...] = () if project_id is None else (project_id,)
    limit = f" LIMIT {int(cap) + 1}" if cap else ""
    row: Any = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM memories INDEXED BY memories_rules WHERE {owner}"
        f" AND {_RULES_WHERE} AND (valid_until IS NULL OR valid_until > ?) AND {whose}{limit})",
        (*params, now, *whose_params),
    ).fetchone()
    return int(row[0])  # from the index alone (m012 and m021 put valid_until, agent in it)


def rule_ids(
    conn: Connection, project_id: str | None, now: str, agent: str | None, limit: int
) -> list[str]:
    """Ids of the rules `rules` could return, unexpired, in its order, from the index alone:
    a packet names in its receipt the rules it did not read."""
    owner = "project_id IS NULL" if project_id is None else "project_id = ?"
    whose, whose_params = agent_where(agent)
    params: tuple[Any, ...] = () if project_id is None else (project_id,)
    return [
        str(r[0])
        for r in conn.execute(
            f"SELECT id FROM memories INDEXED BY memories_rules WHERE {owner} AND {_RULES_WHERE}"
            f" AND (valid_until IS NULL OR valid_until > ?) AND {whose}"
            " ORDER BY pinned DESC, priority DESC, created_at DESC, id DESC LIMIT ?",
            (*params, now, *whose_params, limit),
        )
    ]


def newest_decisions(conn: Connection, project_id: str, now: str, limit: int) -> list[Memory]:
    """The project's active, unexpired decisions written for everyone, newest first (their
    own index, m047)."""
    whose, whose_params = agent_where(None)
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM memories INDEXED BY memories_decisions WHERE project_id = ?"
        " AND status = 'active' AND type = 'decision' AND (valid_until IS NULL OR valid_until"
        f" > ?) AND {whose} ORDER BY created_at DESC, id DESC LIMIT ?",
        (project_id, now, *whose_params, limit),
    ).fetchall()
    return [from_row(r) for r in rows]


def targeted(
    conn: Connection,
    project_id: str,
    targets: Sequence[str],
    prefixes: Sequence[str],
    agent: str | None = None,
    limit: int = 0,
) -> list[tuple[Any, ...]]:
    """Active path-scoped memories, everyone's and `agent`'s, whose target is one of
    `targets` or starts with `prefix::` for a prefix: (rowid, scope_target, priority,
    created_at, id, valid_until), all read from the memories_by_target index. With `limit`,
    only the first `limit` of each target (and of each prefix's range) in the order a
    packet ranks them (longer target, then priority, created_at and id, all descending):
    one file of a large store has thousands."""
    whose, whose_params = agent_where(agent)
    base = (
        "SELECT rowid, scope_target, priority, created_at, id, valid_until FROM memories"
        f" WHERE project_id = ? AND {_TARGET_WHERE} AND {whose}"
    )
    return _by_target(conn, base, (project_id, *whose_params), targets, prefixes, limit)


def targeting(
    conn: Connection, project_id: str, targets: Sequence[str], prefixes: Sequence[str]
) -> list[tuple[str, str]]:
    """(id, scope_target) of the project's active file- and symbol-scoped memories, every
    agent's, whose target is one of `targets` or starts with `prefix::`."""
    base = (
        "SELECT id, scope_target FROM memories WHERE project_id = ? AND"
        f" {_TARGET_WHERE} AND scope_type IN ('file', 'symbol')"
    )
    found = _by_target(conn, base, (project_id,), targets, prefixes)
    return sorted({(str(r[0]), str(r[1])) for r in found})


def _by_target(
    conn: Connection,
    base: str,
    params: tuple[Any, ...],
    targets: Sequence[str],
    prefixes: Sequence[str],
    limit: int = 0,
) -> list[tuple[Any, ...]]:
    """`base`'s rows whose target is one of `targets` or, for a prefix, `prefix::...` (a
    range the memories_by_target index serves); with `limit`, the first `limit` of each
    target and each range in a packet's order (the index's own within one target)."""
    rows: list[Any] = []
    rank = "priority DESC, created_at DESC, id DESC"
    order = f" ORDER BY {rank} LIMIT ?" if limit else ""
    ranged = f" ORDER BY length(scope_target) DESC, {rank} LIMIT ?" if limit else ""
    if targets and not limit:
        marks = ", ".join("?" * len(targets))
        rows += conn.execute(
            f"{base} AND scope_target IN ({marks})", (*params, *targets)
        ).fetchall()
    for target in dict.fromkeys(targets) if limit else ():
        rows += conn.execute(
            f"{base} AND scope_target = ?{order}", (*params, target, limit)
        ).fetchall()
    for path in prefixes:
        rows += conn.execute(
            f"{base} AND scope_target >= ? AND scope_target < ?{ranged}",
            (*params, path + "::", path + ":;", *((limit,) if limit else ())),
        ).fetchall()
    return [tuple(r) for r in rows]


def keyed(
    conn: Connection,
    owners: Sequence[str | None],
    agent: str | None,
    keys: Sequence[str],
    now: str,
) -> list[Memory]:
    """The active, unexpired memories holding one of `keys` that `agent` reads, of each
    owner (a project id, or None for the global ones), everyone's and its own: what may
    shadow what. Each owner is looked up through memories_by_key (one query over both
    scans the project)."""
    whose, whose_params = agent_where(agent)
    found: list[Memory] = []
    for owner in owners:
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM memories INDEXED BY memories_by_key WHERE project_id IS ?"
            " AND key IN (SELECT value FROM json_each(?)) AND status = 'active'"
            f" AND (valid_until IS NULL OR valid_until > ?) AND {whose}",
            (owner, json.dumps(list(keys)), now, *whose_params),
        ).fetchall()
        found += [from_row(tuple(r)) for r in rows]
    return found
