"""Claude Code's and Codex's own memory, read and never written.

Claude Code keeps auto memory per project in `<config>/projects/<slug>/memory/`: `MEMORY.md`
(an index, of which the first 200 lines or 25 KB load at start) and topic files with a small
frontmatter (`name`, `description`, `type`). Codex keeps opt-in memories in
`$CODEX_HOME/memories/`: `memory_summary.md` and `MEMORY.md`, sectioned by headings, beside
rollout summaries and skills (evidence, not imported).

`waymark import --from claude-memory|codex-memories` proposes each file or section as a
candidate memory of the project (an inference about what is worth keeping: nothing becomes
active until it is reviewed, or `--approve` says so), with its source recorded (tag,
`source_ref`, a key per file or section). A re-import proposes nothing new unless the
source changed: a changed file proposes a supersession of what was approved from it, and a
waiting proposal of its older text is withdrawn; a file or section that is gone proposes
archiving what came from it. MEMORY.md's index lines (a link to a topic file, there or
deleted) are never memories themselves. Nothing here writes into those folders.
"""

from __future__ import annotations

import os

from waymark.base import jsonlite as json
from waymark.projects.client_files import (
    claude_config_dir,
    claude_memory_dir,
    codex_home,
    codex_memory_dir,
    memory_folder,
)
from waymark.projects.resolve import Project

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

CLAUDE_TYPES = {
    "user": "preference", "feedback": "preference", "project": "fact", "reference": "fact",
}  # fmt: skip
MAX_FILE = 1024 * 1024


def rows(source: str, project: Project) -> list[dict[str, Any]]:
    """The import rows (`waymark import`'s JSON-lines shape) for one native source."""
    if source == "claude-memory":
        folder = claude_memory_dir(project.files or project.root)
        if folder is None:
            from waymark.errors import InvalidArgument

            raise InvalidArgument("a named project has no folder Claude Code keeps memory for")
        return _claude_rows(folder)
    return _codex_rows(codex_memory_dir())


def propose(conn: Any, project: Project, source: str, *, approve: bool = False) -> dict[str, Any]:
    """Queue the source's files and sections as candidates (one transaction); with `approve`
    approve every one of them that waits, as a person reviewing them all would."""
    from waymark.curation import candidates
    from waymark.data.importer import parse_line
    from waymark.memories.draft import content_hash
    from waymark.storage import connection as db
    from waymark.storage.memories import latest_by_key

    report = {
        "read": 0, "proposed": 0, "waiting": 0, "unchanged": 0, "removed": 0,
        "rejected_before": 0, "withdrawn": 0, "approved": 0, "redactions": 0,
        "source_gone": 0, "held": 0,
    }  # fmt: skip
    queued: list[str] = []
    found_rows = rows(source, project)
    with db.write(conn):
        queued += _archive_gone(conn, project, source, found_rows, report)
        for n, row in enumerate(found_rows, 1):
            draft = parse_line(project, json.dumps(row), n)
            assert draft.key is not None
            report["read"] += 1
            report["redactions"] += draft.redactions
            latest = latest_by_key(conn, project.id, draft.key)
            digest = content_hash(draft.content)
            if latest is not None and latest[1] in ("archived", "erased"):
                report["removed"] += 1  # the user retired it: not proposed again
                continue
            if latest is not None and (latest[2], latest[3], latest[4]) == (
                digest,
                draft.title,
                json.dumps(draft.tags),
            ):
                report["unchanged"] += 1
                continue
            fields = {
                "type": draft.type, "content": draft.content, "title": draft.title,
                "tags": draft.tags, "key": draft.key, "source_ref": draft.source_ref,
            }  # fmt: skip
            flagged = f"; reads as an instruction to the agent ({'; '.join(draft.flags)})"
            found, new = candidates.propose(
                conn,
                project.id,
                kind="import",
                reason=f"{source}: {draft.source_ref}" + (flagged if draft.flags else ""),
                fingerprint=f"import:{draft.key}:{digest}:{draft.title}",
                fields=fields,
                action="supersede" if latest is not None else "add",
                sources=[latest[0]] if latest is not None else [],
                evidence=[{"path": draft.source_ref}] if draft.source_ref else [],
            )
            report["withdrawn"] += candidates.withdraw_older(
                conn, project.id, "import", "key", draft.key, keep=found["id"]
            )
            if new:
                report["proposed"] += 1
            elif found["status"] == "rejected":
                report["rejected_before"] += 1
                continue
            else:
                report["waiting"] += 1
            if found["status"] == "pending" and draft.flags:
                report["held"] += 1  # `--approve` never approves what reads as an instruction
            elif found["status"] == "pending":
                queued.append(found["id"])
    for candidate_id in queued if approve else ():
        candidates.approve(conn, project, candidate_id, actor="user", note="--approve")
        report["approved"] += 1
    return report


def _archive_gone(
    conn: Any, project: Project, source: str, found: list[dict[str, Any]], report: dict
) -> list[str]:
    """Inside the caller's transaction: an archive candidate for each active memory this
    source gave whose file or section is no longer there; their ids while they wait."""
    from waymark.curation import candidates
    from waymark.storage.memories import active_keys_with_prefix

    present = {row["key"] for row in found}
    waiting = []
    for memory_id, key, source_ref in active_keys_with_prefix(conn, project.id, source + ":"):
        if key in present:
            continue
        row, _ = candidates.propose(
            conn,
            project.id,
            kind="import",
            action="archive",
            sources=[memory_id],
            reason=f"{source}: its source is gone ({source_ref or key})",
            fingerprint=f"import-gone:{key}:{memory_id}",
        )
        report["source_gone"] += 1
        if row["status"] == "pending":
            waiting.append(str(row["id"]))
    return waiting


