"""Connecting Waymark to Claude Code and Codex: `waymark install` / `waymark uninstall`.

run.py         plan, refuse-before-write, apply, report
claude.py      Claude Code: settings.json hooks, .claude.json MCP server
codex.py       Codex: config.toml MCP server and notify, hooks.json
places.py      where each client keeps its config, and whether it is here
wiring.py      which hooks each client has wired and when they ran (`waymark status`)
commands.py    the hook commands, MCP server and notify program we register
hookconfig.py  Waymark's hooks inside a JSON hooks config (both clients)
jsonedit.py    surgical JSON edits;  tomledit.py  surgical TOML edits
files.py       exact reads, atomic writes, diffs;  manifest.py  what we installed
checks.py      what doctor asks of each client
"""

from __future__ import annotations

__all__ = ["detect", "install", "uninstall"]


def __getattr__(name: str) -> object:
    """`from waymark.installers import install`: run.py loads on first use, so a module that
    needs only `places` or `wiring` (`waymark status`) never pays for the editors."""
    if name in __all__:
        from . import run

        return getattr(run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
