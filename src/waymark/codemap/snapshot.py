"""Snapshots of the code map, taken by `refresh` (asked of by `questions`, compared by
`changes`).

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
    found, to_parse, hashed = _walk(root, before, skipped, deadline)
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
        return out | {"snapshot": public(newest), "retargeted": [],
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
    carried = (
        (newest["seq"], before, {r[0]: tuple(r[1:]) for r in found}) if newest and before else None
    )
    _complete(conn, project, seq, root, skipped, deadline, carried)
    return out | {"snapshot": public(row), "retargeted": followed,
                  "seconds": time.perf_counter() - started}  # fmt: skip


def _walk(
    root: str, before: dict[str, Any], skipped: dict[str, int], deadline: float | None
) -> tuple[list[tuple[Any, ...]], dict[str, tuple[str, bytes]], int]:
    """The repository's files as a snapshot lists them (rel, language, digest, size, lines,
    mtime), a file of the same size and time taken from `before` unread; the new contents
    to parse, by digest (language, source); how many files were hashed. What the walk left
    out is counted in `skipped`."""
    found: list[tuple[Any, ...]] = []
    to_parse: dict[str, tuple[str, bytes]] = {}
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
    return found, to_parse, hashed


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
    previous: tuple[int, dict[str, tuple], dict[str, tuple]] | None = None,
) -> None:
    """Parse what snapshot `seq` holds unparsed (a content stored before its language was
    parsed, or after a schema change dropped the derived structure), then resolve and store
    its relationships when they are not stored yet: only the changed files' when `previous`
    (the snapshot before, its files and `seq`'s) allows it (`_carry`), else every file's."""
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
    if previous is not None and not parsed and _carry(conn, project, seq, *previous):
        return
    files = list(rows.files_of(conn, seq))  # resolved outside the write: hooks keep writing
    edges = Map(files, rows.declarations(conn, seq, None), rows.references(conn, seq, None))
    found = edges.edges()
    with db.write(conn):
        rows.set_edges(conn, project.id, seq, found)


CARRY_MAX = 200  # changed files past which every relationship is resolved again


def _carry(
    conn: Connection,
    project: Project,
    seq: int,
    previous: int,
    old: dict[str, tuple],
    new: dict[str, tuple],
) -> bool:
    """Store `seq`'s relationships as `previous`'s, but for those from the files whose
    content changed, resolved again; only when nothing else can resolve otherwise: the same
    files, and each changed file declaring the same names and importing, exporting and
    declaring its package as before (what every other file's references resolve against).
    True when done; False leaves the full resolution to the caller."""
    if not rows.resolved(conn, previous):
        return False
    if old.keys() != new.keys():
        return False
    changed = sorted(p for p, v in new.items() if v[1] != old[p][1])  # their sha256
    if len(changed) > CARRY_MAX or any(
        rows.bindings(conn, old[p][1]) != rows.bindings(conn, new[p][1]) for p in changed
    ):
        return False
    from waymark.codemap.resolve import Map

    mine = set(changed)
    references = rows.references(conn, seq, None, rows.BINDING) + [
        r for path in changed for r in rows.references(conn, seq, path, ("call",))
    ]
    found = Map(list(new), rows.declarations(conn, seq, None), references).edges()
    edges = [e for e in found if e["from"].partition("::")[0] in mine]
    with db.write(conn):
        rows.carry_edges(conn, project.id, previous, seq, changed, edges)
    return True


def newest(conn: Connection, project: Project) -> dict[str, Any]:
    """The project's newest snapshot; NotFound when the map has none."""
    newest = next(iter(rows.snapshots(conn, project.id, 1)), None)
    if newest is None:
        raise NotFound("the map has no snapshot yet; run `waymark map refresh`")
    return newest


def public(row: dict[str, Any]) -> dict[str, Any]:
    keep = ("id", "git_head", "git_parent", "git_dirty", "files", "bytes", "skipped",
            "created_at")  # fmt: skip
    return {k: row[k] for k in keep}
