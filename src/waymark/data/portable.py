"""Exports that move a user's memory between machines, and importing them back.

JSON lines, full fidelity: a header `{"waymark_export": 1, "schema_version", "exported_at",
"scope", "project_id"}`, then one `{"table", "row"}` line per row (tables in dependency order,
rows by key), then `{"digest"}`: the SHA-256 of the data lines in canonical form (sorted keys,
no whitespace, ASCII), so the same rows always give the same digest. Local surrogate keys do
not travel (a memory's rowid, an event's seq); derived data (vectors, the FTS index) is made
again here. Importing checks the digest, refuses rows that clash with different ones already
here, and writes everything in one transaction; the same export twice is a no-op.

Markdown is for people to read (an index, one file per memory and per checkpoint); it is
export-only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from waymark.base import clock
from waymark.base.files import fsync_dir, new_temp, private_dir, publish, remove_quietly, write_new
from waymark.errors import (
    Conflict,
    DigestMismatch,
    ExportInvalid,
    ImportConflict,
    InvalidArgument,
    SchemaTooNew,
)
from waymark.handoff import revision as handoff
from waymark.storage import checkpoints as checkpoint_rows
from waymark.storage import connection as db
from waymark.storage import migrations, tables
from waymark.storage.connection import Connection
from waymark.storage.tables import TABLES

FORMAT = 1


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def digest(records: Iterable[tuple[str, dict[str, Any]]]) -> str:
    """SHA-256 over the canonical data lines: header and time play no part."""
    h = hashlib.sha256()
    for table, row in records:
        h.update(canonical({"table": table, "row": row}).encode("ascii") + b"\n")
    return h.hexdigest()


def rows(conn: Connection, project_id: str | None = None) -> Iterator[tuple[str, dict]]:
    """Every exported row, in canonical order; only one project's (and global) with project_id."""
    return tables.all_rows(conn, project_id)


def export_jsonl(conn: Connection, out: TextIO, project_id: str | None = None) -> dict:
    """Write the export to `out`; return {digest, rows per table, header}."""
    h = hashlib.sha256()
    counts: Counter[str] = Counter()
    with db.read(conn):  # one read snapshot for every table
        header = {
            "waymark_export": FORMAT,
            "schema_version": db.schema_version(conn),
            "exported_at": clock.now(),
            "scope": "all" if project_id is None else "project",
            "project_id": project_id,
        }
        out.write(canonical(header) + "\n")
        for table, row in rows(conn, project_id):
            line = canonical({"table": table, "row": row})
            h.update(line.encode("ascii") + b"\n")
            out.write(line + "\n")
            counts[table] += 1
    out.write(canonical({"digest": h.hexdigest()}) + "\n")
    every = {t: counts[t] for t, _ in TABLES if tables.table_exists(conn, t)}
    return {"digest": h.hexdigest(), "rows": every, "header": header}


def default_path(project: Any, fmt: str = "jsonl") -> str:
    """`<data home>/exports/waymark-export-<project>-<UTC time>[-n][.jsonl]` (`project` None:
    all of them; `-n` for a second export within a second), in an owner-only folder: an
    export holds every memory, so it never lands in a repository by default."""
    from waymark import home

    label = (project.name or os.path.basename(project.root or "")) if project else "all"
    folder = os.path.join(home.data_home(), "exports")
    private_dir(folder)
    slug = "".join(c if c.isalnum() or c in "-_" else "-" for c in label)[:40].strip("-")
    name = f"waymark-export-{slug or 'project'}-{clock.compact()}"
    end = ".jsonl" if fmt == "jsonl" else ""
    path, n = os.path.join(folder, name + end), 1
    while os.path.lexists(path):  # two exports within one second: the second numbered
        n += 1
        path = os.path.join(folder, f"{name}-{n}{end}")
    return path


