"""Snapshots of the code map: taken by `refresh`, compared by `changes`.

A refresh walks the tree (`walk`), reuses the digest of every file whose size and mtime are
those of the newest snapshot, hashes the rest, and records a new immutable snapshot, with the
Git state (HEAD, its parent, dirty or clean), only when a mapped file or HEAD differs; the KEEP newest
keep their files. `changes` compares two snapshots as named (default: the two newest, in the
order taken): a path that left and one that arrived with a digest that one file holds in
each snapshot is a rename, never a guess among copies.
"""

from __future__ import annotations

import os
import time

from waymark.base import clock
from waymark.codemap import walk
from waymark.errors import InvalidArgument, NotFound
from waymark.projects import git
from waymark.projects.ignore import rules_for
from waymark.projects.pathnames import spelled
from waymark.storage import codemap as rows
from waymark.storage import connection as db

# A hook refreshes through here: `re`, `hashlib` and `typing` load only where they are used.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection

KEEP = 3  # snapshots per project that keep their files
# Languages whose declarations and references the map holds (JSX is "javascript").
PARSED = ("python", "javascript", "typescript", "tsx", "go", "rust", "c", "cpp", "csharp",
          "java", "php")  # fmt: skip


def _parse(language: str, data: bytes) -> tuple[list, list] | None:
    """(declarations, references) of a file's source, or None when the parser fails."""
    # tree-sitter loads only when a file needs parsing
    from waymark.codemap import javascript, languages, python

    try:
        if language == "python":
            return python.extract(data)
        if language in ("javascript", "typescript", "tsx"):
            return javascript.extract(data, language)
        return languages.extract(data, language)
    except Exception:  # a grammar's failure costs one file, never the map
        return None


def _digest(path: str) -> tuple[str, int, bytes] | None:
    """(SHA-256, lines, bytes) of a file, or None when it cannot be read."""
    try:
        with open(path, "rb") as f:
            data = f.read(walk.MAX_BYTES + 1)
    except OSError:
        return None
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    import hashlib

    return hashlib.sha256(data).hexdigest(), lines, data


def _git_state(root: str) -> tuple[str | None, str | None, bool | None]:
    if not git.is_repo(root):
        return None, None, None
    head = git.head(root)
    parent = git.output(root, "rev-parse", "--verify", "-q", f"{head}^") if head else None
    changed = git.dirty(root)
    return head, (parent or "").strip() or None, None if changed is None else bool(changed)


class Overdue(Exception):
    """A refresh given a deadline passed it; what it had stored stands (a snapshot without
    its relationships is completed by the next refresh)."""


def refresh(
    conn: Connection,
    project: Project,
    *,
    deadline: float | None = None,
    confirmed: bool = False,
) -> dict[str, Any]:
    """Bring the project's map up to date; what was done: the snapshot (new, or the newest
    when nothing changed), files hashed and reused, what the walk left out, seconds. With
    `deadline` (a `time.perf_counter()` value) it raises Overdue once past it. A first map
    of a folder that is no git repository maps everything below it: only when `confirmed`."""
    root = project.files
    if root is None:
        raise InvalidArgument("the code map needs a project directory; this project has none")
    started = time.perf_counter()
    newest = next(iter(rows.snapshots(conn, project.id, 1)), None)
    if newest is None and not project.git and not confirmed:
        raise InvalidArgument(
            f"{root} is not a git repository: a code map of it records every file below it; "
            "run `waymark map refresh --yes` to map it anyway, or map a repository",
            root=root,
        )
    before = rows.files_of(conn, newest["seq"]) if newest and newest["kept"] else {}
    skipped: dict[str, int] = {}
    found: list[tuple[Any, ...]] = []
    to_parse: dict[str, tuple[str, bytes]] = {}  # digest -> (language, source), new contents
    hashed = 0
    for rel, st in walk.files(root, rules_for(root, root), skipped):
        if deadline is not None and time.perf_counter() > deadline:
            raise Overdue("the walk")
        old = before.get(rel)
        if old is not None and (old[2], old[4]) == (st.st_size, st.st_mtime_ns):
            found.append((rel, *old))
            continue
        got = _digest(os.path.join(root, rel))
        if got is None:
            skipped["unreadable"] = skipped.get("unreadable", 0) + 1
            continue
        digest, lines, data = got
        if lines > walk.MAX_LINES:
            skipped["over 20,000 lines"] = skipped.get("over 20,000 lines", 0) + 1
            continue
        language = walk.language(rel)
        found.append((rel, language, digest, st.st_size, lines, st.st_mtime_ns))
        hashed += 1
        if language is not None and language in PARSED:
            to_parse[digest] = (language, data)
    # Unchanged: every mapped file as it was, at the same HEAD (read from the refs, no git
    # process); git runs only for a new snapshot's parent and dirty flag.
    same_files = {r[0]: r[2] for r in found} == {p: v[1] for p, v in before.items()}
    unchanged = newest is not None and newest["kept"] and same_files and (
        newest["git_head"] == (git.head(root) if git.is_repo(root) else None))  # fmt: skip
    out: dict[str, Any] = {
        "created": not unchanged, "files": len(found), "hashed": hashed,
        "reused": len(found) - hashed, "skipped": skipped,
    }  # fmt: skip
    if unchanged:
        assert newest is not None
        _complete(conn, project, newest["seq"], root, skipped, deadline)
        return out | {"snapshot": _public(newest), "retargeted": [],
                      "seconds": time.perf_counter() - started}  # fmt: skip
    head, parent, dirty = _git_state(root)
    row = {
        "id": "snap_" + clock.new_id(), "project_id": project.id, "git_head": head,
        "git_parent": parent, "git_dirty": dirty, "files": len(found),
        "bytes": sum(r[3] for r in found), "skipped": skipped,
        "seconds": round(time.perf_counter() - started, 3), "created_at": clock.now(),
    }  # fmt: skip
    known = rows.parsed_digests(conn, list(to_parse))
    parsed = _parse_all({d: v for d, v in to_parse.items() if d not in known}, skipped, deadline)
    with db.write(conn):
        seq = rows.add_snapshot(conn, row, found)
        for digest, (kind, declared, referenced) in parsed.items():
            rows.add_structure(conn, digest, kind, declared, referenced)
        rows.prune(conn, project.id, KEEP)
    # memories follow a file or declaration that moved (before anything that may be overdue)
    from waymark.codemap import moves

    followed = (
        moves.follow(conn, project, newest["seq"], seq, row["id"]) if newest and before else []
    )
    _complete(conn, project, seq, root, skipped, deadline)
    return out | {"snapshot": _public(row), "retargeted": followed,
                  "seconds": time.perf_counter() - started}  # fmt: skip


