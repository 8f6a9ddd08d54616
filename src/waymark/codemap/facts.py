"""What the packets say of the code map, read from stored rows only: no parser, no
resolution, a few indexed queries (a hook's path). Every fact names its snapshot.

- `dependents`: the files whose resolved imports or calls reach a file or a declaration in
  the newest resolved snapshot (the file itself not counted), most references first.
- `since_session`: the declarations modified, added and removed, and the files added,
  removed and renamed, from the snapshot kept when the last session began to the newest.
- `overview`: the newest snapshot's files by language and its fullest directories.
"""

from __future__ import annotations

from waymark.storage import codemap as rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.storage.connection import Connection

LANGUAGE_NAMES = {
    "python": "Python", "javascript": "JavaScript", "typescript": "TypeScript", "tsx": "TSX",
    "go": "Go", "rust": "Rust", "c": "C", "cpp": "C++", "csharp": "C#", "java": "Java",
    "php": "PHP",
}  # fmt: skip


def dependents(
    conn: Connection, project_id: str, node: str, limit: int = 3
) -> dict[str, Any] | None:
    """{snapshot, count, top} for `node` (a file, or path::Qualified.name): how many other
    files depend on it, and the `limit` with most references; None when none do or the
    project has no resolved map."""
    snap = rows.newest_resolved(conn, project_id)
    if snap is None:
        return None
    own = node.partition("::")[0]
    counts: dict[str, int] = {}
    for _, source, _, _ in rows.edges_into(conn, snap["seq"], node):
        path = source.partition("::")[0]
        if path != own:
            counts[path] = counts.get(path, 0) + 1
    if not counts:
        return None
    top = sorted(counts, key=lambda p: (-counts[p], p))[:limit]
    return {"snapshot": snap["id"], "count": len(counts), "top": top}


def code_words(text: str, limit: int = 5) -> list[str]:
    """Words of `text` shaped like code names (`open_cache`, `Cache.get`, `parseArgs`,
    `load()`), in order, each once: what a prompt may name a declaration by. No `re`: a
    hook's path."""
    found: list[str] = []
    for raw in text[:20_000].split():
        word = raw.strip("`'\"()[]{},:;!?<>").removesuffix("()").rstrip(".")
        bare = word.replace("_", "").replace(".", "")
        shaped = "_" in word or "." in word or any(c.isupper() for c in word[1:])
        if len(word) >= 4 and bare.isalnum() and bare.isascii() and shaped and word not in found:
            found.append(word)
            if len(found) == limit:
                break
    return found


def named_in_prompt(conn: Connection, project_id: str, paths: list[str], prompt: str) -> list[str]:
    """The files (of `paths`) and declarations (a code name naming exactly one) of the
    newest resolved snapshot that a prompt names: at most two."""
    snap = rows.newest_resolved(conn, project_id)
    if snap is None:
        return []
    nodes = [p for p in paths if rows.edges_into(conn, snap["seq"], p)][:2]  # with dependents
    for word in code_words(prompt):
        if len(nodes) == 2:
            break
        held = rows.declaration_named(conn, snap["seq"], word, 2)
        if len(held) == 1 and f"{held[0]}::{word}" not in nodes:
            nodes.append(f"{held[0]}::{word}")
    return nodes


def dependents_line(node: str, found: dict[str, Any]) -> str:
    """`- src/db.py: 4 files depend on it (map snap_X): a.py, b.py, c.py and 1 more`."""
    more = found["count"] - len(found["top"])
    files = "file depends" if found["count"] == 1 else "files depend"
    return (
        f"- {node}: {found['count']} {files} on it (map {found['snapshot']}): "
        + ", ".join(found["top"])
        + (f" and {more} more" if more > 0 else "")
    )


