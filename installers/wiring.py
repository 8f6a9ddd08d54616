"""Which of Waymark's hooks each client has wired, and when they last ran: what `waymark
status` says of the clients, and what doctor's hook checks read.

Light on purpose (no TOML or JSON editor, no subprocess): `waymark status` imports it.
"""

from __future__ import annotations

import os

from waymark.base import jsonlite as json
from waymark.errors import WaymarkError
from waymark.health import cotenants, fired

from . import manifest, places

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# A hook handler is Waymark's when its command runs one of Waymark's hook modules: today's
# `-c "from waymark.hooks.<module> import main;main()"`, or the `-m waymark.hooks.<module>` of
# installs before it (so upgrading and uninstalling still find those). Read word by word, not
# with a pattern: `re` would cost `waymark status` ~3 ms of its process.
_PREFIX = "waymark.hooks."
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")


def is_waymark_hook(handler: object) -> bool:
    """A command handler running one of Waymark's hook modules, in the shell form or the
    exec form (Claude Code's `args`: the program and its arguments, no shell)."""
    line = handler_line(handler)
    return line is not None and runs_hook_module(line)


def handler_line(handler: object) -> str | None:
    """A command handler's command line: its `command`, or in the exec form the program and
    its `args` quoted as a POSIX shell would take them (`handler_argv` runs it as it is)."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return None
    argv = handler_argv(handler)
    if argv is None:
        return str(handler["command"])
    import shlex

    return shlex.join(argv)


def handler_argv(handler: dict[str, Any]) -> list[str] | None:
    """The exec form's argv (`command` then `args`), or None for the shell form."""
    args = handler.get("args")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return None
    return [str(handler["command"]), *args]


def runs_hook_module(command: str) -> bool:
    """Whether `command` has `-m waymark.hooks.NAME` or `-c [quote]from waymark.hooks.NAME`,
    NAME of letters and underscores, each a word of its own."""
    words = command.split()
    for i, word in enumerate(words):
        if word == "-m":
            module = words[i + 1] if i + 1 < len(words) else ""
        elif word == "-c" and i + 2 < len(words) and words[i + 1] in ("from", '"from', "'from"):
            module = words[i + 2]
        else:
            continue
        name = module[len(_PREFIX) :] if module.startswith(_PREFIX) else ""
        if name and _LETTERS.issuperset(name):
            return True
    return False


def hook_status() -> list[dict[str, Any]]:
    """`waymark status`: each client found here (or whose hooks ran), its hooks' last runs."""
    rows = fired.by_hook()
    ran = {r["client"] for r in rows}
    out = []
    for client, found in (("claude-code", places.claude_found), ("codex", places.codex_found)):
        if found() or client in ran:
            started = session_started(client)
            summary = fired.client_summary(client, wired(client), installed_at(), started, rows)
            summary["mode"] = manifest.mode_of(client)
            if client == "claude-code":
                summary["chain"] = chain()
            out.append(summary)
    return out


def wired(client: str) -> list[str]:
    """The events whose Waymark hook is in `client`'s config."""
    path = places.claude_settings_path() if client == "claude-code" else places.codex_hooks_path()
    return sorted(our_hooks(path))


def installed_at() -> str | None:
    """When `waymark install` last wrote the clients' config (None: never, or a plugin)."""
    from . import manifest

    try:
        return manifest.load().get("updated_at")
    except WaymarkError:
        return None


def session_started(client: str) -> str | None:
    """When `client` last started a session on this machine (UTC ISO 8601), from its own
    session files' folders, read-only: a folder's time is when an entry was last made in it
    (Claude Code: a project folder gets a transcript per session; Codex: the day's folder of
    rollout files). None when the client keeps none here."""
    if client == "claude-code":
        folders = [e.path for e in _dirs(os.path.join(places.claude_config_dir(), "projects"))]
    else:
        day = os.path.join(places.codex_home(), "sessions")
        for _ in range(3):  # year, month, day: the newest of each by name
            found = sorted(e.name for e in _dirs(day))
            if not found:
                return None
            day = os.path.join(day, found[-1])
        folders = [day]
    times = []
    for folder in folders:
        try:
            times.append(os.stat(folder).st_mtime)
        except OSError:
            continue
    if not times:
        return None
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(max(times)))


def chain() -> list[dict[str, Any]]:
    """Claude Code's hook chains per event, Waymark's share, from its own transcripts."""
    folder = os.path.join(places.claude_config_dir(), "projects")
    return cotenants.chains(cotenants.instances(folder), lambda c: is_waymark_hook({"command": c}))


def our_hooks(path: str) -> dict[str, str]:
    return {event: str(handler_line(handler)) for event, handler in our_handlers(path)}


def our_handlers(path: str) -> list[tuple[str, dict[str, Any]]]:
    """(event, handler) of each Waymark hook command in a hooks file, in the file's order."""
    return [(event, h) for event, h in handlers(path) if is_waymark_hook(h)]


def handlers(path: str) -> list[tuple[str, dict[str, Any]]]:
    """(event, handler) of every handler in a hooks file, in the file's order."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.loads(f.read())
    except (OSError, ValueError):
        return []
    out = []
    for event, groups in (doc.get("hooks") or {}).items() if isinstance(doc, dict) else ():
        for group in groups if isinstance(groups, list) else []:
            for handler in group.get("hooks", []) if isinstance(group, dict) else []:
                if isinstance(handler, dict):
                    out.append((event, handler))
    return out


def _dirs(path: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as entries:
            return [e for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