def _parse_all(
    sources: dict[str, tuple[str, bytes]], skipped: dict[str, int], deadline: float | None
) -> dict[str, tuple[str, list, list]]:
    """digest -> (language, declarations, references) of each new content; a content the
    parser fails on is counted `unparsed`."""
    parsed: dict[str, tuple[str, list, list]] = {}
    for digest, (kind, source) in sources.items():
        if deadline is not None and time.perf_counter() > deadline:
            raise Overdue("parsing")
        structure = _parse(kind, source)
        if structure is None:
            skipped["unparsed"] = skipped.get("unparsed", 0) + 1
        else:
            parsed[digest] = (kind, *structure)
    return parsed


def _complete(
    conn: Connection,
    project: Project,
    seq: int,
    root: str,
    skipped: dict[str, int],
    deadline: float | None = None,
) -> None:
    """Parse what snapshot `seq` holds unparsed (a content stored before its language was
    parsed, or after a schema change dropped the derived structure), then resolve and store
    its relationships when they are not stored yet."""
    missing = rows.unparsed(conn, seq, PARSED)
    sources: dict[str, tuple[str, bytes]] = {}
    for path, kind, digest in missing:
        got = _digest(os.path.join(root, path))
        if got is not None and got[0] == digest:  # the file as the snapshot saw it
            sources[digest] = (kind, got[2])
    parsed = _parse_all(sources, skipped, deadline)
    if not parsed and rows.resolved(conn, seq):
        return
    from waymark.codemap.resolve import Map

    if parsed:
        with db.write(conn):
            for digest, (kind, declared, referenced) in parsed.items():
                rows.add_structure(conn, digest, kind, declared, referenced)
    if deadline is not None and time.perf_counter() > deadline:
        raise Overdue("resolving")
    files = list(rows.files_of(conn, seq))  # resolved outside the write: hooks keep writing
    edges = Map(files, rows.declarations(conn, seq, None), rows.references(conn, seq, None))
    found = edges.edges()
    with db.write(conn):
        rows.set_edges(conn, project.id, seq, found)


def in_background(root: str) -> None:
    """Start `waymark map refresh` in `root` as a process of its own that nothing waits
    for: no pipe of the caller's is held open, and it outlives the caller."""
    import subprocess
    import sys

    subprocess.Popen(
        [sys.executable, "-I", "-c", "from waymark.cli import main;main()", "map", "refresh",
         "--quiet"],
        cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
    )  # fmt: skip


def _newest(conn: Connection, project: Project) -> dict[str, Any]:
    """The project's newest snapshot; NotFound when the map has none."""
    newest = next(iter(rows.snapshots(conn, project.id, 1)), None)
    if newest is None:
        raise NotFound("the map has no snapshot yet; run `waymark map refresh`")
    return newest


def _public(row: dict[str, Any]) -> dict[str, Any]:
    keep = ("id", "git_head", "git_parent", "git_dirty", "files", "bytes", "skipped",
            "created_at")  # fmt: skip
    return {k: row[k] for k in keep}


def structure(conn: Connection, project: Project, path: str | None = None) -> dict[str, Any]:
    """The newest snapshot's declarations and references (of one file, with `path`)."""
    newest = _newest(conn, project)
    keys_d = ("path", "qualname", "kind", "start_line", "end_line", "digest")
    keys_r = ("path", "kind", "source", "target", "line")
    return {
        "snapshot": _public(newest),
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
    newest = _newest(conn, project)
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
    newest = _newest(conn, project)
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
        "snapshots": [_public(s) | {"kept": s["kept"]} for s in found],
        "stored_files": rows.stored_files(conn, project.id),
        "keep": KEEP,
    }


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
        raise InvalidArgument(f"only the {KEEP} newest snapshots keep their files")

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
        "from": _public(fro), "to": _public(to),
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
