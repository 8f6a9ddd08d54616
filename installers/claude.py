"""Claude Code: hooks in the user's settings.json, the MCP server at user scope.

Claude Code keeps user settings in `$CLAUDE_CONFIG_DIR/settings.json` (default
`~/.claude/settings.json`) and user-scope MCP servers under `"mcpServers"` in
`$CLAUDE_CONFIG_DIR/.claude.json` (default `~/.claude.json`).
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from waymark.errors import InstallRefused

from . import commands, hookconfig, jsonedit
from .files import client_dir, display


def config_dir() -> str:
    return client_dir("CLAUDE_CONFIG_DIR", "~/.claude")


def settings_path() -> str:
    return os.path.join(config_dir(), "settings.json")


def user_config_path() -> str:
    if os.environ.get("CLAUDE_CONFIG_DIR", "").strip():
        return os.path.join(config_dir(), ".claude.json")
    return os.path.expanduser("~/.claude.json")


def found() -> bool:
    return bool(
        os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
        or shutil.which("claude")
        or os.path.isdir(config_dir())
        or os.path.isfile(user_config_path())
    )


# settings.json


def add_settings(text: str | None, path: str, python: str, windows: bool) -> tuple[str, dict]:
    groups = commands.hook_groups(python, commands.CLAUDE, windows=windows)
    new, owned = hookconfig.add(text, path, groups)
    return new, {"hooks": [_describe(e, g) for e, g in groups], **owned}


def strip_settings(text: str, path: str, owned: dict) -> str:
    return hookconfig.strip(text, path, owned)


def settings_notes(text: str | None, path: str) -> list[str]:
    doc = hookconfig.document(text, path)
    notes = []
    if doc.get("disableAllHooks") is True:
        notes.append(
            f'{display(path)} sets "disableAllHooks": true, so Claude Code will not run '
            "Waymark's hooks until you remove it"
        )
    plugins = doc.get("enabledPlugins")
    enabled = (
        [k for k, v in plugins.items() if k.startswith("waymark@") and v]
        if isinstance(plugins, dict)
        else []
    )
    notes += [
        commands.plugin_note("Claude Code", name, f"/plugin uninstall {name}") for name in enabled
    ]
    return notes


def _describe(event: str, group: dict) -> dict:
    return {"event": event, "command": group["hooks"][0]["command"]}


# .claude.json


def _user_doc(text: str | None, path: str) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    doc = jsonedit.parse(text, path)
    if not isinstance(doc, dict):
        raise InstallRefused(
            f"{display(path)} is not a JSON object; nothing was changed", path=path
        )
    servers = doc.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise InstallRefused(
            f'{display(path)}: "mcpServers" is not a JSON object; nothing was changed', path=path
        )
    return doc


def add_user_config(text: str | None, path: str, python: str) -> tuple[str, dict]:
    """Register the MCP server as `waymark`; a `waymark` server already there (not ours) is
    replaced and its exact text kept, so uninstall puts it back."""
    _user_doc(text, path)
    text = hookconfig.blank_to_object(text)
    owned: dict[str, Any] = {"mcp_server": commands.MCP_NAME, "created": [], "empties": []}
    text = hookconfig.ensure_container(text, path, ["mcpServers"], {}, owned)
    entry = commands.claude_mcp_server(python)
    servers = jsonedit.path_node(jsonedit.scan(text), ["mcpServers"])
    assert servers is not None
    existing = servers.get(commands.MCP_NAME)
    owned["replaced"] = None
    if existing is not None:
        owned["replaced"] = text[existing.start : existing.end]
        text = jsonedit.replace_value(text, existing, jsonedit.render_value(text, existing, entry))
    else:
        text = jsonedit.add_member(text, servers, commands.MCP_NAME, entry)
    return text, owned


def strip_user_config(text: str, path: str, owned: dict) -> str:
    _user_doc(text, path)
    if owned.get("mcp_server"):
        root = jsonedit.scan(text)
        servers = jsonedit.path_node(root, ["mcpServers"])
        node = servers.get(commands.MCP_NAME) if servers is not None else None
        if servers is not None and node is not None:
            if owned.get("replaced") is not None:
                text = jsonedit.replace_value(text, node, owned["replaced"])
            else:
                index = [k for k, _, _ in servers.members].index(commands.MCP_NAME)
                text = jsonedit.remove_child(text, servers, index)
    return hookconfig.tidy(text, owned)


def is_empty(text: str, path: str) -> bool:
    return not text.strip() or jsonedit.parse(text, path) == {}
