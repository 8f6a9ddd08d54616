"""SQL for the code map: snapshots (`map_snapshots`), their files (`map_files`), the parsed
structure of each content (`map_declarations`, `map_references`, `map_parsed`), and the
resolved relationships of a project's newest snapshot (`map_edges`, `map_resolved`)."""

from __future__ import annotations

from waymark.base import jsonlite as json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from waymark.storage.connection import Connection

SNAPSHOT = (
    "seq", "id", "project_id", "git_head", "git_parent", "git_dirty", "files", "bytes",
    "skipped", "seconds", "created_at",
)  # fmt: skip
FILE = ("path", "language", "sha256", "size", "lines", "mtime_ns")


def _snapshot(values: Sequence[Any]) -> dict[str, Any]:
    row = dict(zip(SNAPSHOT, values, strict=True))
    row["skipped"] = json.loads(row["skipped"])
    row["git_dirty"] = None if row["git_dirty"] is None else bool(row["git_dirty"])
    return row


def add_snapshot(conn: Connection, row: dict[str, Any], files: Sequence[Sequence[Any]]) -> int:
    """Insert a snapshot and its files (rows in FILE's order); its seq."""
    names = (*SNAPSHOT[1:], "overview")
    values = [json.dumps(row[n]) if n == "skipped" else row.get(n) for n in names]
    values[names.index("git_dirty")] = None if row["git_dirty"] is None else int(row["git_dirty"])
    values[names.index("overview")] = _overview_of(files)
    conn.execute(
        f"INSERT INTO map_snapshots ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
        values,
    )
    seq = int(conn.last_insert_rowid())
    conn.executemany(
        f"INSERT INTO map_files (snapshot_seq, {', '.join(FILE)})"
        f" VALUES (?, {', '.join('?' * len(FILE))})",
        [(seq, *f) for f in files],
    )
    return seq


def snapshots(conn: Connection, project_id: str, limit: int) -> list[dict[str, Any]]:
    """The project's snapshots, newest first (in the order taken), with `kept`: whether its
    files are still stored."""
    rows = conn.execute(
        f"SELECT {', '.join(SNAPSHOT)}, EXISTS (SELECT 1 FROM map_files f"
        " WHERE f.snapshot_seq = s.seq) FROM map_snapshots s WHERE project_id = ?"
        " ORDER BY seq DESC LIMIT ?",
        (project_id, limit),
    ).fetchall()
    return [_snapshot(r[:-1]) | {"kept": bool(r[-1])} for r in rows]


def snapshot(conn: Connection, project_id: str, snapshot_id: str) -> dict[str, Any] | None:
    row = conn.execute(
        f"SELECT {', '.join(SNAPSHOT)} FROM map_snapshots WHERE project_id = ? AND id = ?",
        (project_id, snapshot_id),
    ).fetchone()
    return None if row is None else _snapshot(row)


def files_of(conn: Connection, seq: int) -> dict[str, tuple[Any, ...]]:
    """path -> (language, sha256, size, lines, mtime_ns) of a snapshot's files."""
    return {
        str(r[0]): tuple(r[1:])
        for r in conn.execute(
            f"SELECT {', '.join(FILE)} FROM map_files WHERE snapshot_seq = ?", (seq,)
        )
    }


def parsed_digests(conn: Connection, digests: Sequence[str]) -> set[str]:
    """Those of `digests` whose structure is stored."""
    return {
        str(r[0])
        for r in conn.execute(
            "SELECT sha256 FROM map_parsed WHERE sha256 IN (SELECT value FROM json_each(?))",
            (json.dumps(list(digests)),),
        )
    }


