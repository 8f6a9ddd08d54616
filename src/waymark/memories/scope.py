"""Scopes and their targets.

A directory, file or symbol target is stored relative to the project root, POSIX-style, `.`
for the root itself. It must exist when the memory is written, stay inside the root once
symlinks are resolved, and never point into `.git`. Deleting the code later deletes nothing.
"""

from __future__ import annotations

import os

from waymark.errors import InvalidScope, TargetNotFound

SCOPES = ("project", "directory", "file", "symbol", "global")
PATH_SCOPES = ("directory", "file", "symbol")


def _valid_symbol(symbol: str) -> bool:
    """1-200 characters, no whitespace, not starting with ':' (no `re`: hooks load this)."""
    return 0 < len(symbol) <= 200 and symbol[0] != ":" and not any(c.isspace() for c in symbol)


def normalise_target(
    scope: str, target: str | None, root: str | None, base: str | None = None
) -> str | None:
    """Validate `target` for `scope` and return it as stored (None for project/global).

    A relative target is taken against `base` (the caller's working directory), else the root.
    """
    if scope not in SCOPES:
        raise InvalidScope(
            f"unknown scope {scope!r}; valid scopes: {', '.join(SCOPES)}", valid=list(SCOPES)
        )
    if scope not in PATH_SCOPES:
        if target:
            raise InvalidScope(f"scope {scope!r} takes no target (got {target!r})")
        return None
    if not target:
        raise InvalidScope(f"scope {scope!r} needs a target path")
    if root is None:
        raise InvalidScope(
            f"a {scope} memory needs a project directory; this named project has none"
        )
    symbol = None
    if scope == "symbol":
        path, sep, symbol = target.partition("::")
        if not sep or not _valid_symbol(symbol):
            raise InvalidScope(
                f"a symbol target is 'path::Qualified.name' (got {target!r})", target=target
            )
        target = path
    rel = project_relative(target, root, base)
    kind = "directory" if scope == "directory" else "file"
    full = os.path.join(root, rel)
    exists = os.path.isdir(full) if kind == "directory" else os.path.isfile(full)
    if not exists:
        raise TargetNotFound(f"{kind} {target!r} does not exist under {root}", target=target)
    return f"{rel}::{symbol}" if symbol is not None else rel


def project_relative(target: str, root: str, base: str | None = None) -> str:
    """`target` as a POSIX path relative to `root`, refusing escapes and `.git`."""
    if "\x00" in target:
        raise InvalidScope("a target path cannot contain NUL bytes")
    real_root = os.path.realpath(root)
    raw = target if os.path.isabs(target) else os.path.join(base or root, target)
    real = os.path.realpath(raw)
    rel = os.path.relpath(real, real_root)
    parts = rel.replace(os.sep, "/").split("/")
    if rel == os.pardir or parts[0] == os.pardir or os.path.isabs(rel):
        raise InvalidScope(
            f"{target!r} is outside the project root {root} (symlinks are resolved)",
            target=target,
        )
    if ".git" in parts:
        raise InvalidScope(f"{target!r} is inside .git; memories cannot point there")
    return "/".join(parts)
