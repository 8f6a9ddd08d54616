"""Codex: `[mcp_servers.waymark]` and (when the user has none) `notify` in config.toml, and
hooks in hooks.json beside it, all under `$CODEX_HOME` (default `~/.codex`).

Codex rejects unknown keys in its tables, so nothing inside them says "Waymark": a comment
line above each block does, and the manifest remembers the exact text we added.
"""

from __future__ import annotations

import copy
from typing import Any

from waymark.errors import InstallRefused

from . import commands, hookconfig, places, tomledit
from .files import display

# Where Codex keeps its config (`places`, light enough for `waymark status`).
home = places.codex_home
config_path = places.codex_config_path
hooks_path = places.codex_hooks_path
found = places.codex_found

MCP_KEY = ("mcp_servers", commands.MCP_NAME)
MCP_COMMENT = "Waymark's MCP server (added by `waymark install`; `waymark uninstall` removes it)"
NOTIFY_COMMENT = (
    "Waymark's turn notifier (added by `waymark install`; `waymark uninstall` removes it)"
)
TRUST_NOTE = (
    "Codex skips new hooks until you trust them: start `codex`, type /hooks, and trust "
    "Waymark's hooks (one-off runs: `codex exec --dangerously-bypass-hook-trust`)"
)


# hooks.json


def add_hooks(text: str | None, path: str, python: str, windows: bool) -> tuple[str, dict]:
    groups = commands.hook_groups(python, commands.CODEX, windows=windows)
    new, owned = hookconfig.add(text, path, groups)
    described = [{"event": e, "command": g["hooks"][0]["command"]} for e, g in groups]
    return new, {"hooks": described, **owned}


def strip_hooks(text: str, path: str, owned: dict) -> str:
    return hookconfig.strip(text, path, owned)


# config.toml


def add_config(text: str | None, path: str, python: str, notify: bool = True) -> tuple[str, dict]:
    doc = tomledit.parse(text, path)
    text = text or ""
    nl = tomledit.newline(text)
    servers = doc.get("mcp_servers", {})
    if not isinstance(servers, dict):
        raise InstallRefused(f"{display(path)}: mcp_servers is not a table; nothing was changed")
    entry = commands.codex_mcp_server(python)
    block = tomledit.table(MCP_KEY, entry, MCP_COMMENT, nl)
    if commands.MCP_NAME in servers:
        span = tomledit.table_span(text, MCP_KEY)
        if span is None:
            raise InstallRefused(
                f"{display(path)} defines mcp_servers.waymark without a [mcp_servers.waymark] "
                "header; remove it and re-run (nothing was changed)",
                path=path,
            )
        replaced: str | None = text[span[0] : span[1]]
        new = text[: span[0]] + block + text[span[1] :]
        chunk = block
    else:
        replaced = None
        chunk = ("" if not text else nl if text.endswith("\n") else nl + nl) + block
        new = text + chunk
    _verify(new, path, _with(doc, MCP_KEY, entry))
    owned: dict[str, Any] = {"mcp_server": {"text": chunk, "replaced": replaced}, "notify": None}
    if notify and "notify" not in doc:  # with the hooks only: it is how a turn's end is told
        new, owned["notify"] = _add_notify(new, path, python, nl)
    return new, owned


def _add_notify(text: str, path: str, python: str, nl: str) -> tuple[str, dict]:
    program = commands.notify_program(python)
    lines = f"# {NOTIFY_COMMENT}{nl}notify = {tomledit.value(program)}{nl}"
    at = tomledit.top_level_end(text)
    if at is None:
        at, chunk = 0, lines + (nl if text.strip() else "")
    else:
        chunk = lines if text[:at].endswith("\n") else nl + lines
    new = text[:at] + chunk + text[at:]
    _verify(new, path, _with(tomledit.parse(text, path), ("notify",), program))
    return new, {"text": chunk, "at": at}


def strip_config(text: str, path: str, owned: dict) -> str:
    doc = tomledit.parse(text, path)
    notify = owned.get("notify")
    if notify and commands.is_waymark_notify(doc.get("notify")):
        text = _remove_notify(text, path, notify["text"])
    mcp = owned.get("mcp_server")
    if mcp and commands.MCP_NAME in (tomledit.parse(text, path).get("mcp_servers") or {}):
        text = _remove_mcp(text, path, mcp["text"], mcp.get("replaced"))
    return text


