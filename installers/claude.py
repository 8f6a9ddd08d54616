"""Claude Code: hooks in the user's settings.json, the MCP server at user scope.

Claude Code keeps user settings in `$CLAUDE_CONFIG_DIR/settings.json` (default
`~/.claude/settings.json`) and user-scope MCP servers under `"mcpServers"` in
`$CLAUDE_CONFIG_DIR/.claude.json` (default `~/.claude.json`).
"""

from __future__ import annotations

import re
import shutil
import subprocess

from . import commands, hookconfig, jsonedit, mcpjson, places
from .files import display

# Where Claude Code keeps its config (`places`, light enough for `waymark status`).
config_dir = places.claude_config_dir
settings_path = places.claude_settings_path
user_config_path = places.claude_user_config_path
found = places.claude_found

# settings.json


TOOL_HOOKS_SINCE = (2, 1, 118)  # the first Claude Code that runs "mcp_tool" hooks
EXEC_HOOKS_SINCE = (2, 1, 139)  # the first that takes a command hook's `args` (no shell)
VERSION_TIMEOUT_S = 20.0


def version() -> tuple[int, ...] | None:
    """The version of the Claude Code on PATH, or None when there is none or it cannot be
    read (an older one might refuse what a newer takes: the caller then writes the older
    form)."""
    exe = shutil.which("claude")
    if not exe:
        return None
    try:
        said = subprocess.run([exe, "--version"], capture_output=True, text=True,
                              timeout=VERSION_TIMEOUT_S, stdin=subprocess.DEVNULL).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError, UnicodeDecodeError):
        return None
    found = re.match(r"\s*(\d+)\.(\d+)\.(\d+)", said or "")
    return tuple(map(int, found.groups())) if found else None


def since(found: tuple[int, ...] | None, first: tuple[int, ...]) -> bool:
    """Whether a Claude Code of version `found` (None: unknown) is `first` or later."""
    return found is not None and found >= first


def add_settings(
    text: str | None, path: str, python: str, windows: bool, prompt_tool: bool = False,
    statusline: bool = False, exec_form: bool = False,
) -> tuple[str, dict]:  # fmt: skip
    """The hooks (in the exec form where this Claude Code takes it); with `statusline`,
    Waymark's status line too where none is set (owned says whether it was added)."""
    groups = commands.hook_groups(python, commands.CLAUDE, windows=windows,
                                  prompt_tool=prompt_tool, exec_form=exec_form)  # fmt: skip
    new, owned = hookconfig.add(text, path, groups)
    added = False
    if statusline and "statusLine" not in hookconfig.document(new, path):
        root = jsonedit.scan(new)
        new = jsonedit.add_member(new, root, "statusLine",
                                  commands.statusline(python, windows=windows))  # fmt: skip
        added = True
    return new, {"hooks": [_describe(e, g) for e, g in groups], **owned, "statusLine": added}


def strip_settings(text: str, path: str, owned: dict) -> str:
    """Without Waymark's hooks, and its status line (never another's)."""
    root = jsonedit.scan(text) if text.strip() else None
    if root is not None and root.kind == "object":
        names = [k for k, _, _ in root.members]
        if "statusLine" in names and commands.is_our_statusline(
            hookconfig.document(text, path).get("statusLine")
        ):
            text = jsonedit.remove_child(text, root, names.index("statusLine"))
    return hookconfig.strip(text, path, owned)


def statusline_taken(text: str | None, path: str) -> bool:
    """Whether the settings set a status line that is not Waymark's."""
    line = hookconfig.document(text, path).get("statusLine")
    return line is not None and not commands.is_our_statusline(line)


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
    from .wiring import handler_line

    return {"event": event, "command": handler_line(group["hooks"][0])}


# .claude.json

CONTAINER = ["mcpServers"]


def add_user_config(text: str | None, path: str, python: str) -> tuple[str, dict]:
    """Register the MCP server as `waymark` (`mcpjson.add`)."""
    return mcpjson.add(text, path, CONTAINER, commands.claude_mcp_server(python))


def strip_user_config(text: str, path: str, owned: dict) -> str:
    return mcpjson.strip(text, path, owned, CONTAINER)


def is_empty(text: str, path: str) -> bool:
    return not text.strip() or jsonedit.parse(text, path) == {}
