"""What asks for confirmation before the agent acts: `[guard]` in `.waymark.toml`.

    [guard]
    ask_paths = ["migrations/", "*.lock", "src/billing/ledger.py"]
    ask_commands = ["alembic downgrade", "git push --force*", "terraform apply*"]

Patterns match as `[capture]`'s do (`projects.ignore`): a bare word is a path segment, a glob
the end of the path, a pattern with `/` is anchored at the project root; a command pattern
with a glob must match the whole command, otherwise the command contains it. The nearest file
with a `[guard]` table wins. Nothing is protected by default: Waymark never blocks unless a
project asks.
"""

from __future__ import annotations

from waymark.base.record import record
from waymark.projects import ignore

Guard = record("Guard", "paths commands source")
NONE = Guard((), (), None)


def guard_for(cwd: str | None, root: str | None) -> Guard:
    """The guard rules at `cwd` in the project at `root`; NONE without a `[guard]` table."""
    found = ignore.nearest_table(cwd, root, "guard")
    if found is None:
        return NONE
    path, table = found
    return Guard(
        ignore.strings(table, "ask_paths", (), path, "guard"),
        ignore.strings(table, "ask_commands", (), path, "guard"),
        path,
    )


def protected_path(rel: str, guard: Guard) -> str | None:
    """The `ask_paths` pattern the project-relative path matches, or None."""
    return ignore.path_match(rel, guard.paths) if guard.paths else None


def protected_command(command: str, guard: Guard) -> str | None:
    """The `ask_commands` pattern the command matches, or None."""
    return ignore.command_match(command, guard.commands) if guard.commands else None