def add_structure(
    conn: Connection,
    digest: str,
    language: str,
    declarations: Sequence[Sequence[Any]],
    references: Sequence[Sequence[Any]],
) -> None:
    """One file content's parsed declarations (qualname, kind, start, end) and references
    (kind, source, target, line); nothing when that content is stored already."""
    if conn.execute("SELECT 1 FROM map_parsed WHERE sha256 = ?", (digest,)).fetchone():
        return
    conn.execute("INSERT INTO map_parsed (sha256, language) VALUES (?, ?)", (digest, language))
    conn.executemany(
        "INSERT OR IGNORE INTO map_declarations (sha256, qualname, kind, start_line, end_line,"
        " digest) VALUES (?, ?, ?, ?, ?, ?)",
        [(digest, *d) for d in declarations],
    )
    conn.executemany(
        "INSERT INTO map_references (sha256, kind, source, target, line) VALUES (?, ?, ?, ?, ?)",
        [(digest, *r) for r in references],
    )


def declarations(conn: Connection, seq: int, path: str | None) -> list[tuple[Any, ...]]:
    """(path, qualname, kind, start, end, digest) of a snapshot's files, by path and line."""
    where, params = ("AND f.path = ?", (path,)) if path else ("", ())
    return [
        tuple(r)
        for r in conn.execute(
            "SELECT f.path, d.qualname, d.kind, d.start_line, d.end_line, d.digest"
            " FROM map_files f"
            " JOIN map_declarations d ON d.sha256 = f.sha256"
            f" WHERE f.snapshot_seq = ? {where} ORDER BY f.path, d.start_line, d.qualname",
            (seq, *params),
        )
    ]


def references(
    conn: Connection, seq: int, path: str | None, kinds: Sequence[str] = ()
) -> list[tuple[Any, ...]]:
    """(path, kind, source, target, line) of a snapshot's files (of `kinds` only, when
    given), by path and line."""
    where, params = ("AND f.path = ?", [path]) if path else ("", [])
    if kinds:
        where += f" AND r.kind IN ({', '.join('?' * len(kinds))})"
        params += list(kinds)
    return [
        tuple(r)
        for r in conn.execute(
            "SELECT f.path, r.kind, r.source, r.target, r.line FROM map_files f"
            " JOIN map_references r ON r.sha256 = f.sha256"
            f" WHERE f.snapshot_seq = ? {where} ORDER BY f.path, r.line, r.kind, r.target",
            (seq, *params),
        )
    ]


BINDING = ("import", "export", "package")  # what other files' references resolve through


def bindings(conn: Connection, digest: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """What other files' references resolve against in one content: its declarations
    (qualname, kind) and its imports, exports and package lines (kind, source, target), each
    sorted, without line numbers."""
    declared = conn.execute(
        "SELECT qualname, kind FROM map_declarations WHERE sha256 = ? ORDER BY 1, 2", (digest,)
    )
    bound = conn.execute(
        f"SELECT kind, source, target FROM map_references WHERE sha256 = ? AND kind IN"
        f" ({', '.join('?' * len(BINDING))}) ORDER BY 1, 2, 3",
        (digest, *BINDING),
    )
    return [tuple(r) for r in declared], [tuple(r) for r in bound]


def carry_edges(
    conn: Connection,
    project_id: str,
    previous: int,
    seq: int,
    changed: Sequence[str],
    edges: Sequence[dict[str, Any]],
) -> None:
    """Snapshot `seq`'s relationships: `previous`'s, but for those from the `changed` files,
    which are `edges`. The rows stay where `previous`'s are stored (`edges_seq`): only the
    changed files' are replaced, and `seq` becomes the one resolved snapshot."""
    row: Any = conn.execute(_HELD, (previous,)).fetchone()
    held = int(row[0])
    conn.execute(
        "DELETE FROM map_edges WHERE snapshot_seq = ? AND CASE WHEN instr(from_node, '::') > 0"
        " THEN substr(from_node, 1, instr(from_node, '::') - 1) ELSE from_node END"
        " IN (SELECT value FROM json_each(?))",
        (held, json.dumps(list(changed))),
    )
    _insert_edges(conn, held, edges)
    others = "SELECT seq FROM map_snapshots WHERE project_id = ? AND seq NOT IN (?, ?)"
    conn.execute(f"DELETE FROM map_edges WHERE snapshot_seq IN ({others})", (project_id, seq, held))
    conn.execute(
        "DELETE FROM map_resolved WHERE snapshot_seq IN"
        " (SELECT seq FROM map_snapshots WHERE project_id = ? AND seq != ?)",
        (project_id, seq),
    )
    conn.execute(
        "INSERT OR REPLACE INTO map_resolved (snapshot_seq, edges_seq) VALUES (?, ?)", (seq, held)
    )


# Where a resolved snapshot's relationships are stored: under itself, or an earlier one.
_HELD = "SELECT COALESCE(edges_seq, snapshot_seq) FROM map_resolved WHERE snapshot_seq = ?"


def _insert_edges(conn: Connection, held: int, edges: Sequence[dict[str, Any]]) -> None:
    conn.executemany(
        "INSERT INTO map_edges (snapshot_seq, kind, from_node, to_path, to_node, line)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [(held, e["kind"], e["from"], e["to"].partition("::")[0], e["to"], e["line"])
         for e in edges],
    )  # fmt: skip


