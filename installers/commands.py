"""What Waymark registers in each client: its hook commands, MCP server and notify program.

Every command runs the interpreter of Waymark's own environment by absolute path
(`sys.executable`, never resolved through symlinks: a venv's python is a link to the base
interpreter, and following it would lose the venv). Hooks run in isolated mode (`-I`).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass

from waymark.base import launch

from .wiring import is_waymark_hook  # noqa: F401 (the commands' own test)

CLAUDE = "claude-code"
CODEX = "codex"
OPENCODE = "opencode"
CLIENTS = (CLAUDE, CODEX)


@dataclass(frozen=True)
class HookSpec:
    event: str
    module: str
    timeout: int
    matcher: str | None = None


# The tools PreToolUse speaks before: Claude Code's edit tools and shell, Codex's shell (its
# hooks name it `Bash`) and apply_patch.
PRE_TOOL_MATCHER = "Edit|Write|MultiEdit|NotebookEdit|Bash|apply_patch"

# Timeouts are seconds. SessionEnd: Claude shares a 1.5 s budget that a per-hook timeout
# raises; Codex clamps it to 3 s.
HOOKS = (
    HookSpec("SessionStart", "session_start", 10, "startup|resume|clear|compact"),
    HookSpec("UserPromptSubmit", "user_prompt_submit", 5),
    # Only edits and shell commands: a read or a search never starts a process.
    HookSpec("PreToolUse", "pre_tool_use", 5, PRE_TOOL_MATCHER),
    HookSpec("SubagentStart", "subagent_start", 5),
    HookSpec("PostToolUse", "post_tool_use", 5),
    HookSpec("PostToolUseFailure", "post_tool_use_failure", 5),
    HookSpec("PreCompact", "pre_compact", 10),
    HookSpec("PostCompact", "post_compact", 5),
    HookSpec("Stop", "stop", 10),
    # A subagent that worked on a task its lead gave it: its lead hears what it saved.
    HookSpec("SubagentStop", "subagent_stop", 5),
    HookSpec("SessionEnd", "session_end", 2),
)
CLAUDE_ONLY = {"PostToolUseFailure"}

NOTIFY_MODULE = "waymark.hooks.notify"
MCP_NAME = "waymark"
MCP_ARGS = ["-m", "waymark", "mcp"]
# Codex starts MCP servers with a small default environment; these must reach ours.
MCP_ENV_VARS = [
    "WAYMARK_HOME",
    "WAYMARK_EMBED_MODEL_DIR",
    "WAYMARK_LOG_LEVEL",
    "WAYMARK_WARM_TRANSPORT",
    "XDG_DATA_HOME",
    "LOCALAPPDATA",
]


def interpreter() -> str:
    """The running Waymark's python, absolute, symlinks kept."""
    exe = sys.executable
    if not exe or not os.path.isfile(exe):
        from waymark.errors import InstallRefused

        raise InstallRefused(
            "cannot tell which Python runs Waymark (sys.executable is empty); "
            "run `waymark install` from Waymark's own environment"
        )
    return os.path.abspath(exe)


def posix_quote(path: str) -> str:
    """A double-quoted word for sh/bash (Claude Code runs hooks in bash, Git Bash on Windows)."""
    return '"' + re.sub(r'(["\\$`])', r"\\\1", path) + '"'


def cmd_word(path: str) -> str:
    """The program word for cmd.exe (Codex's `commandWindows`). Quoted only when it must be:
    Codex passes the line to `cmd /C` in a way that mangles a quoted program token
    (openai/codex#38168), and an unquoted path without spaces always works."""
    if re.search(r'[\s&()^|<>%!"]', path):
        return '"' + path + '"'
    return path


def hook_command(python: str, module: str, client: str, *, windows: bool = False) -> str:
    """The shell command (bash) a client runs for one hook event."""
    exe = python.replace("\\", "/") if windows else python
    return f'{posix_quote(exe)} -I -c "{launch.program(module)}" {client}'


STATUSLINE_MODULE = "statusline"


def statusline(python: str, *, windows: bool = False) -> dict:
    """Claude Code's `statusLine` entry running `hooks/statusline.py` (`install --statusline`)."""
    exe = python.replace("\\", "/") if windows else python
    return {"type": "command", "padding": 0,
            "command": f'{posix_quote(exe)} -I -c "{launch.program(STATUSLINE_MODULE)}"'}  # fmt: skip


