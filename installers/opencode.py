"""opencode: Waymark's MCP server in the global config, `$XDG_CONFIG_HOME/opencode/
opencode.json` (default `~/.config/opencode/opencode.json`), under `"mcp"` as opencode's docs
describe a local server (`type`, `command` as one list, `enabled`). opencode has no hooks of
the kind Claude Code and Codex run: its sessions get packets through the memory proxy
(`waymark proxy`, with a provider's `baseURL` pointed at it), which this never edits.
"""

from __future__ import annotations

import os
import shutil

from waymark.errors import InstallRefused

from . import commands, mcpjson
from .files import display

CONTAINER = ["mcp"]


def config_dir() -> str:
    base = os.environ.get("XDG_CONFIG_HOME", "").strip() or os.path.expanduser("~/.config")
    return os.path.join(os.path.abspath(base), "opencode")


def config_path() -> str:
    return os.path.join(config_dir(), "opencode.json")


def found() -> bool:
    return bool(shutil.which("opencode") or os.path.isdir(config_dir()))


def add_config(text: str | None, path: str, python: str) -> tuple[str, dict]:
    """Register the MCP server as `waymark`. A config kept as opencode.jsonc (comments) is
    refused: JSON with comments is not edited here."""
    jsonc = os.path.join(os.path.dirname(path), "opencode.jsonc")
    if text is None and os.path.exists(jsonc):
        raise InstallRefused(
            f"{display(jsonc)} holds opencode's config with comments, which Waymark does not "
            f'edit; add "waymark": {commands.opencode_mcp_server(python)} under "mcp" there '
            "by hand (nothing was changed)",
            path=jsonc,
        )
    return mcpjson.add(text, path, CONTAINER, commands.opencode_mcp_server(python))


def strip_config(text: str, path: str, owned: dict) -> str:
    return mcpjson.strip(text, path, owned, CONTAINER)


def config_notes(text: str | None, path: str) -> list[str]:
    return [
        "opencode runs no hooks: for packets and capture in its sessions, run `waymark proxy` "
        "and point a provider's baseURL at it (docs/proxy.md)"
    ]
