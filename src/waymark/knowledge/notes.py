"""What the repository already knows: its Markdown notes (ADRs, design notes, runbooks,
CONTRIBUTING, ...) as cited knowledge, never copied into memories.

The files are those git tracks that `[knowledge] paths` in `.waymark.toml` names (globs, `**`
for any depth), by default DEFAULT_PATHS: `docs/**/*.md`, `adr/**` and the Markdown files at
the root, but never the client instruction files (CLAUDE.md, AGENTS.md, ...), which the
clients load themselves. Each file is split by heading (ATX `#` headings outside fenced code)
into sections, each kept with its path, heading path (`Guide > Install > Linux`), line span
and SHA-256, and its text searchable (redacted first, as every stored field). A refresh reads
only files whose size or mtime moved, and of those re-indexes only what hashes differently.

Recall cites a section as `path#heading (lines a-b)`; RECHECK when the file changed since it
was read (its stat first, its hash when the stat moved).
"""

from __future__ import annotations

import os
import re

from waymark.base import clock
from waymark.base.files import stat_key
from waymark.errors import InvalidArgument
from waymark.projects import git
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage import notes as rows
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

DEFAULT_PATHS = ("docs/**/*.md", "adr/**", "*.md")
# The clients load these themselves (projects/client_files.py): never indexed twice.
CLIENT_FILES = frozenset(("CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENTS.override.md",
                          ".claude/CLAUDE.md"))  # fmt: skip
TEXT_SUFFIXES = (".md", ".markdown", ".mdx", ".txt", ".rst")
MAX_FILE = 1024 * 1024
MAX_FILES = 2000
MAX_SECTION_CHARS = 8000  # of a section's text indexed (the file itself holds it whole)
FRESH, RECHECK, MISSING = "FRESH", "RECHECK", "MISSING"
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def configured(project: Project) -> tuple[str, ...]:
    """The globs `[knowledge] paths` names, else DEFAULT_PATHS."""
    from waymark.projects.ignore import nearest_table

    found = nearest_table(project.files, project.files, "knowledge")
    if found is None or "paths" not in found[1]:
        return DEFAULT_PATHS
    path, table = found
    value = table["paths"]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise InvalidArgument(f"{path}: [knowledge] paths must be a list of globs")
    return tuple(value)


