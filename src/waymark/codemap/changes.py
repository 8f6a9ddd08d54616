"""What changed in the code map between two snapshots (default: the two newest, in the
order taken): files added, removed, modified and renamed (a path that left and one that
arrived with a digest one file holds in each snapshot), and the declarations and
relationships that changed with them.
"""

from __future__ import annotations

from waymark.codemap import snapshot
from waymark.errors import InvalidArgument, NotFound
from waymark.storage import codemap as rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection


def changes(
    conn: Connection,
    project: Project,
    *,
    since: str | None = None,
    until: str | None = None,
    path: str | None = None,
) -> dict[str, Any]:
    """Files added, removed, modified and renamed from snapshot `since` to `until` (default:
    the two newest), under `path` when given (a file or a directory)."""
    newest = rows.snapshots(conn, project.id, 2)
    if until is None and since is None and len(newest) < 2:
        raise NotFound("the map has fewer than two snapshots; run `waymark map refresh`")
    to = _named(conn, project, until) if until else newest[0]
    fro = _named(conn, project, since) if since else (newest[1] if until is None else None)
    if fro is None:
        raise InvalidArgument("give --from with --to")
    a, b = rows.files_of(conn, fro["seq"]), rows.files_of(conn, to["seq"])
    if (fro["files"] and not a) or (to["files"] and not b):  # pruned: a header only
        raise InvalidArgument(f"only the {snapshot.KEEP} newest snapshots keep their files")

    def under(p: str) -> bool:
        return path is None or p == path.rstrip("/") or p.startswith(path.rstrip("/") + "/")

    added = sorted(p for p in b if p not in a and under(p))
    removed = sorted(p for p in a if p not in b and under(p))
    modified = sorted(p for p in a if p in b and a[p][1] != b[p][1] and under(p))
    # A rename: a digest held by one file in each snapshot, which left one path and arrived
    # at another. A digest several files share (empty files, copies) names no identity.
    from waymark.codemap import moves

    arrived = set(added)
    digests = ({p: v[1] for p, v in a.items()}, {p: v[1] for p, v in b.items()})
    renamed = [{"from": p, "to": q} for p, q in moves.renames(*digests).items()
               if p in removed and q in arrived]  # fmt: skip
    moved_from = {r["from"] for r in renamed}
    moved_to = {r["to"] for r in renamed}
    return {
        "from": snapshot.public(fro), "to": snapshot.public(to),
        "added": [p for p in added if p not in moved_to],
        "removed": [p for p in removed if p not in moved_from],
        "modified": modified, "renamed": renamed,
        **_structure_changes(conn, fro["seq"], to["seq"], a, b, renamed, under),
    }  # fmt: skip


def _structure_changes(
    conn: Connection,
    old: int,
    new: int,
    a: dict[str, Any],
    b: dict[str, Any],
    renamed: list[dict[str, str]],
    under: Any,
) -> dict[str, Any]:
    """Declarations added, removed and modified (its own text changed: a body-only edit
    too), and resolved relationships added and removed, between two snapshots; a renamed
    file's declarations are compared under its new path."""
    from waymark.codemap.resolve import Map

    moved = {r["from"]: r["to"] for r in renamed}
    before_rows, after_rows = rows.declarations(conn, old, None), rows.declarations(conn, new, None)
    before = {(moved.get(d[0], d[0]), d[1]): d[5] for d in before_rows}
    after = {(d[0], d[1]): d[5] for d in after_rows}

    def named(keys: Any) -> list[str]:
        return sorted(f"{p}::{q}" for p, q in keys if under(p))

    edges = []
    for seq, files, declared in ((old, a, before_rows), (new, b, after_rows)):
        found = (rows.all_edges(conn, seq) if rows.resolved(conn, seq)
                 else Map(list(files), declared, rows.references(conn, seq, None)).edges())  # fmt: skip
        edges.append({(e["kind"], e["from"], e["to"]) for e in found})
    if moved:  # an edge that only followed a renamed file is not a change

        def rename(node: str) -> str:
            path, sep, rest = node.partition("::")
            return moved.get(path, path) + sep + rest

        edges[0] = {(k, rename(f), rename(t)) for k, f, t in edges[0]}

    def touched(edge: tuple[str, str, str]) -> bool:
        return under(edge[1].partition("::")[0]) or under(edge[2].partition("::")[0])

    return {
        "declarations": {
            "added": named(after.keys() - before.keys()),
            "removed": named(before.keys() - after.keys()),
            "modified": named(k for k in after.keys() & before.keys() if after[k] != before[k]),
        },
        "relationships": {
            "added": [{"kind": k, "from": f, "to": t}
                      for k, f, t in sorted(edges[1] - edges[0]) if touched((k, f, t))],
            "removed": [{"kind": k, "from": f, "to": t}
                        for k, f, t in sorted(edges[0] - edges[1]) if touched((k, f, t))],
        },
    }  # fmt: skip


def _named(conn: Connection, project: Project, snapshot_id: str) -> dict[str, Any]:
    found = rows.snapshot(conn, project.id, snapshot_id)
    if found is None:
        raise NotFound(f"no snapshot {snapshot_id!r} in this project", id=snapshot_id)
    return found