def write_export(conn: Connection, path: str, project_id: str | None = None) -> dict:
    """Export to a new owner-only file at `path`; an existing file is never replaced."""
    path = os.path.abspath(path)
    _refuse_existing(path)
    folder = os.path.dirname(path)
    private_dir(folder)  # a folder it creates is the owner's only
    tmp = new_temp(folder, ".waymark-export-")
    try:
        with open(tmp, "w", encoding="ascii", newline="\n") as out:
            report = export_jsonl(conn, out, project_id)
            out.flush()
            os.fsync(out.fileno())
        try:
            publish(tmp, path)
        except FileExistsError:
            _refuse_existing(path)
        fsync_dir(folder)
    finally:
        remove_quietly(tmp)
    return {"path": path, "format": "jsonl", **report}


def _refuse_existing(path: str) -> None:
    if os.path.lexists(path):
        raise InvalidArgument(f"{path} already exists; choose another path (nothing is replaced)")


def is_export_header(line: str) -> bool:
    if '"waymark_export"' not in line:
        return False
    try:
        head = json.loads(line)
    except ValueError:
        return False
    return isinstance(head, dict) and "waymark_export" in head


def read_export(lines: Iterable[str]) -> tuple[dict[str, Any], list[tuple[str, dict]]]:
    """The header and data rows of an export, after checking its digest and version."""
    header: dict[str, Any] | None = None
    records: list[tuple[str, dict]] = []
    claimed: Any = None
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            raise ExportInvalid(f"line {lineno} is not valid JSON", line=lineno) from None
        if header is None:
            if not (isinstance(item, dict) and "waymark_export" in item):
                raise ExportInvalid("the first line is not a Waymark export header", line=lineno)
            header = item
        elif claimed is not None:
            raise DigestMismatch(f"line {lineno} follows the digest line; nothing was imported")
        elif isinstance(item, dict) and set(item) == {"digest"}:
            claimed = item["digest"]
        elif _is_record(item):
            records.append((item["table"], item["row"]))
        else:
            raise ExportInvalid(f'line {lineno} is not {{"table", "row"}}', line=lineno)
    if header is None:
        raise ExportInvalid("the file is empty")
    if claimed is None:
        raise DigestMismatch("the export has no digest line: it is truncated; nothing was imported")
    actual = digest(records)
    if claimed != actual:
        raise DigestMismatch(
            "the export's rows do not match its digest: it was changed or truncated after "
            "export; nothing was imported",
            expected=claimed,
            actual=actual,
        )
    if header.get("waymark_export") != FORMAT:
        raise ExportInvalid(f"export format {header.get('waymark_export')!r} is not {FORMAT}")
    found, head = header.get("schema_version"), len(migrations.MIGRATIONS)
    if not isinstance(found, int) or found > head:
        raise SchemaTooNew(
            f"the export was written by a newer Waymark (schema {found} > {head}); "
            "upgrade Waymark to import it",
            found=found,
            supported=head,
        )
    return header, records


def _is_record(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and set(item) == {"table", "row"}
        and isinstance(item["table"], str)
        and isinstance(item["row"], dict)
        and all(isinstance(v, (str, int, float, type(None))) for v in item["row"].values())
    )


def import_export(conn: Connection, lines: Iterable[str]) -> dict[str, Any]:
    """Load an export with its ids, all or nothing. Rows already here unchanged are skipped;
    rows here with the same key and different content refuse the whole import."""
    header, records = read_export(lines)
    by_table: dict[str, list[dict]] = {}
    for table, row in records:
        by_table.setdefault(table, []).append(row)
    unknown = set(by_table) - {t for t, _ in TABLES}
    if unknown:
        raise ExportInvalid(f"unknown table(s) {sorted(unknown)}: an export from a newer Waymark")
    inserted: Counter[str] = Counter()
    unchanged: Counter[str] = Counter()
    with db.write(conn):
        tables.defer_references(conn)  # supersede chains point both ways
        plan, conflicts = [], []
        for table, keys in TABLES:
            todo = by_table.get(table, [])
            if todo and not tables.table_exists(conn, table):
                raise ExportInvalid(f"this Waymark has no table {table!r}")
            new, same, clashes = _plan(conn, table, keys, todo)
            plan.append((table, new))
            unchanged[table] += same
            conflicts += clashes
        if conflicts:
            raise ImportConflict(_conflict_message(conflicts), conflicts=conflicts[:100])
        try:
            for table, new in plan:
                for row in new:
                    tables.insert_row(conn, table, row)
                inserted[table] += len(new)
        except Conflict as exc:
            raise ImportConflict(
                f"the export clashes with rows here ({exc.message}); nothing was imported"
            ) from exc
        except LookupError as exc:
            raise ExportInvalid(str(exc)) from exc
        orphans = [
            row for table, new in plan if new for row in tables.broken_references(conn, table)
        ]
        if orphans:
            raise ExportInvalid(
                f"{len(orphans)} imported rows reference rows in neither the export nor this "
                f"database (first in {orphans[0][0]}); nothing was imported"
            )
    return {
        "format": "waymark_export",
        "schema_version": header["schema_version"],
        "digest": digest(records),
        "inserted": dict(inserted),
        "unchanged": dict(unchanged),
        "total_inserted": sum(inserted.values()),
        "total_unchanged": sum(unchanged.values()),
    }