def prune(conn: Connection, project_id: str, keep: int) -> int:
    """Delete the files of all but the project's `keep` newest snapshots, and the parsed
    structure of every content no kept file holds any more; how many file rows."""
    conn.execute(
        "DELETE FROM map_files WHERE snapshot_seq IN (SELECT seq FROM map_snapshots"
        " WHERE project_id = ? ORDER BY seq DESC LIMIT -1 OFFSET ?)",
        (project_id, keep),
    )
    dropped = int(conn.changes())
    if dropped:
        drop_unheld(conn)
    return dropped


def drop_unheld(conn: Connection) -> None:
    """Delete the parsed structure of contents no snapshot's file holds."""
    unheld = (
        "sha256 IN (SELECT p.sha256 FROM map_parsed p WHERE NOT EXISTS"
        " (SELECT 1 FROM map_files f WHERE f.sha256 = p.sha256))"
    )
    for table in ("map_declarations", "map_references", "map_parsed"):
        conn.execute(f"DELETE FROM {table} WHERE {unheld}")


def stored_files(conn: Connection, project_id: str) -> int:
    """File rows the project's snapshots hold now."""
    row: Any = conn.execute(
        "SELECT count(*) FROM map_files WHERE snapshot_seq IN"
        " (SELECT seq FROM map_snapshots WHERE project_id = ?)",
        (project_id,),
    ).fetchone()
    return int(row[0])


def set_edges(conn: Connection, project_id: str, seq: int, edges: Sequence[dict[str, Any]]) -> None:
    """Store snapshot `seq`'s resolved relationships, and drop those of the project's other
    snapshots (only the newest's are kept: `changes` resolves older ones on demand)."""
    older = "SELECT seq FROM map_snapshots WHERE project_id = ? AND seq != ?"
    conn.execute(f"DELETE FROM map_edges WHERE snapshot_seq IN ({older})", (project_id, seq))
    conn.execute(f"DELETE FROM map_resolved WHERE snapshot_seq IN ({older})", (project_id, seq))
    conn.execute("DELETE FROM map_edges WHERE snapshot_seq = ?", (seq,))
    _insert_edges(conn, seq, edges)
    conn.execute(
        "INSERT OR REPLACE INTO map_resolved (snapshot_seq, edges_seq) VALUES (?, NULL)", (seq,)
    )


def resolved(conn: Connection, seq: int) -> bool:
    """Whether snapshot `seq`'s relationships are stored."""
    found = conn.execute("SELECT 1 FROM map_resolved WHERE snapshot_seq = ?", (seq,))
    return found.fetchone() is not None