def _glob(pattern: str) -> re.Pattern[str]:
    """A path glob as a regex: `**/` any folders (or none), `**` anything, `*` and `?`
    within one name."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


# Procedures, skills, agent profiles and prompts: each file one entry of its own kind, its
# trigger from its front matter (`description:`), wherever `[knowledge] paths` points.
PROCEDURES = (
    (".claude/skills/*/SKILL.md", "skill"),
    (".agents/skills/*/SKILL.md", "skill"),
    (".claude/agents/*.md", "agent"),
    (".codex/prompts/*.md", "prompt"),
    ("procedures/**/*.md", "procedure"),
)
PROCEDURE_KINDS = rows.PROCEDURE_KINDS
ALL_KINDS = ("note", *PROCEDURE_KINDS)


def candidates(project: Project) -> list[tuple[str, str]]:
    """(path, kind) of the tracked files to index (POSIX paths from the root): procedures
    by PROCEDURES, notes by the globs; never the client instruction files."""
    root = project.files
    if not root:
        return []
    listed = git.output(root, "ls-files", "-z") or ""
    globs = [_glob(p) for p in configured(project)]
    kinds = [(_glob(p), kind) for p, kind in PROCEDURES]
    out = []
    for path in listed.split("\0"):
        if not path or path in CLIENT_FILES or path.rsplit("/", 1)[-1] in CLIENT_FILES:
            continue
        if not path.lower().endswith(TEXT_SUFFIXES):
            continue
        kind = next((k for g, k in kinds if g.match(path)), None)
        if kind is None and any(g.match(path) for g in globs):
            kind = "note"
        if kind is not None:
            out.append((path, kind))
    return sorted(out)[:MAX_FILES]


FOLDER_SKIP = (".obsidian", ".trash", ".git")
_WIKI = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")


def folder_files(conn: Connection, project: Project) -> list[tuple[str, str]]:
    """(absolute path, "note") of the Markdown in the folders the project opted in to,
    hidden folders (.obsidian, .trash) left out."""
    out: list[tuple[str, str]] = []
    for folder in rows.folders(conn, project.id):
        for base, dirs, names in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in FOLDER_SKIP)
            for name in sorted(names):
                if name.lower().endswith((".md", ".markdown")):
                    out.append((os.path.join(base, name), "note"))
                    if len(out) >= MAX_FILES:
                        return out
    return out


def add_folder(conn: Connection, project: Project, path: str) -> str:
    """Opt a folder of Markdown outside the repository in (read-only); its real path."""
    real = os.path.realpath(os.path.expanduser(path))
    if not os.path.isdir(real):
        raise InvalidArgument(f"{path} is not a folder")
    root = os.path.realpath(project.files) if project.files else None
    if root and (real == root or real.startswith(root + os.sep)):
        raise InvalidArgument(f"{path} is inside the repository: name it in `[knowledge] paths`")
    with db.write(conn):
        rows.add_folder(conn, project.id, real, clock.now())
    return real


def remove_folder(conn: Connection, project: Project, path: str) -> str:
    real = os.path.realpath(os.path.expanduser(path))
    with db.write(conn):
        if not rows.remove_folder(conn, project.id, real):
            from waymark.errors import NotFound

            raise NotFound(f"{path} is not one of this project's note folders")
    return real


def _links(path: str, text: str, stems: dict[str, str]) -> list[str]:
    """The notes of the same folders that `[[Wiki links]]` in `text` name, by file name."""
    out = []
    for target in _WIKI.findall(text):
        name = target.strip().rsplit("/", 1)[-1].lower().removesuffix(".md")
        found = stems.get(name)
        if found and found != path and found not in out:
            out.append(found)
    return out


def front_matter(text: str) -> tuple[dict[str, str], int]:
    """The `---` block's `key: value` lines (a `|` or `>` value's indented lines joined) and
    the number of lines it takes; ({}, 0) without one."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, 0
    found: dict[str, str] = {}
    key = None
    for n, line in enumerate(lines[1:], 2):
        if line.strip() == "---":
            return {k: v.strip().strip("\"'") for k, v in found.items()}, n
        if key and (line.startswith((" ", "\t")) or not line.strip()):
            found[key] = (found[key] + " " + line.strip()).strip()
            continue
        name, sep, value = line.partition(":")
        if sep and name.strip() and " " not in name.strip():
            key = name.strip().lower()
            value = value.strip()
            found[key] = "" if value in ("|", ">", "|-", ">-") else value
    return {}, 0


def procedure(path: str, kind: str, text: str) -> tuple[str, str, str]:
    """(name, trigger, body) of a procedure file: its front matter's name and description,
    else the folder of a SKILL.md or the file's stem, and its first paragraph."""
    meta, skip = front_matter(text)
    body = "\n".join(text.splitlines()[skip:])
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if stem.upper() == "SKILL" and "/" in path:
        stem = path.rsplit("/", 2)[-2]
    name = meta.get("name") or stem
    trigger = meta.get("description") or next(
        (line.strip() for line in body.splitlines()
         if line.strip() and not line.lstrip().startswith(("#", "---"))), "")  # fmt: skip
    return name, " ".join(trigger.split())[:400], body


