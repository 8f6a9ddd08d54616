"""What `waymark doctor` asks of each client: are Waymark's hooks and MCP server registered
where `waymark install` put them, with an interpreter that still exists, and (Codex) are the
hooks trusted."""

from __future__ import annotations

import json
import os
import shlex
import sys
from typing import Any

from waymark.health import cotenants, fired
from waymark.health.doctor import FAIL, OK, SKIP, WARN, finding

from . import claude, codex, commands, manifest, opencode
from .wiring import (  # doctor reads what `waymark status` reads
    chain,
    handler_argv,
    handlers,
    installed_at,
    is_waymark_hook,
    our_handlers,
    our_hooks,
    session_started,
)


def client_checks(client: str) -> list[dict[str, str]]:
    if client == "opencode":
        return _opencode_checks()
    mod = claude if client == "claude-code" else codex
    if not _present(client):
        return [finding(f"{client}", SKIP, f"{client} not found on this machine")]
    hooks_file = claude.settings_path() if mod is claude else codex.hooks_path()
    expected = {
        spec.event
        for spec in commands.HOOKS
        if client == "claude-code" or spec.event not in commands.CLAUDE_ONLY
    }
    found_hooks = our_hooks(hooks_file)
    mode = manifest.mode_of(client)
    out = [finding(f"{client} install mode", OK, _MODE_TEXT[mode or "none"])]
    missing = sorted(expected - set(found_hooks))
    if mode == "mcp" and not found_hooks:
        out.append(finding(f"{client} hooks", SKIP, "not installed: install mode mcp (the MCP "
                           f"server only; `waymark install --client {client}` adds them)"))  # fmt: skip
    elif missing:
        out.append(
            finding(
                f"{client} hooks",
                FAIL,
                f"missing in {hooks_file}: {', '.join(missing)}",
                f"waymark install --client {client}",
            )
        )
    else:
        pythons = {_python_of(c) for c in found_hooks.values()}
        broken = sorted(str(p) for p in pythons if not p or not os.access(p, os.X_OK))
        if broken:
            out.append(
                finding(
                    f"{client} hooks",
                    FAIL,
                    f"interpreter gone: {', '.join(broken)}",
                    f"run install.sh again, or `waymark install --client {client}`",
                )
            )
        else:
            out.append(finding(f"{client} hooks", OK, f"{len(found_hooks)} events in {hooks_file}"))
    if found_hooks:
        out.append(
            fired.finding(client, sorted(found_hooks), installed_at(), session_started(client))
        )
    out.append(
        finding(
            f"{client} mcp",
            SKIP,
            "not installed: install mode hooks (the hooks "
            f"only; `waymark install --client {client}` adds it)",
        )  # fmt: skip
        if mode == "hooks"
        else _mcp_check(client)
    )
    if client == "codex":
        out.append(_codex_trust())
    else:
        if found_hooks:
            out += _claude_routes(prompt=mode == "both")
        timeouts = {event: seconds for event, _, seconds in installed_commands(client)}
        out.append(cotenants.finding(chain(), timeouts))
    return out


def _present(client: str) -> bool:
    """A client to check: found (its program, its folder, its variable) and, where only its
    variable says so, its folder exists or Waymark was installed for it. CODEX_HOME set in a
    shell profile with no Codex anywhere is no Codex that Waymark could have broken."""
    import shutil

    mod = claude if client == "claude-code" else codex
    if not mod.found():
        return False
    program = "claude" if client == "claude-code" else "codex"
    folder = claude.config_dir() if client == "claude-code" else codex.home()
    return bool(shutil.which(program) or os.path.isdir(folder) or manifest.mode_of(client)
                or (client == "claude-code" and os.path.isfile(claude.user_config_path())))  # fmt: skip


def _claude_routes(prompt: bool) -> list[dict[str, str]]:
    """How Claude Code reaches Waymark's hooks: with `prompt` (both parts installed) the
    prompt hook (a call into the MCP server, the command beside it the fallback, or the
    command alone); and each command hook's form (exec, no shell, or through the shell).
    `claude --version` read once."""
    found = claude.version()
    ours = [h for _, h in handlers(claude.settings_path())]
    name = "claude-code prompt hook"
    if not prompt:
        said = None
    elif any(commands.is_waymark_tool_hook(h) for h in ours):
        said = finding(name, OK, "answered inside the MCP server (an mcp_tool hook), the "
                       "command hook beside it as the fallback")  # fmt: skip
    elif claude.since(found, claude.TOOL_HOOKS_SINCE):
        said = finding(name, WARN, "a command only, though this Claude Code can call the MCP "
                         "server instead (faster; an install before it could)",
                         "waymark install --client claude-code")  # fmt: skip
    else:
        said = finding(name, SKIP, "a command only: the Claude Code on PATH is older than "
                         f"{'.'.join(map(str, claude.TOOL_HOOKS_SINCE))} or was not found")  # fmt: skip
    out = [said] if said else []
    name = "claude-code hook form"
    command_hooks = [h for h in ours if commands.is_waymark_hook(h)]
    if not command_hooks:
        return out
    if all(handler_argv(h) for h in command_hooks):
        form = finding(name, OK, "exec form: Claude Code starts Waymark's interpreter itself, "
                       "no shell")  # fmt: skip
    elif claude.since(found, claude.EXEC_HOOKS_SINCE):
        form = finding(name, WARN, "through the shell, though this Claude Code starts a hook "
                       "without one (`args`; faster, no quoting)",
                       "waymark install --client claude-code")  # fmt: skip
    else:
        form = finding(name, SKIP, "through the shell: the Claude Code on PATH is older than "
                       f"{'.'.join(map(str, claude.EXEC_HOOKS_SINCE))} or was not found")  # fmt: skip
    return [*out, form]


