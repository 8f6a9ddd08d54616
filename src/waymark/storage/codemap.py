"""SQL for the code map: snapshots (`map_snapshots`) and their files (`map_files`)."""

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
    names = SNAPSHOT[1:]
    values = [json.dumps(row[n]) if n == "skipped" else row[n] for n in names]
    values[names.index("git_dirty")] = None if row["git_dirty"] is None else int(row["git_dirty"])
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


def references(conn: Connection, seq: int, path: str | None) -> list[tuple[Any, ...]]:
    """(path, kind, source, target, line) of a snapshot's files, by path and line."""
    where, params = ("AND f.path = ?", (path,)) if path else ("", ())
    return [
        tuple(r)
        for r in conn.execute(
            "SELECT f.path, r.kind, r.source, r.target, r.line FROM map_files f"
            " JOIN map_references r ON r.sha256 = f.sha256"
            f" WHERE f.snapshot_seq = ? {where} ORDER BY f.path, r.line, r.kind, r.target",
            (seq, *params),
        )
    ]


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