def since_session(
    conn: Connection, project_id: str, session_id: str, limit: int = 8
) -> tuple[list[str], int]:
    """(lines, how many more were not read) of the code's structural changes since the last
    session began: a line citing both snapshots, then the declarations changed (with how many
    files depend on each) and the files added, removed and renamed."""
    from waymark.storage.sessions import previous_start

    began = previous_start(conn, project_id, session_id)
    if began is None:
        return [], 0
    base, newest = rows.kept_at(conn, project_id, began), rows.kept_at(conn, project_id, None)
    if base is None or newest is None or base["seq"] == newest["seq"]:
        return [], 0
    came, left = rows.files_changed(conn, base["seq"], newest["seq"])
    from waymark.codemap.moves import renames

    renamed = renames(left, came)  # among the files that changed, as `changes` names them
    gone = [p for p in left if p not in came]
    changes: list[tuple[str, str]] = []  # (what, node)
    for path in sorted(came):
        if path in left:
            before, after = rows.declared_in(conn, left[path]), rows.declared_in(conn, came[path])
            for name in sorted(after):
                if name not in before:
                    changes.append(("added", f"{path}::{name}"))
                elif after[name][1] != before[name][1]:
                    changes.append(("modified", f"{path}::{name}"))
            changes += [("removed", f"{path}::{n}") for n in sorted(before) if n not in after]
        elif path not in renamed.values():
            changes.append(("added file", path))
    changes += [("removed file", p) for p in sorted(gone) if p not in renamed]
    changes += [("renamed", f"{p} -> {renamed[p]}") for p in sorted(renamed)]
    if not changes:
        return [], 0
    order = {"modified": 0, "removed": 1, "added": 2, "renamed": 3, "removed file": 4,
             "added file": 5}  # fmt: skip
    changes.sort(key=lambda c: order[c[0]])
    counted = {k: sum(1 for c in changes if c[0] == k) for k in order}
    summary = ", ".join(f"{n} {k}" for k, n in counted.items() if n)
    lines = [f"- map {base['id']} (last session's start) -> {newest['id']}: {summary}"]
    for what, node in changes[:limit]:
        line = f"- {what} {node}"
        if what in ("modified", "removed"):
            found = dependents(conn, project_id, node, 2)
            if found:
                line += (
                    f" ({found['count']} dependent {'file' if found['count'] == 1 else 'files'}: "
                )
                line += ", ".join(found["top"]) + (", ..." if found["count"] > 2 else "") + ")"
        lines.append(line)
    return lines, max(0, len(changes) - limit)


def overview(conn: Connection, project_id: str) -> list[str]:
    """One line: the newest resolved snapshot's files by language and its fullest
    directories (a deterministic sample), or nothing without a map."""
    snap = rows.newest_resolved(conn, project_id)
    if snap is None:
        return []
    found = rows.overview(conn, snap["seq"], 5)
    languages = sorted(((n, LANGUAGE_NAMES.get(k, k)) for k, n in found["languages"].items() if k),
                       key=lambda x: (-x[0], x[1]))  # fmt: skip
    total = sum(found["languages"].values())
    parsed = ", ".join(f"{n:,} {name}" for n, name in languages[:4])
    line = f"- map {snap['id']}: {total:,} files" + (f" ({parsed})" if parsed else "")
    if found["directories"]:
        line += "; fullest: " + ", ".join(d for d, _ in found["directories"])
    return [line]


def declarations_of(conn: Connection, project_id: str) -> Any:
    """`mapped(path, sha256)` for a symbol check: (the newest kept snapshot's id, the
    qualified names it parsed in `path`) when that snapshot holds `path` with that very
    content, parsed; else None (the map knows nothing of the file as it is)."""

    def mapped(path: str, digest: str) -> tuple[str, set[str]] | None:
        newest = rows.kept_at(conn, project_id, None)
        if newest is None or rows.file_digest(conn, newest["seq"], path) != digest:
            return None
        if not rows.parsed_digests(conn, [digest]):
            return None
        return newest["id"], set(rows.declared_in(conn, digest))

    return mapped
