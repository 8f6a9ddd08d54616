"""Evidence links of a checkpoint: files hashed at save time, checked for freshness on read.

A link is a project-relative path inside the root (no symlink escape, not `.git`). Waymark
hashes the file itself, at most 2 MiB a file and 8 MiB a request. On read each link is
UNCHANGED, CHANGED, MISSING or UNKNOWN; a read failure or an exhausted budget is UNKNOWN,
never UNCHANGED. Hashes live in immutable revisions, so an old hash is never overwritten.
"""

from __future__ import annotations

import os

from waymark.errors import InvalidArgument, InvalidScope, TargetNotFound
from waymark.memories.scope import existing, project_relative

TYPE_CHECKING = False  # SessionStart checks evidence: typing would cost it ~3 ms
if TYPE_CHECKING:
    from typing import Any

FILE_LIMIT = 2 * 1024 * 1024
REQUEST_LIMIT = 8 * 1024 * 1024
MAX_LINKS = 10
UNCHANGED, CHANGED, MISSING, UNKNOWN = "UNCHANGED", "CHANGED", "MISSING", "UNKNOWN"


class _Budget:
    def __init__(self) -> None:
        self.left = REQUEST_LIMIT

    def take(self, size: int) -> bool:
        if size > FILE_LIMIT or size > self.left:
            return False
        self.left -= size
        return True


def evidence_file(path: str, root: str, base: str | None = None) -> str:
    """The project-relative path of an evidence file, by the rule every path follows (the
    caller's directory first, then the project root); raise when it is outside the project
    (`invalid_scope`), a directory (`invalid_argument`) or missing (`not_found`)."""
    rel = project_relative(path, root, base)
    for candidate in (rel, *([path] if base and not os.path.isabs(path) else [])):
        full = os.path.join(root, candidate)
        if os.path.isdir(full):
            raise InvalidArgument(
                f"evidence {path!r} is a directory; evidence names a file", path=path
            )
    try:
        return existing(path, "file", root, base)
    except TargetNotFound as e:
        raise TargetNotFound(f"evidence {e.message}", path=path) from None


def hash_links(
    root: str | None, items: list[dict[str, str]], keep: tuple[str, ...] = ("note",)
) -> list[dict[str, Any]]:
    """Resolve and hash each {path, and the `keep` keys when set}; raise on a path that is
    not an existing file in the project."""
    if len(items) > MAX_LINKS:
        raise InvalidArgument(f"{len(items)} evidence links; at most {MAX_LINKS} a save")
    if items and root is None:
        raise InvalidArgument("evidence links need a project directory; this project has none")
    budget = _Budget()
    out = []
    for item in items:
        rel = evidence_file(item["path"], root or "")
        link: dict[str, Any] = {"path": rel, **{k: item[k] for k in keep if item.get(k)}}
        digest, size, why = _hash(os.path.join(root or "", rel), budget)
        link.update(sha256=digest, size=size)
        if why:
            link["unhashed"] = why
        out.append(link)
    return out


HASHED = ("sha256", "size", "unhashed")


def hash_paths(
    root: str | None,
    items: list[dict[str, Any]],
    base: str | None = None,
    *,
    checked: list[bool] | None = None,
) -> list[dict[str, Any]]:
    """Memory evidence as written: each {path} made project-relative and given its sha256
    and size (or `unhashed` and why), for the same freshness check as links. A path in
    `checked` (True at its index) is new and must be a file in the project, as a
    checkpoint's link must; any other (evidence carried from an earlier revision, or
    proposed from a session whose files may be gone since) is kept as given when it is not
    such a file, its earlier hash with it."""
    budget = _Budget()
    out = []
    for index, item in enumerate(items):
        path = item.get("path")
        strict = bool(checked and index < len(checked) and checked[index])
        if path and strict:
            if root is None:
                raise InvalidArgument(
                    "evidence paths need a project directory; this project has none"
                )
            rel: str | None = evidence_file(path, root, base)
        elif path and root is not None:
            try:
                rel = project_relative(path, root, base)
            except (InvalidScope, OSError, ValueError):
                rel = None
        else:
            rel = None
        if rel is None or root is None or not os.path.isfile(os.path.join(root, rel)):
            out.append(item)
            continue
        digest, size, why = _hash(os.path.join(root, rel), budget)
        entry: dict[str, Any] = {k: v for k, v in item.items() if k not in HASHED}
        entry.update(path=rel, size=size)
        if digest:
            entry["sha256"] = digest
        else:
            entry["unhashed"] = why
        out.append(entry)
    return out


def _sha256() -> Any:
    """A SHA-256 hasher. hashlib loads OpenSSL (~3 ms in a hook); the builtin module is
    the same algorithm without it."""
    try:
        from _sha2 import sha256  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.10, 3.11
        except ImportError:
            from hashlib import sha256
    return sha256()


def _hash(path: str, budget: _Budget) -> tuple[str | None, int | None, str | None]:
    try:
        size = os.path.getsize(path)
        if size > FILE_LIMIT:
            return None, size, "larger than 2 MiB"
        if not budget.take(size):
            return None, size, "request budget of 8 MiB exhausted"
        h = _sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 16), b""):
                h.update(chunk)
        return h.hexdigest(), size, None
    except OSError as exc:
        return None, None, f"unreadable: {exc.strerror or exc}"


def freshness(root: str | None, links: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    """Each link with its `state` (and the `reason` of an UNKNOWN), and whether any is not
    UNCHANGED (recheck required)."""
    budget = _Budget()
    out = []
    for link in links:
        state, reason = _state(root, link, budget)
        out.append({**link, "state": state, **({"reason": reason} if reason else {})})
    return out, any(item["state"] != UNCHANGED for item in out)


def _state(root: str | None, link: dict[str, Any], budget: _Budget) -> tuple[str, str | None]:
    if root is None:
        return UNKNOWN, "no project directory to read it in"
    if not link.get("sha256"):
        return UNKNOWN, f"not hashed when saved: {link.get('unhashed') or 'no file then'}"
    full = os.path.join(root, link["path"])
    if not os.path.lexists(full):
        return MISSING, None
    try:
        project_relative(link["path"], root)  # a symlink swapped to point outside: unknown
    except (InvalidScope, OSError, ValueError):
        return UNKNOWN, "now resolves outside the project"
    digest, size, why = _hash(full, budget)
    if why or digest is None:
        return UNKNOWN, why or "unreadable"
    return (UNCHANGED if digest == link["sha256"] else CHANGED), None
