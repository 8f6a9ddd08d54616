"""What moved between two snapshots, by digest, and the memories that follow it.

A file moved when a path left and another arrived holding a digest that one file holds in
each snapshot (`renames`); a declaration moved when it left the files that changed and a
declaration with the same text (its own SHA-256) arrived in them, each digest held once on
its side: `app/a.py::render` -> `app/views.py::render`. Copies, and an edit that changes a
declaration's text, name no move.

An active memory scoped to a file that moved, or to a symbol whose file or declaration
moved, gets a new revision with the new target, audited as a `retarget` with both targets
and the snapshot (`waymark history ID` shows the two revisions): it keeps applying where the
code went, and nothing is merged or guessed.
"""

from __future__ import annotations

from collections import Counter

from waymark.storage import codemap as rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection


def renames(a: dict[str, str], b: dict[str, str]) -> dict[str, str]:
    """old path -> new path for path -> SHA-256 maps `a` -> `b`: a digest one file holds on
    each side, which left one path and arrived at another. Copies name no rename."""
    before, after = Counter(a.values()), Counter(b.values())
    came = {b[p]: p for p in b if p not in a and after[b[p]] == 1}
    return {p: came[a[p]] for p in sorted(a) if p not in b and before[a[p]] == 1 and a[p] in came}


def moved(conn: Connection, old: int, new: int) -> dict[str, str]:
    """old node -> new node (a file, or path::Qualified.name) between two snapshots."""
    a, b = rows.files_of(conn, old), rows.files_of(conn, new)
    out = renames(_digests(a), _digests(b))
    left = _only_in(conn, a, b, set(out))  # declaration digest -> nodes that left
    came = _only_in(conn, b, a, set(out.values()))  # ... and nodes that arrived
    for digest, nodes in left.items():
        if len(nodes) == 1 and len(came.get(digest, [])) == 1:
            out[nodes[0]] = came[digest][0]
    return out


def _digests(files: dict[str, Any]) -> dict[str, str]:
    """path -> SHA-256 of a snapshot's files (`rows.files_of`)."""
    return {path: value[1] for path, value in files.items()}


def _only_in(
    conn: Connection, these: dict[str, Any], those: dict[str, Any], renamed: set[str]
) -> dict[str, list[str]]:
    """Declaration digest -> the nodes of `these` files' changed contents that `those` (the
    same paths on the other side) do not declare; renamed files left out."""
    found: dict[str, list[str]] = {}
    for path, value in these.items():
        if path in renamed or (path in those and those[path][1] == value[1]):
            continue
        other = rows.declared_in(conn, those[path][1]) if path in those else {}
        for name, (_, digest) in rows.declared_in(conn, value[1]).items():
            if name not in other:
                found.setdefault(digest, []).append(f"{path}::{name}")
    return found


def follow(
    conn: Connection, project: Project, old: int, new: int, snapshot_id: str
) -> list[dict[str, str]]:
    """Give each active file- or symbol-scoped memory whose file or declaration moved from
    snapshot `old` to `new` a revision with the new target: [{memory, from, to}] (the new
    revision's id)."""
    found = moved(conn, old, new)
    if not found:
        return []
    from waymark.storage import connection as db
    from waymark.storage.guidance import targeting

    files = [k for k in found if "::" not in k]
    hits = targeting(conn, project.id, list(found), files)
    if not hits:
        return []
    from waymark.memories import store
    from waymark.memories.draft import revision_of

    done = []
    with db.write(conn):
        for memory_id, target in hits:
            path, sep, name = target.partition("::")
            to = found.get(target) or (found[path] + sep + name if path in found else None)
            if to is None:
                continue
            old_memory = store.active_in(conn, project, memory_id, "retargeted")
            draft = revision_of(project, old_memory, target=to, actor="hook")
            new_memory = store.replace_active(
                conn, project, memory_id, draft,
                audit={"op": "retarget", "from": target, "to": to, "snapshot": snapshot_id},
            )  # fmt: skip
            done.append({"memory": new_memory.id, "from": target, "to": to})
    return done