def _remove_notify(text: str, path: str, chunk: str) -> str:
    expected = _with(tomledit.parse(text, path), ("notify",), None)
    at = text.find(chunk)
    if at >= 0:
        new = text[:at] + text[at + len(chunk) :]
    else:  # edited since: remove the statement and our comment above it
        span = tomledit.top_level_line(text, "notify")
        if span is None:
            raise InstallRefused(_by_hand(path, "notify"), path=path)
        start = _with_comment(text, span[0], NOTIFY_COMMENT)
        new = text[:start] + text[span[1] :]
    _verify(new, path, expected, by_hand="notify")
    return new


def _remove_mcp(text: str, path: str, chunk: str, replaced: str | None) -> str:
    restored = tomledit.parse(replaced, path)["mcp_servers"]["waymark"] if replaced else None
    expected = _with(tomledit.parse(text, path), MCP_KEY, restored)
    at = text.rfind(chunk)
    if at >= 0:
        new = text[:at] + (replaced or "") + text[at + len(chunk) :]
    else:  # edited since: remove the table (and our comment above it)
        span = tomledit.table_span(text, MCP_KEY)
        if span is None:
            raise InstallRefused(_by_hand(path, "[mcp_servers.waymark]"), path=path)
        start = _with_comment(text, span[0], MCP_COMMENT)
        nl = tomledit.newline(text)
        if not replaced and text[:start].endswith(nl + nl):
            start -= len(nl)  # the blank line we put before the table
        new = text[:start] + (replaced or "") + text[span[1] :]
    _verify(new, path, expected, by_hand="[mcp_servers.waymark]")
    return new


def _with_comment(text: str, start: int, comment: str) -> int:
    """`start`, moved up over our comment line when it sits right above."""
    line_start = text.rfind("\n", 0, max(start - 1, 0)) + 1
    if start > 0 and text[line_start:start].strip() == f"# {comment}":
        return line_start
    return start


def _with(doc: dict, keys: tuple[str, ...], value: Any) -> dict:
    """A copy of `doc` with `keys` set to `value` (None: removed)."""
    out = copy.deepcopy(doc)
    node = out
    for k in keys[:-1]:
        node = node.setdefault(k, {})
    if value is None:
        node.pop(keys[-1], None)
    else:
        node[keys[-1]] = value
    return out


def _pruned(value: Any) -> Any:
    """Empty tables dropped: `[mcp_servers.x]` alone creates `mcp_servers` implicitly."""
    if isinstance(value, dict):
        pruned = {k: _pruned(v) for k, v in value.items()}
        return {k: v for k, v in pruned.items() if v != {}}
    return value


def _verify(new: str, path: str, expected: dict, by_hand: str | None = None) -> None:
    try:
        actual = tomledit.parse(new, path)
    except Exception:
        actual = None
    if actual is None or _pruned(actual) != _pruned(expected):
        if by_hand:
            raise InstallRefused(_by_hand(path, by_hand), path=path)
        raise InstallRefused(
            f"cannot add Waymark to {display(path)} without disturbing its other settings; "
            "nothing was changed (please report this, with the file's layout)",
            path=path,
        )


def _by_hand(path: str, what: str) -> str:
    return f"{display(path)}: Waymark's {what} was edited and cannot be removed safely; remove it by hand"


def config_notes(text: str | None, path: str) -> list[str]:
    doc = tomledit.parse(text, path)
    notes = [TRUST_NOTE]
    if "notify" in doc and not commands.is_waymark_notify(doc["notify"]):
        notes.append(
            f"{display(path)} already sets `notify`; Waymark's turn notifier was not added "
            "(its hooks still record each session)"
        )
    plugins = doc.get("plugins")
    for name, table in plugins.items() if isinstance(plugins, dict) else ():
        if name.startswith("waymark@") and isinstance(table, dict) and table.get("enabled", True):
            notes.append(commands.plugin_note("Codex", name, f"codex plugin remove {name}"))
    features = doc.get("features")
    features = features if isinstance(features, dict) else {}
    if features.get("hooks") is False or features.get("codex_hooks") is False:
        notes.append(
            f"{display(path)} turns hooks off ([features] hooks = false); Codex will not run "
            "Waymark's hooks until you turn them on"
        )
    return notes


def is_empty(text: str, path: str) -> bool:
    return not text.strip()