def split(text: str) -> list[tuple[str, int, int, str]]:
    """(heading path, first line, last line, text) of each section with a body, 1-based
    lines; the lines before the first heading are the section `(top)`."""
    lines = text.splitlines()
    sections: list[tuple[str, int, int, str]] = []
    stack: list[tuple[int, str]] = []
    start, heading, fenced = 1, "(top)", False

    def close(end: int) -> None:
        body = "\n".join(lines[start - 1 : end])
        under = lines[start - 1 if heading == "(top)" else start : end]
        if any(line.strip() for line in under):  # a heading alone is no section
            sections.append((heading, start, end, body))

    for n, line in enumerate(lines, 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match is None:
            continue
        close(n - 1)
        level, title = len(match.group(1)), match.group(2).strip()
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        heading, start = " > ".join(t for _, t in stack), n
    close(len(lines))
    return sections


def refresh(conn: Connection, project: Project) -> dict[str, Any]:
    """Index what changed: {files, sections, added, changed, removed, unchanged, seconds}."""
    import hashlib
    import time

    started = time.perf_counter()
    root = project.files or ""
    known = rows.files(conn, project.id)
    outside = folder_files(conn, project)
    wanted = candidates(project) + outside
    stems = {os.path.basename(p).lower().rsplit(".", 1)[0]: p for p, _ in outside}
    done = {"added": 0, "changed": 0, "removed": 0, "unchanged": 0}
    from waymark import settings
    from waymark.base import redact

    contacts = bool(settings.get(conn, "capture.redact_contacts"))
    stamp = clock.now()
    with db.write(conn):
        kinds = dict(wanted)
        for path in sorted(set(known) - set(kinds)):
            rows.drop_file(conn, project.id, path)
            rows.drop_links(conn, project.id, path)
            done["removed"] += 1
        for path, kind in wanted:
            full = os.path.join(root, path)
            stat = stat_key(full)
            if stat is None:  # tracked, but gone from the working tree
                if path in known:
                    rows.drop_file(conn, project.id, path)
                    done["removed"] += 1
                continue
            if path in known and known[path][1] == stat:
                done["unchanged"] += 1
                continue
            try:
                with open(full, "rb") as f:
                    data = f.read(MAX_FILE + 1)
            except OSError:
                continue
            if len(data) > MAX_FILE or b"\0" in data:
                continue
            digest = hashlib.sha256(data).hexdigest()
            if path in known and known[path][0] == digest:
                rows.set_stat(conn, project.id, path, stat)  # touched, not changed
                done["unchanged"] += 1
                continue
            text = data.decode("utf-8", "replace")
            if path in known:
                rows.drop_file(conn, project.id, path)
            sections = _sections(path, kind, text, contacts)
            stored = redact.scrub(path)[0]  # as every stored field: a path is no exception
            if os.path.isabs(path):  # a note of an opted-in folder: its wiki links
                rows.set_links(conn, project.id, stored, _links(path, text, stems))
            if rows.add_sections(conn, project.id, stored, digest, stat, stamp, sections):
                done["changed" if path in known else "added"] += 1
            elif path in known:
                done["removed"] += 1  # nothing left to say in it
    return {**rows.counts(conn, project.id), **done,
            "seconds": round(time.perf_counter() - started, 3)}  # fmt: skip


def _sections(
    path: str, kind: str, text: str, contacts: bool
) -> list[tuple[str, int, int, str, str, str, str | None]]:
    """What a file is indexed as: a note's sections by heading, or a procedure whole, with
    its name and trigger; every text redacted."""
    import hashlib

    from waymark.base import redact

    def clean(value: str, limit: int = MAX_SECTION_CHARS) -> str:
        return redact.scrub_long(value[:limit], contacts=contacts)[0]

    if kind != "note":
        name, trigger, body = procedure(path, kind, text)
        sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return [(clean(name, 200), 1, max(1, len(text.splitlines())), sha, kind, clean(body),
                 clean(trigger, 400) or None)]  # fmt: skip
    return [
        (clean(heading, 400), a, b, hashlib.sha256(body.encode("utf-8")).hexdigest(), "note",
         clean(body), None)
        for heading, a, b, body in split(text)
    ]  # fmt: skip


def state_of(root: str, path: str, file_sha: str, file_stat: str, cache: dict[str, str]) -> str:
    """FRESH, RECHECK (the file changed since it was read) or MISSING."""
    if path in cache:
        return cache[path]
    full = os.path.join(root, path)
    stat = stat_key(full)
    if stat is None:
        said = MISSING
    elif stat == file_stat:
        said = FRESH
    else:
        import hashlib  # OpenSSL costs a hook ~5 ms: only a moved stat pays for it

        try:
            with open(full, "rb") as f:
                said = FRESH if hashlib.sha256(f.read()).hexdigest() == file_sha else RECHECK
        except OSError:
            said = MISSING
    cache[path] = said
    return said


def cite(row: dict[str, Any]) -> str:
    """`docs/adr/0003-queues.md#Decision (lines 12-30)`."""
    return f"{row['path']}#{row['heading']} (lines {row['start_line']}-{row['end_line']})"


_WORD = re.compile(r"[A-Za-z0-9_]{3,}")
_PLAIN = frozenset(("the", "and", "for", "with", "that", "this", "what", "how", "why", "when",
                    "are", "was", "does", "our", "from", "into", "about", "should", "use"))  # fmt: skip


def _terms(text: str) -> list[str]:
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))
    return [w for w in words if w not in _PLAIN][:12]