_MODE_TEXT = {
    "both": "both: hooks and MCP server (`waymark install`)",
    "hooks": "hooks only (`waymark install --only hooks`)",
    "mcp": "MCP server only (`waymark install --only mcp`)",
    "none": "not written by `waymark install` (a plugin, or by hand)",
}


def _opencode_checks() -> list[dict[str, str]]:
    """opencode runs no hooks: its MCP server only (the proxy brings packets), reported only
    where opencode is found."""
    if not opencode.found():
        return []
    return [
        finding(
            "opencode hooks",
            SKIP,
            "opencode runs no hooks: `waymark proxy` brings packets and capture (docs/proxy.md)",
        ),  # fmt: skip
        _mcp_check("opencode"),
    ]


def _our_positions(path: str) -> list[tuple[str, int, int]]:
    """(event, group index, handler index) of each Waymark handler in a hooks file."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return []
    out = []
    for event, groups in (doc.get("hooks") or {}).items():
        for i, group in enumerate(groups if isinstance(groups, list) else []):
            for j, handler in enumerate(group.get("hooks", []) if isinstance(group, dict) else []):
                if is_waymark_hook(handler):
                    out.append((event, i, j))
    return out


def installed_commands(client: str) -> list[tuple[str, str | list[str], float]]:
    """(event, command, timeout in seconds) of each Waymark hook in `client`'s config: the
    shell form's command line, or the exec form's argv (no shell)."""
    path = claude.settings_path() if client == "claude-code" else codex.hooks_path()
    out: list[tuple[str, str | list[str], float]] = []
    for event, handler in our_handlers(path):
        timeout = handler.get("timeout")
        seconds = float(timeout) if isinstance(timeout, int | float) else 60.0
        out.append((event, handler_argv(handler) or str(handler["command"]), seconds))
    return sorted(out, key=lambda row: (row[0], str(row[1])))


def self_test(client: str) -> list[dict[str, str]]:
    """`waymark doctor --self-test`: each installed hook of `client` fired as it would be."""
    from waymark.health import selftest

    mod = claude if client == "claude-code" else codex
    if not mod.found():
        return []
    commands_found = installed_commands(client)
    if not commands_found:
        return [finding(f"{client} self-test", SKIP, "no Waymark hook installed in its config")]
    return [selftest.fire(client, event, command, timeout)
            for event, command, timeout in commands_found]  # fmt: skip


def _snake(event: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in event).lstrip("_")


def _python_of(command: str) -> str | None:
    try:
        return shlex.split(command)[0]
    except (ValueError, IndexError):
        return None


def _mcp_check(client: str) -> dict[str, str]:
    name = f"{client} mcp"
    if client in ("claude-code", "opencode"):
        path = claude.user_config_path() if client == "claude-code" else opencode.config_path()
        key = "mcpServers" if client == "claude-code" else "mcp"
        try:
            with open(path, encoding="utf-8") as f:
                server = (json.load(f).get(key) or {}).get("waymark")
        except (OSError, ValueError, AttributeError):
            server = None
    else:
        path = codex.config_path()
        server = (_toml(path).get("mcp_servers") or {}).get("waymark")
    if not server:
        return finding(
            name, FAIL, f"no `waymark` MCP server in {path}", f"waymark install --client {client}"
        )
    command = server.get("command", "")
    if isinstance(command, list):  # opencode: the program and its arguments in one list
        command = command[0] if command else ""
    if not (os.path.isabs(command) and os.access(command, os.X_OK)):
        return finding(
            name,
            FAIL,
            f"server command {command!r} is not an executable path",
            f"waymark install --client {client}",
        )
    return _handshake(client, server, f"`waymark` server registered in {path}")


# What Codex passes an MCP server of the environment it runs in, besides `env_vars`
# (codex-rs: rmcp-client's default list, Unix).
CODEX_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ")


def _handshake(client: str, server: dict[str, Any], registered: str) -> dict[str, str]:
    """Start the registered server as `client` starts it and speak to it as `client` does
    (`health.handshake`): FAIL with the server's own error at the first step the client
    would see fail. It runs with a throwaway data folder, so the check writes nothing of
    yours."""
    import tempfile

    from waymark.health import handshake

    name = f"{client} mcp"
    command = server.get("command", "")
    if isinstance(command, list):  # opencode
        argv, extra = [str(c) for c in command], server.get("environment") or {}
    else:
        argv, extra = [str(command), *map(str, server.get("args") or [])], server.get("env") or {}
    waits: dict[str, float] = {}
    if client == "codex":
        base = {
            k: os.environ[k] for k in (*CODEX_ENV, *server.get("env_vars", ())) if k in os.environ
        }
        if "startup_timeout_sec" in server:
            waits["connect_s"] = float(server["startup_timeout_sec"])
        elif "startup_timeout_ms" in server:
            waits["connect_s"] = float(server["startup_timeout_ms"]) / 1000
        if "tool_timeout_sec" in server:
            waits["call_s"] = float(server["tool_timeout_sec"])
    else:
        base = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="waymark-doctor-") as scratch:
        env = {**base, **{str(k): str(v) for k, v in extra.items()}, "WAYMARK_HOME": scratch}
        report = handshake.speak(client, argv, env, server.get("cwd") or scratch, **waits)
    if not report.ok:
        return finding(name, FAIL,
                       f"{registered}, but spoken to as {client} speaks to it: {report.summary()}",
                       f"`waymark install --client {client}` again; if it still fails, run "
                       "`waymark mcp` by hand with WAYMARK_LOG_LEVEL=DEBUG to see why")  # fmt: skip
    return finding(name, OK, f"{registered}; answers as {client} asks: {report.summary()}")


def _toml(path: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except (OSError, ValueError):
        return {}


def trust_hash(event: str, group: dict[str, Any], handler: dict[str, Any]) -> str:
    """The hash Codex computes for one hook handler, which its `trusted_hash` must equal:
    SHA-256 over the compact, key-sorted JSON of `{event_name, matcher?, hooks: [handler]}`,
    the handler with Codex's defaults filled in (timeout 600, async false). The command
    text is hashed, so a changed command (an upgrade, a moved environment) needs re-trust."""
    import hashlib

    normal = {"type": "command", "timeout": 600, "async": False, **handler}
    identity: dict[str, Any] = {"event_name": _snake(event), "hooks": [normal]}
    if group.get("matcher") is not None:
        identity["matcher"] = group["matcher"]
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _current_hashes(path: str) -> dict[str, tuple[str, str]]:
    """`<hooks file>:<event>:<group>:<handler>` -> (event, the hash Codex computes now) of
    each Waymark handler in the hooks file."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return {}
    out: dict[str, tuple[str, str]] = {}
    for event, i, j in _our_positions(path):
        group = doc["hooks"][event][i]
        out[f"{path}:{_snake(event)}:{i}:{j}"] = (
            event,
            trust_hash(event, group, group["hooks"][j]),
        )
    return out