def _plan(
    conn: Connection, table: str, keys: tuple[str, ...], todo: list[dict]
) -> tuple[list[dict], int, list[dict]]:
    """(rows to insert, rows already here, conflicts) for one table."""
    if not todo:
        return [], 0, []
    extra = set().union(*todo) - set(tables.columns(conn, table))
    if extra:
        raise ExportInvalid(f"{table} has no column(s) {sorted(extra)} in this Waymark")
    if not keys:  # a multiset: import only the copies not here yet
        here = Counter(
            canonical({c: r[c] for c in todo[0]}) for r in tables.table_rows(conn, table)
        )
        new = []
        for row in todo:
            line = canonical(row)
            if here[line]:
                here[line] -= 1
            else:
                new.append(row)
        return new, len(todo) - len(new), []
    new, same, clashes = [], 0, []
    for row in todo:
        key = {k: row.get(k) for k in keys}
        found = tables.rows_with_key(conn, table, key)
        if not found:
            clash = _unique_clash(conn, table, row)
            if clash:
                clashes.append({"table": table, "key": key, "fields": [], "why": clash})
            else:
                new.append(row)
        elif all(found[0].get(c) == v for c, v in row.items()):
            same += 1
        else:
            fields = sorted(c for c, v in row.items() if found[0].get(c) != v)
            clashes.append({"table": table, "key": key, "fields": fields})
    return new, same, clashes


def _unique_clash(conn: Connection, table: str, row: dict) -> str | None:
    """A different project here already holds this project's name or root."""
    if table != "projects":
        return None
    for column in ("name", "root"):
        if row.get(column) is None:
            continue
        other = tables.project_holding(conn, column, row[column])
        if other is not None:
            return f"project {other} here already has {column} {row[column]!r}"
    return None


def _conflict_message(conflicts: list[dict]) -> str:
    shown = "; ".join(
        f"{c['table']} {'/'.join(str(v) for v in c['key'].values())} "
        + (c.get("why") or f"differs in {', '.join(c['fields'])}")
        for c in conflicts[:5]
    )
    more = f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else ""
    return (
        f"{len(conflicts)} rows of the export clash with different rows already here: "
        f"{shown}{more}; nothing was imported"
    )


# Markdown: for reading, not for importing.


def export_markdown(conn: Connection, out_dir: str, project_id: str | None = None) -> dict:
    """A folder: MEMORY.md (an index by type), <type>/<id>-<slug>.md, checkpoints/<id>.md."""
    out_dir = os.path.abspath(out_dir)
    _refuse_existing(out_dir)
    parent = os.path.dirname(out_dir)
    private_dir(parent)
    tmp = os.path.join(parent, f".{os.path.basename(out_dir)}.tmp-{os.urandom(4).hex()}")
    private_dir(tmp)
    try:
        with db.read(conn):
            index = _write_markdown(conn, tmp, project_id)
        _refuse_existing(out_dir)
        os.rename(tmp, out_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"path": out_dir, "format": "markdown", **index}


