"""Questions asked of the code map's newest snapshot: its structure, a starting point for a
few words (`find`), what depends on a file or declaration (`impact`), and which snapshots
there are (`status`).
"""

from __future__ import annotations

import os

from waymark.codemap import snapshot
from waymark.errors import InvalidArgument, NotFound
from waymark.projects.pathnames import spelled
from waymark.storage import codemap as rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection


def structure(conn: Connection, project: Project, path: str | None = None) -> dict[str, Any]:
    """The newest snapshot's declarations and references (of one file, with `path`)."""
    newest = snapshot.newest(conn, project)
    keys_d = ("path", "qualname", "kind", "start_line", "end_line", "digest")
    keys_r = ("path", "kind", "source", "target", "line")
    return {
        "snapshot": snapshot.public(newest),
        "declarations": [dict(zip(keys_d, d, strict=True))
                         for d in rows.declarations(conn, newest["seq"], path)],
        "references": [dict(zip(keys_r, r, strict=True))
                       for r in rows.references(conn, newest["seq"], path)],
    }  # fmt: skip


DEPTH_MAX = 5
FIND_MAX = 50


def find(conn: Connection, project: Project, query: str, limit: int = 20) -> dict[str, Any]:
    """A starting point: the newest snapshot's declarations and files ranked for a few
    literal words: a name equal to a word first, then a name starting with one, then names
    and paths holding every word; shorter names first within a rank."""
    import re

    words = [w for w in re.split(r"[^\w]+", query.casefold()) if w]
    if not words:
        raise InvalidArgument("give a word or a few to look for")
    if not 1 <= limit <= FIND_MAX:
        raise InvalidArgument(f"limit is 1-{FIND_MAX}")
    newest = snapshot.newest(conn, project)
    seq = newest["seq"]
    scored = []

    def rank(name: str, whole: str) -> int:
        name, whole = name.casefold(), whole.casefold()
        if name in words:
            return 3
        if any(name.startswith(w) for w in words):
            return 2
        return 1 if all(w in whole for w in words) else 0

    for path, qualname, kind, start, end, _ in rows.declarations(conn, seq, None):
        score = rank(qualname.rsplit(".", 1)[-1], f"{path} {qualname}")
        if score:
            scored.append((-score, len(qualname), path, start,
                           {"name": f"{path}::{qualname}", "kind": kind, "lines": [start, end],
                            "match": ("", "words", "prefix", "exact")[score]}))  # fmt: skip
    for path in rows.files_of(conn, seq):
        score = rank(os.path.splitext(os.path.basename(path))[0], path)
        if score:
            scored.append((-score, len(path), path, 0,
                           {"name": path, "kind": "file",
                            "match": ("", "words", "prefix", "exact")[score]}))  # fmt: skip
    scored.sort(key=lambda s: s[:4])
    return {"snapshot": newest["id"], "query": query, "results": [s[4] for s in scored[:limit]],
            "total": len(scored)}  # fmt: skip


def impact(
    conn: Connection, project: Project, target: str, depth: int = 2, base: str | None = None
) -> dict[str, Any]:
    """What statically depends on `target`, a file or `path::Qualified.name` of the newest
    snapshot: its importers and callers, then theirs, to `depth`; resolved references only
    (`resolve`), each cited with the snapshot. The path is spelled as any path is
    (`pathnames.spelled`: `./x`, absolute, or relative to `base`, the caller's directory)."""
    from waymark.codemap.resolve import Map, dependents

    if not 1 <= depth <= DEPTH_MAX:
        raise InvalidArgument(f"depth is 1-{DEPTH_MAX}")
    newest = snapshot.newest(conn, project)
    seq = newest["seq"]
    files = list(rows.files_of(conn, seq))
    declared = rows.declarations(conn, seq, None)
    path, sep, name = target.partition("::")
    known = set(files)
    forms = spelled(path, project.files, base) if project.files else [path]
    path = next((form for form in forms if form in known), path)
    if path not in known or (name and (path, name) not in {(d[0], d[1]) for d in declared}):
        raise NotFound(
            f"{target!r} is not a file or a declaration of the map's newest snapshot "
            "(a path, or path::Qualified.name)",
            target=target,
        )
    target = f"{path}{sep}{name}"
    edges = (rows.all_edges(conn, seq) if rows.resolved(conn, seq)
             else Map(files, declared, rows.references(conn, seq, None)).edges())  # fmt: skip
    found = dependents(edges, target, depth)
    return {"snapshot": newest["id"], "target": target, "depth": depth, "dependents": found}


def status(conn: Connection, project: Project, limit: int = 10) -> dict[str, Any]:
    """The project's newest snapshots (whether each keeps its files) and the rows stored."""
    found = rows.snapshots(conn, project.id, limit)
    return {
        "snapshots": [snapshot.public(s) | {"kept": s["kept"]} for s in found],
        "stored_files": rows.stored_files(conn, project.id),
        "keep": snapshot.KEEP,
    }
