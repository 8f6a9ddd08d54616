"""SQL for `notes` and `notes_fts`: the repository's Markdown sections, indexed."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from waymark.storage.connection import Connection

PROCEDURE_KINDS = ("skill", "agent", "prompt", "procedure")
KEYS = (
    "id", "path", "heading", "start_line", "end_line", "sha256", "file_sha256", "file_stat",
    "kind", "indexed_at", "description",
)  # fmt: skip


def files(conn: Connection, project_id: str) -> dict[str, tuple[str, str, int]]:
    """path -> (file sha256, file stat, sections) of the project's indexed files."""
    return {
        str(p): (str(h), str(s), int(str(n)))
        for p, h, s, n in conn.execute(
            "SELECT path, file_sha256, file_stat, count(*) FROM notes WHERE project_id = ?"
            " GROUP BY path",
            (project_id,),
        )
    }


def drop_file(conn: Connection, project_id: str, path: str) -> None:
    ids = [r[0] for r in conn.execute(
        "SELECT id FROM notes WHERE project_id = ? AND path = ?", (project_id, path))]  # fmt: skip
    conn.cursor().executemany("DELETE FROM notes_fts WHERE rowid = ?", [(i,) for i in ids])
    conn.execute("DELETE FROM notes WHERE project_id = ? AND path = ?", (project_id, path))


def add_sections(
    conn: Connection,
    project_id: str,
    path: str,
    file_sha: str,
    file_stat: str,
    stamp: str,
    sections: Iterable[tuple[str, int, int, str, str, str, str | None]],
) -> int:
    """(heading, start, end, sha256, kind, searchable text, description) per section; how
    many. A description (a procedure's trigger) is searched with the heading."""
    n = 0
    for heading, start, end, sha, kind, text, description in sections:
        conn.execute(
            "INSERT INTO notes (project_id, path, heading, start_line, end_line, sha256,"
            " file_sha256, file_stat, kind, indexed_at, description)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (project_id, path, heading, start, end, sha, file_sha, file_stat, kind, stamp,
             description),
        )  # fmt: skip
        titled = f"{heading} {description}" if description else heading
        conn.execute("INSERT INTO notes_fts (rowid, heading, body) VALUES (?, ?, ?)",
                     (conn.last_insert_rowid(), titled, text))  # fmt: skip
        n += 1
    return n


def set_stat(conn: Connection, project_id: str, path: str, file_stat: str) -> None:
    conn.execute("UPDATE notes SET file_stat = ? WHERE project_id = ? AND path = ?",
                 (file_stat, project_id, path))  # fmt: skip


def search(
    conn: Connection, project_id: str, match: str, limit: int, kinds: Sequence[str] = ("note",)
) -> list[dict[str, Any]]:
    """The project's sections of `kinds` matching the FTS5 expression, best first (bm25, the
    heading weighing four times the body), each with a snippet of its text."""
    marks = ", ".join("?" * len(kinds))
    rows = conn.execute(
        f"SELECT {', '.join('n.' + k for k in KEYS)}, snippet(notes_fts, 1, '', '', ' … ', 24)"
        " FROM notes_fts f JOIN notes n ON n.id = f.rowid WHERE notes_fts MATCH ?"
        f" AND n.project_id = ? AND n.kind IN ({marks}) ORDER BY bm25(notes_fts, 4.0, 1.0)"
        " LIMIT ?",
        (match, project_id, *kinds, limit),
    ).fetchall()
    return [dict(zip((*KEYS, "snippet"), r, strict=True)) for r in rows]


def of_path(conn: Connection, project_id: str, path: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        f"SELECT {', '.join(KEYS)} FROM notes WHERE project_id = ? AND path = ?"
        " ORDER BY start_line",
        (project_id, path),
    ).fetchall()
    return [dict(zip(KEYS, r, strict=True)) for r in rows]


def kinds(conn: Connection, project_id: str) -> dict[str, str]:
    """path -> its kind (note, skill, agent, prompt, procedure)."""
    return {str(p): str(k) for p, k in conn.execute(
        "SELECT DISTINCT path, kind FROM notes WHERE project_id = ?", (project_id,))}  # fmt: skip


def any_of_kinds(conn: Connection, project_id: str, kinds: Sequence[str]) -> bool:
    marks = ", ".join("?" * len(kinds))
    return (
        conn.execute(
            f"SELECT 1 FROM notes WHERE project_id = ? AND kind IN ({marks}) LIMIT 1",
            (project_id, *kinds),
        ).fetchone()
        is not None
    )


def counts(conn: Connection, project_id: str) -> dict[str, int]:
    row: Any = conn.execute(
        "SELECT count(DISTINCT path), count(*) FROM notes WHERE project_id = ?", (project_id,)
    ).fetchone()
    return {"files": int(row[0]), "sections": int(row[1])}


def paths(conn: Connection, project_id: str, kinds: Sequence[str] = ("note",)) -> list[str]:
    marks = ", ".join("?" * len(kinds))
    return [str(r[0]) for r in conn.execute(
        f"SELECT DISTINCT path FROM notes WHERE project_id = ? AND kind IN ({marks})"
        " ORDER BY path", (project_id, *kinds))]  # fmt: skip


def folders(conn: Connection, project_id: str) -> list[str]:
    return [str(r[0]) for r in conn.execute(
        "SELECT path FROM note_folders WHERE project_id = ? ORDER BY path", (project_id,))]  # fmt: skip


def add_folder(conn: Connection, project_id: str, path: str, stamp: str) -> bool:
    conn.execute("INSERT OR IGNORE INTO note_folders (project_id, path, added_at) VALUES (?, ?, ?)",
                 (project_id, path, stamp))  # fmt: skip
    return conn.changes() == 1


def remove_folder(conn: Connection, project_id: str, path: str) -> bool:
    conn.execute("DELETE FROM note_folders WHERE project_id = ? AND path = ?", (project_id, path))
    return conn.changes() == 1


def set_links(conn: Connection, project_id: str, src: str, dsts: Iterable[str]) -> None:
    conn.execute("DELETE FROM note_links WHERE project_id = ? AND src = ?", (project_id, src))
    conn.cursor().executemany(
        "INSERT OR IGNORE INTO note_links (project_id, src, dst) VALUES (?, ?, ?)",
        [(project_id, src, d) for d in dsts],
    )


def drop_links(conn: Connection, project_id: str, src: str) -> None:
    conn.execute("DELETE FROM note_links WHERE project_id = ? AND src = ?", (project_id, src))


def linked(conn: Connection, project_id: str, path: str, limit: int) -> list[dict[str, Any]]:
    """The first section of each note `path` links to (or that links to it)."""
    rows = conn.execute(
        f"SELECT {', '.join('n.' + k for k in KEYS)} FROM notes n WHERE n.project_id = ?"
        " AND n.path IN (SELECT dst FROM note_links WHERE project_id = ? AND src = ?"
        " UNION SELECT src FROM note_links WHERE project_id = ? AND dst = ?)"
        " AND n.start_line = (SELECT min(start_line) FROM notes m WHERE m.project_id ="
        " n.project_id AND m.path = n.path) ORDER BY n.path LIMIT ?",
        (project_id, project_id, path, project_id, path, limit),
    ).fetchall()
    return [dict(zip(KEYS, r, strict=True)) for r in rows]
