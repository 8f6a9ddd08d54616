"""Paths named in a query, in the form scope targets are stored: root-relative POSIX."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # importing typing costs a hook ~2 ms

if TYPE_CHECKING:
    from collections.abc import Iterable

    from waymark.projects.resolve import Project

# A path-looking token: has a slash, or ends in a file extension (core.py, README.md).
_PATH = r"(?<![\w/.-])(?:\.{0,2}/)?[\w.@+-]+(?:/[\w.@+-]+)*/?|\S+\\\S+"
_EXT = r"\.[A-Za-z][A-Za-z0-9]{0,7}$"
_NUMBER = r"[\d.]+"
MAX_PATHS = 16


def mentioned(text: str) -> list[str]:
    """Path-like tokens of `text`: with a separator, or a file name with an extension."""
    found: list[str] = []
    if not _may_name_a_path(text):  # skip `re` (2.5 ms of a hook process's prompt)
        return found
    import re  # compiled patterns are cached by `re` itself

    for match in re.finditer(_PATH, text[:20_000]):
        token = match.group().rstrip(".,:;)")
        looks_like_path = "/" in token or "\\" in token or re.search(_EXT, token)
        url_or_number = "://" in token or re.fullmatch(_NUMBER, token)
        if looks_like_path and not url_or_number and token not in found:
            found.append(token)
        if len(found) >= MAX_PATHS:
            break
    return found


def _may_name_a_path(text: str) -> bool:
    """False only where `mentioned` would keep nothing: a token it keeps holds a separator or
    ends in an extension (a dot, then an ASCII letter), so a text with neither names no path.
    A sentence's full stop is no extension."""
    if "/" in text or "\\" in text:
        return True
    dot = text.find(".")
    while dot != -1:
        after = text[dot + 1 : dot + 2]
        if after.isascii() and after.isalpha():
            return True
        dot = text.find(".", dot + 1)
    return False


def normalise(project: Project, paths: Iterable[str]) -> list[str]:
    """Root-relative POSIX forms of `paths`; absolute ones outside the project are dropped."""
    roots = [r for r in {project.files, project.root} if r]
    out: list[str] = []
    for raw in paths:
        path = raw.replace("\\", "/").strip()
        if not path:
            continue
        if os.path.isabs(raw) or path.startswith("/"):
            rel = _relative_to_any(raw, roots)
            if rel is None:
                continue
            path = rel
        path = "/".join(p for p in path.split("/") if p not in ("", "."))
        if path.startswith("../") or path == "..":
            continue
        path = path or "."
        if path not in out:
            out.append(path)
    return out[:MAX_PATHS]


def spelled(target: str, root: str, base: str | None = None) -> list[str]:
    """The one rule for a path someone typed (a command's argument, a tool's): the
    root-relative POSIX forms it may mean, in the order to try them. A relative path is
    taken against the caller's directory `base` first, then against the root (a path copied
    from the repository's top works from a subdirectory); an absolute one, and `./x`, are
    made relative to the root. Forms outside the root are left out; [] when none is left."""
    path = target.replace("\\", "/").strip()
    if os.path.isabs(target) or path.startswith("/"):
        found = _relative_to_any(target, [root])
        return [_clean(found)] if found is not None else []
    out = []
    for start in ([base] if base else []) + [root]:
        joined = os.path.join(start, path)
        rel = _relative_to_any(os.path.normpath(joined), [root])
        if rel is not None and _clean(rel) not in out:
            out.append(_clean(rel))
    return out


def _clean(rel: str) -> str:
    return "/".join(p for p in rel.split("/") if p not in ("", ".")) or "."


def _relative_to_any(path: str, roots: list[str]) -> str | None:
    for root in roots:
        for candidate in (path, os.path.realpath(path)):
            try:
                rel = os.path.relpath(candidate, root)
            except ValueError:  # another drive on Windows
                continue
            if not rel.startswith(os.pardir):
                return rel.replace(os.sep, "/")
    return None


def ancestors(path: str) -> list[str]:
    """`a/b/c.py` -> [`a/b`, `a`, `.`]: the directories above, nearest first."""
    parts = path.split("/")
    out = ["/".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]
    return [*out, "."] if path != "." else []


def is_within(path: str, directory: str) -> bool:
    """True when `path` lies strictly below `directory` (both root-relative)."""
    if directory == ".":
        return path != "."
    return path.startswith(directory + "/")