def source_folder(source: str, project: Project) -> str | None:
    return memory_folder(source, project.files or project.root)


def _read(path: str) -> str:
    with open(path, "rb") as f:
        return f.read(MAX_FILE).decode("utf-8", "replace")


def _markdown_files(folder: str) -> list[str]:
    if not os.path.isdir(folder):
        return []
    return sorted(
        n
        for n in os.listdir(folder)
        if n.endswith(".md") and os.path.isfile(os.path.join(folder, n))
    )


def _claude_rows(folder: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    names = _markdown_files(folder)
    for name in names:
        path = os.path.join(folder, name)
        text = _read(path)
        if name == "MEMORY.md":
            out += _index_rows(path, text)
            continue
        meta, body = _frontmatter(text)
        if not body.strip():
            continue
        title = meta.get("name") or meta.get("description") or name[:-3].replace("_", " ")
        out.append(
            {
                "key": f"claude-memory:{name}",
                "content": body.strip(),
                "title": title[:200],
                "type": CLAUDE_TYPES.get(meta.get("type", ""), "note"),
                "tags": ["claude-memory"],
                "source": path,
            }
        )
    return out


def _index_rows(path: str, text: str) -> list[dict[str, Any]]:
    """MEMORY.md's own lines: a bullet that links a topic file is an index line, never a
    memory (the file is imported on its own, and a link to a deleted one is nothing); any
    other bullet is a memory of its own, keyed by its text."""
    import hashlib  # OpenSSL: ~3 ms of `waymark status`, which imports this module

    out = []
    for line in text.splitlines():
        item = line.strip()
        if not item.startswith(("- ", "* ")):
            continue
        item = item[2:].strip()
        if not item or _links_a_file(item):
            continue
        digest = hashlib.sha256(" ".join(item.split()).encode()).hexdigest()[:16]
        out.append(
            {
                "key": f"claude-memory:MEMORY.md#{digest}",
                "content": item,
                "type": "note",
                "tags": ["claude-memory"],
                "source": path,
            }
        )
    return out


def _links_a_file(item: str) -> bool:
    """A markdown link to a file of the folder: `[Title](topic.md)`, `(./topic.md)`."""
    start = item.find("](")
    while start >= 0:
        end = item.find(")", start)
        target = item[start + 2 : end if end > 0 else None].strip().split("#")[0]
        if target.endswith(".md") and "://" not in target:
            return True
        start = item.find("](", start + 2)
    return False


def _frontmatter(text: str) -> tuple[dict[str, str], str]:
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 4)
    if end < 0:
        return {}, text
    meta: dict[str, str] = {}
    for line in text[4:end].splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not line.startswith((" ", "\t")):
            meta[key.strip()] = value.strip().strip("'\"")
    return meta, text[end + 4 :].lstrip("-\n")


def _codex_rows(folder: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name in ("memory_summary.md", "MEMORY.md"):
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            continue
        for heading, body in _sections(_read(path)):
            if not body.strip():
                continue
            out.append(
                {
                    "key": f"codex-memories:{name}#{heading or '(top)'}"[:500],
                    "content": body.strip(),
                    "title": (heading or name)[:200],
                    "type": "fact",
                    "tags": ["codex-memories"],
                    "source": path,
                }
            )
    return out


def _sections(text: str) -> list[tuple[str, str]]:
    """(heading, body) for each `#`..`###` section, the text before the first one too."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines():
        stripped = line.lstrip()
        level = len(stripped) - len(stripped.lstrip("#"))
        if 1 <= level <= 3 and stripped[level:].startswith(" "):
            out.append((stripped.lstrip("#").strip(), []))
        else:
            out[-1][1].append(line)
    return [(h, "\n".join(lines)) for h, lines in out]


# --- what doctor and status report -------------------------------------------------------


def native_state(root: str | None) -> dict[str, Any]:
    """Whether each client's own memory is on, and how many files it holds for the project
    at `root`."""
    claude_dir = claude_memory_dir(root)
    claude_on = _claude_auto_memory_on()
    codex_on = _codex_memories_on()
    return {
        "claude-code": {
            "on": claude_on,
            "folder": claude_dir,
            "files": len(_markdown_files(claude_dir)) if claude_dir else 0,
        },
        "codex": {
            "on": codex_on,
            "folder": codex_memory_dir(),
            "files": len(_markdown_files(codex_memory_dir())),
        },
    }


def _claude_auto_memory_on() -> bool:
    if os.environ.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "").lower() in ("1", "true", "yes"):
        return False
    path = os.path.join(claude_config_dir(), "settings.json")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.loads(f.read())
    except (OSError, ValueError):
        return True  # on unless turned off
    return not (isinstance(data, dict) and data.get("autoMemoryEnabled") is False)


def _codex_memories_on() -> bool:
    path = os.path.join(codex_home(), "config.toml")
    if not os.path.isfile(path):
        return False
    from waymark.errors import WaymarkError
    from waymark.projects.locate import load_config

    try:
        data = load_config(path)
    except WaymarkError:
        return False
    features = data.get("features")
    return bool(isinstance(features, dict) and features.get("memories") is True)