def search(
    conn: Connection,
    project: Project,
    query: str,
    limit: int = 5,
    kinds: tuple[str, ...] = ("note",),
) -> list[dict[str, Any]]:
    """The entries of `kinds` that best match `query` (any of its words, bm25): {cite, kind,
    path, heading, description, lines, snippet, state}."""
    words = _terms(query)
    if not words:
        return []
    match = " OR ".join(f'"{w}"' for w in words)
    cache: dict[str, str] = {}
    out = []
    for row in rows.search(conn, project.id, match, limit, kinds):
        out.append({
            "cite": cite(row) if row["kind"] == "note" else row["path"], "kind": row["kind"],
            "path": row["path"], "heading": row["heading"], "description": row["description"],
            "lines": [row["start_line"], row["end_line"]], "sha256": row["sha256"],
            "snippet": " ".join(str(row["snippet"]).split())[:300],
            "state": state_of(project.files or "", row["path"], row["file_sha256"],
                              row["file_stat"], cache),
        })  # fmt: skip
        if os.path.isabs(row["path"]):  # a folder's note: the notes its wiki links join
            out[-1]["linked"] = [cite(r) for r in rows.linked(conn, project.id, row["path"], 3)]
    return out


APPLIES_WORDS = 2  # words of a procedure's name and trigger a prompt must share with it


def applies(conn: Connection, project: Project, prompt: str) -> dict[str, Any] | None:
    """The procedure, skill or agent profile whose name or trigger the prompt matches
    (its name said, or APPLIES_WORDS of its trigger's words), the best; None when none does
    or the repository holds none (one index probe)."""
    if not rows.any_of_kinds(conn, project.id, PROCEDURE_KINDS):
        return None
    said = set(_terms(prompt))
    for found in search(conn, project, prompt, 3, PROCEDURE_KINDS):
        name = found["heading"].lower()
        trigger = set(_terms(f"{found['heading']} {found['description'] or ''}"))
        if (
            name in said
            or re.search(rf"\b{re.escape(name)}\b", prompt.lower())
            or (len(trigger & said) >= APPLIES_WORDS)
        ):
            return found
    return None


def listing(conn: Connection, project: Project) -> dict[str, Any]:
    """{files: [{path, sections, state}], sections, configured}."""
    cache: dict[str, str] = {}
    found = []
    kinds = rows.kinds(conn, project.id)
    for path, (sha, stat, n) in sorted(rows.files(conn, project.id).items()):
        found.append({"path": path, "kind": kinds.get(path, "note"), "sections": n,
                      "state": state_of(project.files or "", path, sha, stat, cache)})  # fmt: skip
    return {"files": found, "sections": sum(f["sections"] for f in found),
            "configured": list(configured(project)),
            "folders": rows.folders(conn, project.id)}  # fmt: skip


def show(conn: Connection, project: Project, target: str) -> list[dict[str, Any]]:
    """The sections of `path` (or the one `path#heading` names), each with its state and its
    text read from the file as it is now (the file is the source, never the index)."""
    path, _, heading = target.partition("#")
    found = rows.of_path(conn, project.id, path)
    if heading:
        found = [r for r in found if r["heading"] == heading or r["heading"].endswith(heading)]
    if not found:
        from waymark.errors import NotFound

        raise NotFound(f"no indexed note section {target!r}: `waymark notes list` lists them")
    cache: dict[str, str] = {}
    full = os.path.join(project.files or "", path)
    try:
        with open(full, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        lines = []
    out = []
    for r in found:
        state = state_of(project.files or "", path, r["file_sha256"], r["file_stat"], cache)
        out.append({"cite": cite(r), "heading": r["heading"],
                    "lines": [r["start_line"], r["end_line"]], "state": state,
                    "text": "\n".join(lines[r["start_line"] - 1 : r["end_line"]])})  # fmt: skip
    return out