def is_our_statusline(entry: object) -> bool:
    command = entry.get("command") if isinstance(entry, dict) else None
    return isinstance(command, str) and f"waymark.hooks.{STATUSLINE_MODULE} " in command + " "


def hook_args(module: str, client: str) -> list[str]:
    """The exec form's arguments after the interpreter: the same process `hook_command`
    starts, without the shell."""
    return ["-I", "-c", launch.program(module), client]


def hook_command_windows(python: str, module: str, client: str) -> str:
    return f'{cmd_word(python)} -I -c "{launch.program(module)}" {client}'


# Claude Code (2.1.118 and later) also runs a hook as a call to a connected MCP server: the
# prompt hook then costs no process (bench/mcp_tool_hook.py). The server's `hook` tool
# answers; the command beside it is the fallback when the server is not connected, and the
# first of the two to reach Waymark answers (`markers.prompt_key`).
TOOL_HOOK = "hook"
TOOL_HOOK_INPUT = {
    "event": "UserPromptSubmit",
    "prompt": "${prompt}",
    "prompt_id": "${prompt_id}",
    "session_id": "${session_id}",
    "cwd": "${cwd}",
    "agent_id": "${agent_id}",  # empty for the main agent's prompts
}


def tool_hook(timeout: int) -> dict:
    return {"type": "mcp_tool", "server": MCP_NAME, "tool": TOOL_HOOK,
            "input": dict(TOOL_HOOK_INPUT), "timeout": timeout}  # fmt: skip


def is_waymark_tool_hook(handler: object) -> bool:
    """An `mcp_tool` handler calling Waymark's server's `hook` tool."""
    return (
        isinstance(handler, dict)
        and handler.get("type") == "mcp_tool"
        and handler.get("server") == MCP_NAME
        and handler.get("tool") == TOOL_HOOK
    )


def is_ours(handler: object) -> bool:
    return is_waymark_hook(handler) or is_waymark_tool_hook(handler)


def hook_groups(
    python: str, client: str, *, windows: bool, prompt_tool: bool = False,
    exec_form: bool = False,
) -> list[tuple[str, dict]]:  # fmt: skip
    """(event, matcher group) pairs in the clients' shared hooks format; with `prompt_tool`
    (Claude Code with Waymark's MCP server), the prompt hook's group also calls the server;
    with `exec_form` (a Claude Code that takes `args`), each command starts the interpreter
    itself, no shell in between."""
    groups = []
    for spec in HOOKS:
        if client == CODEX and spec.event in CLAUDE_ONLY:
            continue
        handler: dict[str, object] = {"type": "command"}
        if exec_form and client == CLAUDE:
            handler["command"] = python
            handler["args"] = hook_args(spec.module, client)
        else:
            handler["command"] = hook_command(python, spec.module, client, windows=windows)
        if client == CODEX and windows:
            handler["commandWindows"] = hook_command_windows(python, spec.module, client)
        handler["timeout"] = spec.timeout
        group: dict[str, object] = {"matcher": spec.matcher} if spec.matcher else {}
        handlers: list[dict] = [handler]
        if prompt_tool and client == CLAUDE and spec.event == "UserPromptSubmit":
            handlers.append(tool_hook(spec.timeout))
        group["hooks"] = handlers
        groups.append((spec.event, group))
    return groups


def claude_mcp_server(python: str) -> dict:
    return {"type": "stdio", "command": python, "args": list(MCP_ARGS), "env": {}}


def opencode_mcp_server(python: str) -> dict:
    return {"type": "local", "command": [python, *MCP_ARGS], "enabled": True}


def codex_mcp_server(python: str) -> dict:
    return {"command": python, "args": list(MCP_ARGS), "env_vars": list(MCP_ENV_VARS)}


def notify_program(python: str) -> list[str]:
    return [python, "-I", "-m", NOTIFY_MODULE]


def is_waymark_notify(value: object) -> bool:
    return isinstance(value, list) and NOTIFY_MODULE in value


def plugin_note(client: str, plugin: str, remove: str) -> str:
    """Said when the Waymark plugin is enabled too: both routes would register hooks."""
    return (
        f"the Waymark plugin ({plugin}) is also enabled in {client}, so its hooks and these "
        "are both registered. Waymark runs each event once, but keep one route: "
        f"`{remove}`, or `waymark uninstall --client {'claude-code' if client == 'Claude Code' else 'codex'}`"
    )
