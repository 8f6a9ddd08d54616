"""Connecting Waymark to Claude Code and Codex: `waymark install` / `waymark uninstall`.

run.py         plan, refuse-before-write, apply, report
claude.py      Claude Code: settings.json hooks, .claude.json MCP server
codex.py       Codex: config.toml MCP server and notify, hooks.json
commands.py    the hook commands, MCP server and notify program we register
hookconfig.py  Waymark's hooks inside a JSON hooks config (both clients)
jsonedit.py    surgical JSON edits;  tomledit.py  surgical TOML edits
files.py       exact reads, atomic writes, diffs;  manifest.py  what we installed
"""

from __future__ import annotations

from .run import detect, install, uninstall

__all__ = ["detect", "install", "uninstall"]
