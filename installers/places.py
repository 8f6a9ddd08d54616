"""Where Claude Code and Codex keep their config, and whether each is on this machine.

Light (os alone): `waymark status` asks it, and the installers, which write those files,
build on it. The folders themselves are the library's (`projects.client_files`), which reads
the clients' own memory there.
"""

from __future__ import annotations

import os

from waymark.projects.client_files import claude_config_dir, codex_home


def claude_settings_path() -> str:
    return os.path.join(claude_config_dir(), "settings.json")


def claude_user_config_path() -> str:
    if os.environ.get("CLAUDE_CONFIG_DIR", "").strip():
        return os.path.join(claude_config_dir(), ".claude.json")
    return os.path.expanduser("~/.claude.json")


def claude_found() -> bool:
    return bool(
        os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
        or os.path.isdir(claude_config_dir())
        or os.path.isfile(claude_user_config_path())
        or _on_path("claude")
    )


def codex_config_path() -> str:
    return os.path.join(codex_home(), "config.toml")


def codex_hooks_path() -> str:
    return os.path.join(codex_home(), "hooks.json")


def codex_found() -> bool:
    return bool(
        os.environ.get("CODEX_HOME", "").strip() or os.path.isdir(codex_home()) or _on_path("codex")
    )


def _on_path(program: str) -> bool:
    """`shutil.which(program) is not None`, without importing shutil (~2 ms) on POSIX."""
    if os.name == "nt":
        import shutil

        return shutil.which(program) is not None
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(folder or os.curdir, program)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return True
    return False
