"""What capture never records: `[capture]` in `.waymark.toml`, checked before any write.

    [capture]
    ignore_paths = ["node_modules", "*.min.js", "generated/"]
    ignore_commands = ["npm run dev", "*secret*"]

The file is searched from the working directory up to the project root; the first one with a
`[capture]` table wins. A list given there replaces the default for that key. A path pattern
without `/` or a glob character is a path segment and matches any component
(`node_modules`); one with a glob matches the end of the project-relative path (`*.min.js`);
one with `/` matches from the root (`generated/` is everything under it). A command pattern
with a glob character must match the whole command; otherwise the command contains it.
An ignored edit or command never enters storage.
"""

from __future__ import annotations

from waymark.base.record import record

DEFAULT_IGNORE_PATHS = (
    ".git", "node_modules", "dist", "build", ".venv", "venv", ".virtualenvs", "__pycache__",
)  # fmt: skip
DEFAULT_IGNORE_COMMANDS: tuple[str, ...] = ()
_GLOB = frozenset("*?[")

Rules = record("Rules", "paths commands source")
DEFAULTS = Rules(DEFAULT_IGNORE_PATHS, DEFAULT_IGNORE_COMMANDS, None)


def rules_for(cwd: str | None, root: str | None) -> Rules:
    """The capture rules that apply at `cwd` inside the project at `root` (no `re`, and
    `tomllib` only where a `.waymark.toml` exists)."""
    found = nearest_table(cwd, root, "capture")
    if found is None:
        return DEFAULTS
    path, table = found
    return Rules(
        strings(table, "ignore_paths", DEFAULT_IGNORE_PATHS, path, "capture"),
        strings(table, "ignore_commands", DEFAULT_IGNORE_COMMANDS, path, "capture"),
        path,
    )


def nearest_table(cwd: str | None, root: str | None, name: str) -> tuple[str, dict] | None:
    """(file, table) of the first `.waymark.toml` holding a `[name]` table, searched from
    `cwd` up to the project root; None when there is none (or no root)."""
    from waymark.projects.locate import config_files

    for path in config_files(cwd, root):
        table = _table(path, name)
        if table is not None:
            return path, table
    return None


def _table(path: str, name: str) -> dict | None:
    from waymark.errors import ProjectError
    from waymark.projects.locate import load_config

    try:
        data = load_config(path)
    except ProjectError:
        return None  # the project's name check reports a bad file, naming its line
    table = data.get(name)
    return table if isinstance(table, dict) else None


def strings(
    table: dict, key: str, default: tuple[str, ...], path: str, name: str
) -> tuple[str, ...]:
    """`table[key]` as a tuple of non-empty strings; `default` when absent."""
    value = table.get(key)
    if value is None:
        return default
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        from waymark.errors import InvalidArgument

        raise InvalidArgument(f"{path}: [{name}] {key} must be a list of non-empty strings")
    return tuple(value)


def path_ignored(rel: str, rules: Rules) -> bool:
    """True when the project-relative POSIX path `rel` matches an ignore_paths pattern."""
    return path_match(rel, rules.paths) is not None


def command_ignored(command: str, rules: Rules) -> bool:
    """True when `command` matches an ignore_commands pattern."""
    return command_match(command, rules.commands) is not None


def path_match(rel: str, patterns: tuple[str, ...]) -> str | None:
    """The first of `patterns` the project-relative POSIX path `rel` matches, or None."""
    parts = rel.split("/")
    for pattern in patterns:
        if "/" not in pattern and not _GLOB & set(pattern):
            if pattern in parts:
                return pattern
            continue
        from fnmatch import fnmatchcase  # only a pattern with a glob or a slash pays for `re`

        if "/" in pattern:  # anchored at the root, one glob per path segment
            pats = pattern.rstrip("/").split("/")
            whole = len(parts) == len(pats) or (pattern.endswith("/") and len(parts) > len(pats))
            if whole and all(
                fnmatchcase(part, pat) for part, pat in zip(parts, pats, strict=False)
            ):
                return pattern
        elif fnmatchcase(parts[-1], pattern):  # a glob suffix: the end of the path
            return pattern
    return None


def command_match(command: str, patterns: tuple[str, ...]) -> str | None:
    """The first of `patterns` `command` matches (a glob the whole command, else a part of
    it), or None."""
    for pattern in patterns:
        if _GLOB & set(pattern):
            from fnmatch import fnmatchcase

            if fnmatchcase(command, pattern):
                return pattern
        elif pattern in command:
            return pattern
    return None