def newest_resolved(conn: Connection, project_id: str) -> dict[str, Any] | None:
    """{seq, id, created_at, git_head} of the project's newest snapshot with stored
    relationships, or None: what a hook reads (no parser, no resolution)."""
    row = conn.execute(
        "SELECT s.seq, s.id, s.created_at, s.git_head FROM map_snapshots s"
        " JOIN map_resolved r ON r.snapshot_seq = s.seq WHERE s.project_id = ?"
        " ORDER BY s.seq DESC LIMIT 1",
        (project_id,),
    ).fetchone()
    return (
        None
        if row is None
        else dict(zip(("seq", "id", "created_at", "git_head"), row, strict=True))
    )


def edges_into(conn: Connection, seq: int, node: str) -> list[tuple[str, str, str, int]]:
    """(kind, from, to, line) of snapshot `seq`'s relationships reaching `node`: a file
    (and every declaration in it), or one `path::Qualified.name`."""
    where, param = "to_path = ?", [node.partition("::")[0]]
    if "::" in node:
        where, param = "to_path = ? AND to_node = ?", [*param, node]
    return [
        (str(r[0]), str(r[1]), str(r[2]), int(r[3]))
        for r in conn.execute(
            "SELECT kind, from_node, to_node, line FROM map_edges"
            f" WHERE snapshot_seq = ({_HELD}) AND {where} ORDER BY from_node, line",
            (seq, *param),
        )
    ]


def all_edges(conn: Connection, seq: int) -> list[dict[str, Any]]:
    """Snapshot `seq`'s stored relationships, {kind, from, to, line}."""
    return [
        {"kind": r[0], "from": r[1], "to": r[2], "line": r[3]}
        for r in conn.execute(
            f"SELECT kind, from_node, to_node, line FROM map_edges WHERE snapshot_seq = ({_HELD})",
            (seq,),
        )
    ]


def unparsed(conn: Connection, seq: int, languages: Sequence[str]) -> list[tuple[str, str, str]]:
    """(path, language, sha256) of snapshot `seq`'s files in `languages` whose content has
    no stored structure (new since the parser learnt their language, or failed before)."""
    return [
        (str(r[0]), str(r[1]), str(r[2]))
        for r in conn.execute(
            "SELECT f.path, f.language, f.sha256 FROM map_files f WHERE f.snapshot_seq = ?"
            " AND f.language IN (SELECT value FROM json_each(?)) AND NOT EXISTS"
            " (SELECT 1 FROM map_parsed p WHERE p.sha256 = f.sha256)",
            (seq, json.dumps(list(languages))),
        )
    ]


def latest_files(conn: Connection, project_id: str) -> int | None:
    """How many files the project's newest snapshot maps, or None without a map."""
    row = conn.execute(
        "SELECT files FROM map_snapshots WHERE project_id = ? ORDER BY seq DESC LIMIT 1",
        (project_id,),
    ).fetchone()
    return None if row is None else int(row[0])


