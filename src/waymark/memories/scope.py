"""Scopes and their targets, and the tiers agents read.

A directory, file or symbol target is stored relative to the project root, POSIX-style, `.`
for the root itself. It must exist when the memory is written, stay inside the root once
symlinks are resolved, and never point into `.git`. Deleting the code later deletes nothing.
"""

from __future__ import annotations

import os

from waymark.errors import InvalidScope, TargetNotFound

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable

SCOPES = ("project", "directory", "file", "symbol", "global")
PATH_SCOPES = ("directory", "file", "symbol")

# Where a memory lives, deepest first: the order an agent reads them in. An agent's memory is
# in the agent-workspace tier (any project scope) or agent-global (scope global); everyone's
# are workspace or global. A deeper memory shadows a shallower one with the same type and key.
TIERS = ("agent-workspace", "agent-global", "workspace", "global")
AGENT_MAX = 64
_AGENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:@/-")


def tier(agent: str | None, project_id: str | None) -> str:
    """The tier of a memory with this agent and project (None: global)."""
    if agent:
        return "agent-workspace" if project_id else "agent-global"
    return "workspace" if project_id else "global"


def check_agent(name: str | None) -> str | None:
    """`name` as an agent's name (a Claude Code subagent type, a Codex profile): 1-64
    letters, digits and `_ . : @ / -`, starting with a letter or digit; None stays None."""
    if name is None:
        return None
    if (
        not isinstance(name, str)
        or not 0 < len(name) <= AGENT_MAX
        or not name[0].isalnum()
        or not set(name) <= _AGENT_CHARS
    ):
        raise InvalidScope(
            f"an agent is named by 1-{AGENT_MAX} letters, digits and _ . : @ / - (got {name!r})",
            agent=name if isinstance(name, str) else None,
        )
    return name


def _valid_symbol(symbol: str) -> bool:
    """1-200 characters, no whitespace, not starting with ':' (no `re`: hooks load this)."""
    return 0 < len(symbol) <= 200 and symbol[0] != ":" and not any(c.isspace() for c in symbol)


def scope_of(target: str, root: str | None, base: str | None = None) -> str:
    """The scope a bare `--target` means: `symbol` with `::`, `directory` when the path
    (spelled by the rule every path follows) is a folder of the project, else `file`."""
    if "::" in target:
        return "symbol"
    if root:
        from waymark.projects.pathnames import spelled

        for rel in spelled(target, root, base):
            if os.path.isdir(os.path.join(root, rel)):
                return "directory"
    return "file"


def normalise_target(
    scope: str,
    target: str | None,
    root: str | None,
    base: str | None = None,
    *,
    check_symbol: bool = False,
    mapped: Callable[[str, str], tuple[str, set[str]] | None] | None = None,
) -> str | None:
    """Validate `target` for `scope` and return it as stored (None for project/global).

    A relative target is taken against `base` (the caller's working directory), else the root.
    With `check_symbol` (a target someone just typed), a symbol must be defined in its file;
    a carried-over or imported target is not re-checked: code that moved deletes nothing.
    `mapped(path, sha256)` gives the code map's (snapshot, declarations) of a file whose
    content the map parsed as it is now (`symbols.check_defined`).
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
    kind = "directory" if scope == "directory" else "file"
    rel = existing(target, kind, root, base)
    if symbol is not None and check_symbol:
        from waymark.memories.symbols import check_defined  # only symbol targets pay

        check_defined(os.path.join(root, rel), rel, symbol, mapped)
    return f"{rel}::{symbol}" if symbol is not None else rel


def existing(target: str, kind: str, root: str, base: str | None) -> str:
    """`target` relative to the root: taken against the caller's directory first, then
    against the root (a path copied from the repository's top works from a subdirectory)."""

    def found(rel: str) -> bool:
        full = os.path.join(root, rel)
        return os.path.isdir(full) if kind == "directory" else os.path.isfile(full)

    rel = project_relative(target, root, base)
    if found(rel):
        return rel
    relative = not os.path.isabs(target)
    elsewhere = base is not None and os.path.realpath(base) != os.path.realpath(root)
    if relative and elsewhere:
        try:
            from_root = project_relative(target, root, root)
        except InvalidScope:
            from_root = None
        if from_root is not None and found(from_root):
            return from_root
    tried = os.path.join(base or root, target) if relative else target
    if relative and elsewhere:
        tried += f" or {os.path.join(root, target)} (from the project root)"
    other = "file" if kind == "directory" else "directory"
    for start in ([base] if base and relative else []) + [root]:
        full = os.path.join(start, target) if relative else target
        if (os.path.isfile if other == "file" else os.path.isdir)(full):
            raise InvalidScope(
                f"{target!r} is a {other}, not a {kind}: use --scope {other}",
                target=target,
                scope=other,
            )
    raise TargetNotFound(
        f"{kind} {target!r} does not exist: looked for {tried}", target=target, root=root
    )


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