def _write_markdown(conn: Connection, folder: str, project_id: str | None) -> dict:
    names = {r["id"]: r["name"] or r["root"] for r in tables.table_rows(conn, "projects")}
    memories = tables.table_rows(conn, "memories", project_id)
    entries: dict[str, list[str]] = {}
    for m in sorted(memories, key=lambda m: (m["status"] != "active", m["created_at"], m["id"])):
        rel = f"{m['type']}/{m['id']}-{_slug(m['title'])}.md"
        project = names.get(m["project_id"], "global") if m["project_id"] else "global"
        _write(folder, rel, _memory_page(m, project))
        title = m["title"] or f"(erased: {m['erased_reason']})"
        entries.setdefault(m["type"], []).append(
            f"- [{_md(title)}]({rel}) · {m['status']} · {project} · {m['created_at'][:10]}"
        )
    checkpoints = tables.table_rows(conn, "checkpoints", project_id)
    cp_lines = []
    for cp in checkpoints:
        body = json.loads(checkpoint_rows.revision_body(conn, cp["current_revision"]) or "{}")
        count = checkpoint_rows.count_revisions(conn, cp["id"])
        meta = {**cp, "project": names.get(cp["project_id"]), "revisions": count}
        text = handoff.render(body, status=cp["status"])
        objective = body.get("objective", "") or cp["id"]
        _write(folder, f"checkpoints/{cp['id']}.md", _page(meta, f"# {objective}\n\n{text}\n"))
        cp_lines.append(
            f"- [{_md(objective)}](checkpoints/{cp['id']}.md) · {cp['status']} · "
            f"{names.get(cp['project_id'])} · {cp['updated_at'][:10]}"
        )
    lines = [
        "# Waymark memory",
        "",
        f"Exported {clock.now()} (schema {db.schema_version(conn)}): {len(memories)} memories, "
        f"{len(checkpoints)} checkpoints.",
    ]
    for type_ in sorted(entries):
        lines += ["", f"## {type_.capitalize()}s ({len(entries[type_])})", "", *entries[type_]]
    if cp_lines:
        lines += ["", f"## Checkpoints ({len(cp_lines)})", "", *cp_lines]
    _write(folder, "MEMORY.md", "\n".join(lines) + "\n")
    return {"memories": len(memories), "checkpoints": len(checkpoints)}


FRONT_MATTER = (
    "id", "type", "status", "project", "scope", "target", "tags", "priority",
    "pinned", "key", "actor", "client", "session_id", "source_ref", "evidence", "git_branch",
    "valid_until", "event_time", "created_at", "updated_at", "supersedes", "superseded_by",
    "erased_reason",
)  # fmt: skip


def _memory_page(m: dict[str, Any], project: str) -> str:
    meta = {**m, "project": project, "scope": m["scope_type"], "target": m["scope_target"]}
    meta["tags"] = json.loads(m["tags"] or "[]")
    meta["evidence"] = json.loads(m["evidence"] or "[]")
    meta["pinned"] = bool(m["pinned"])
    meta = {k: meta[k] for k in FRONT_MATTER if meta.get(k) not in (None, [], "")}
    if m["status"] == "erased":
        return _page(meta, f"# (erased)\n\nErased: {m['erased_reason']}\n")
    return _page(meta, f"# {m['title']}\n\n{m['content'].rstrip()}\n")


def _page(meta: dict[str, Any], body: str) -> str:
    lines = [f"{k}: {_yaml(v)}" for k, v in meta.items() if v is not None]
    return "---\n" + "\n".join(lines) + "\n---\n\n" + body


_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./:+@-]*")
_NUMBER = re.compile(r"[-+]?[0-9._]+([eE][-+]?[0-9]+)?")
_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n"}


def _yaml(value: Any) -> str:
    """A YAML scalar or flow value: plain when unambiguous, else JSON (valid YAML)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and (
        _PLAIN.fullmatch(value) and not _NUMBER.fullmatch(value) and value.lower() not in _WORDS
    ):
        return value
    return json.dumps(value, ensure_ascii=False)


def _slug(title: str) -> str:
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")[:50].rstrip("-")
    return slug or "memory"


def _md(text: str) -> str:
    return text.replace("[", "\\[").replace("]", "\\]").replace("\n", " ")


def _write(folder: str, rel: str, text: str) -> None:
    path = os.path.join(folder, *rel.split("/"))
    private_dir(os.path.dirname(path))
    write_new(path, text)