def latest_seq(conn: Connection, project_id: str) -> int | None:
    """The seq of the project's newest snapshot, or None: one indexed read."""
    row = conn.execute(
        "SELECT max(seq) FROM map_snapshots WHERE project_id = ?", (project_id,)
    ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def kept_at(conn: Connection, project_id: str, when: str | None) -> dict[str, Any] | None:
    """{seq, id} of the project's newest snapshot that keeps its files, taken at or before
    `when` (None: the newest of all)."""
    clause, params = ("AND created_at <= ?", (when,)) if when else ("", ())
    row = conn.execute(
        "SELECT seq, id FROM map_snapshots s WHERE project_id = ?"
        f" {clause} AND EXISTS (SELECT 1 FROM map_files f WHERE f.snapshot_seq = s.seq)"
        " ORDER BY seq DESC LIMIT 1",
        (project_id, *params),
    ).fetchone()
    return None if row is None else {"seq": int(row[0]), "id": str(row[1])}


def files_changed(conn: Connection, old: int, new: int) -> tuple[dict[str, str], dict[str, str]]:
    """({path: sha256} in `new` and not so in `old`, the same of `old` against `new`)."""
    query = (
        "SELECT path, sha256 FROM map_files WHERE snapshot_seq = ?"
        " EXCEPT SELECT path, sha256 FROM map_files WHERE snapshot_seq = ?"
    )
    came = {str(r[0]): str(r[1]) for r in conn.execute(query, (new, old))}
    left = {str(r[0]): str(r[1]) for r in conn.execute(query, (old, new))}
    return came, left


def declared_in(conn: Connection, digest: str) -> dict[str, tuple[str, str]]:
    """qualname -> (kind, digest of its text) of one parsed file content."""
    return {
        str(r[0]): (str(r[1]), str(r[2]))
        for r in conn.execute(
            "SELECT qualname, kind, digest FROM map_declarations WHERE sha256 = ?", (digest,)
        )
    }


OVERVIEW_DIRECTORIES = 10  # kept with each snapshot


def _overview_of(files: Sequence[Sequence[Any]]) -> str:
    """What `overview` answers, from a snapshot's file rows (FILE's order), as JSON."""
    languages: dict[str, int] = {}
    dirs: dict[str, int] = {}
    for path, language, *_ in files:
        languages[language or ""] = languages.get(language or "", 0) + 1
        if language is not None and "/" in path:
            folder = path[: path.rindex("/") + 1]
            dirs[folder] = dirs.get(folder, 0) + 1
    fullest = sorted(dirs.items(), key=lambda d: (-d[1], d[0]))[:OVERVIEW_DIRECTORIES]
    return json.dumps({"languages": languages,
                       "directories": [[d.rstrip("/"), n] for d, n in fullest]})  # fmt: skip


def overview(conn: Connection, seq: int, directories: int) -> dict[str, Any]:
    """A snapshot's file count by language and its `directories` fullest directories: as
    kept with the snapshot, else counted from its files."""
    kept: Any = conn.execute("SELECT overview FROM map_snapshots WHERE seq = ?", (seq,)).fetchone()
    if kept is not None and kept[0] and directories <= OVERVIEW_DIRECTORIES:
        data = json.loads(kept[0])
        return {"languages": data["languages"],
                "directories": [(str(d), int(n)) for d, n in data["directories"][:directories]]}  # fmt: skip
    languages = {
        (r[0] or ""): int(r[1])
        for r in conn.execute(
            "SELECT language, count(*) FROM map_files WHERE snapshot_seq = ? GROUP BY language",
            (seq,),
        )
    }
    fullest = [
        (str(r[0]).rstrip("/"), int(r[1]))
        for r in conn.execute(
            "SELECT rtrim(path, replace(path, '/', '')) AS dir, count(*) AS n FROM map_files"
            " WHERE snapshot_seq = ? AND language IS NOT NULL AND instr(path, '/') > 0"
            " GROUP BY dir ORDER BY n DESC, dir LIMIT ?",
            (seq, directories),
        )
    ]
    return {"languages": languages, "directories": fullest}


def declaration_named(conn: Connection, seq: int, qualname: str, limit: int) -> list[str]:
    """Paths of snapshot `seq`'s files declaring `qualname` (at most `limit`)."""
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT DISTINCT f.path FROM map_declarations d JOIN map_files f"
            " ON f.sha256 = d.sha256 AND f.snapshot_seq = ? WHERE d.qualname = ? LIMIT ?",
            (seq, qualname, limit),
        )
    ]


def file_digest(conn: Connection, seq: int, path: str) -> str | None:
    """The SHA-256 snapshot `seq` holds for `path`, or None."""
    row = conn.execute(
        "SELECT sha256 FROM map_files WHERE snapshot_seq = ? AND path = ?", (seq, path)
    ).fetchone()
    return None if row is None else str(row[0])