def _codex_trust() -> dict[str, str]:
    """Are Waymark's own hooks trusted, for the commands they run now? Codex keys trust by
    the handler's place, `<hooks file>:<event>:<group>:<handler>`, and runs a hook only
    while its `trusted_hash` equals the hash of the handler as it is (`trust_hash`)."""
    state = ((_toml(codex.config_path()).get("hooks") or {}).get("state")) or {}
    path = codex.hooks_path()
    current = _current_hashes(path)
    trusted: set[str] = set()
    stale: set[str] = set()
    for key, (event, digest) in current.items():
        entry = state.get(key)
        if not isinstance(entry, dict) or not entry.get("trusted_hash"):
            continue
        if entry.get("enabled", True) is False:
            continue
        (trusted if entry["trusted_hash"] == digest else stale).add(event)
    events = {event for event, _ in current.values()}
    untrusted = sorted(events - trusted - stale)
    if not current:
        return finding("codex hook trust", SKIP, f"no Waymark hooks in {path}")
    if stale:
        return finding(
            "codex hook trust",
            WARN,
            f"Waymark's {', '.join(sorted(stale))} hook(s) are trusted for an older command: "
            "re-trust (Codex skips them until then)"
            + (f"; not trusted at all: {', '.join(untrusted)}" if untrusted else ""),
            "start `codex`, type /hooks, and trust Waymark's hooks again",
        )
    if untrusted:
        return finding(
            "codex hook trust",
            WARN,
            f"Waymark's {', '.join(untrusted)} hook(s) are not trusted in config.toml: "
            "Codex skips them silently until you trust them",
            "start `codex`, type /hooks, and trust Waymark's hooks",
        )
    return finding(
        "codex hook trust",
        OK,
        f"all {len(trusted)} of Waymark's hooks trusted in config.toml "
        "(re-trust after an upgrade changes the commands)",
    )
