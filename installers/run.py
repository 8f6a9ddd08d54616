"""`waymark install` and `waymark uninstall`: plan every edit, refuse before writing
anything, then write each file atomically and record it in the manifest.

An install first strips what an earlier install added, then adds the current entries, so
re-running upgrades in place and a second run changes nothing. Before writing, it checks
that undoing the new text gives back exactly the file as it was before Waymark: that is
what lets uninstall return an untouched file byte for byte.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from waymark import home
from waymark.errors import InstallRefused, WaymarkError

from . import claude, codex, commands, files, jsonedit, manifest, mcpjson, opencode, tomledit
from .commands import CLAUDE, CODEX, OPENCODE
from .files import Snapshot, display


@dataclass(frozen=True)
class Kind:
    """One kind of file we edit, and how to take our entries out of it."""

    name: str
    client: str
    what: str
    new_mode: int
    strip: Callable[[str, str, dict], str]
    is_empty: Callable[[str, str], bool]
    notes: Callable[[str | None, str], list[str]] | None = None
    role: str = "hooks"  # which install mode writes it: hooks, or mcp (`--only`)


KINDS = {
    k.name: k
    for k in (
        Kind(
            "claude-settings",
            CLAUDE,
            "hooks",
            0o644,
            claude.strip_settings,
            claude.is_empty,
            claude.settings_notes,
        ),
        Kind(
            "claude-user",
            CLAUDE,
            "MCP server",
            0o600,
            claude.strip_user_config,
            claude.is_empty,
            role="mcp",
        ),
        Kind(
            "codex-config",
            CODEX,
            "MCP server and notify",
            0o600,
            codex.strip_config,
            codex.is_empty,
            codex.config_notes,
            role="mcp",
        ),
        Kind("codex-hooks", CODEX, "hooks", 0o644, codex.strip_hooks, claude.is_empty),
        Kind(
            "opencode-config",
            OPENCODE,
            "MCP server",
            0o600,
            opencode.strip_config,
            mcpjson.is_empty,
            opencode.config_notes,
            role="mcp",
        ),
    )
}


@dataclass
class Change:
    kind: Kind
    path: str
    before: Snapshot
    after: str | None  # None: the file is deleted (or stays missing)
    status: str
    record: dict[str, Any] | None


def detect() -> list[str]:
    """The clients found on this machine (their config folder, variable or binary)."""
    clients = ((CLAUDE, claude.found), (CODEX, codex.found), (OPENCODE, opencode.found))
    return [c for c, found in clients if found()]


MODES = ("both", "hooks", "mcp")


def _targets(
    client: str, python: str, windows: bool, only: str = "both", statusline: bool = False
) -> list[tuple[Kind, str, Callable]]:
    """The files `install` writes for `client`, of every role `only` names. With both roles,
    Claude Code's prompt hook also calls the MCP server where the client can; `statusline`
    adds Claude Code's status line where none is set."""
    both = only == "both"
    found = claude.version() if client == CLAUDE else None  # `claude --version`, once
    tool = both and claude.since(found, claude.TOOL_HOOKS_SINCE)
    exec_form = claude.since(found, claude.EXEC_HOOKS_SINCE)
    return [t for t in _all_targets(client, python, windows, notify=both, prompt_tool=tool,
                                    statusline=statusline, exec_form=exec_form)
            if both or t[0].role == only]  # fmt: skip


def _all_targets(
    client: str, python: str, windows: bool, notify: bool = True, prompt_tool: bool = False,
    statusline: bool = False, exec_form: bool = False,
) -> list[tuple[Kind, str, Callable]]:  # fmt: skip
    if client == OPENCODE:  # no hooks to run: its MCP server only
        return [
            (
                KINDS["opencode-config"],
                opencode.config_path(),
                partial(opencode.add_config, python=python),
            )
        ]
    if client == CLAUDE:
        return [
            (
                KINDS["claude-settings"],
                claude.settings_path(),
                partial(
                    claude.add_settings,
                    python=python,
                    windows=windows,
                    prompt_tool=prompt_tool,
                    statusline=statusline,
                    exec_form=exec_form,
                ),
            ),
            (
                KINDS["claude-user"],
                claude.user_config_path(),
                partial(claude.add_user_config, python=python),
            ),
        ]
    return [
        (
            KINDS["codex-config"],
            codex.config_path(),
            partial(codex.add_config, python=python, notify=notify),
        ),
        (
            KINDS["codex-hooks"],
            codex.hooks_path(),
            partial(codex.add_hooks, python=python, windows=windows),
        ),
    ]


def _undo(kind: Kind, text: str, path: str, owned: dict, record: dict) -> str | None:
    """What uninstall leaves of `text`; None when the file should not exist."""
    out = kind.strip(text, path, owned)
    if (not record["existed"] or record["blank_text"] is not None) and kind.is_empty(out, path):
        return record["blank_text"] if record["existed"] else None
    return out


def _plan_install(kind: Kind, path: str, add: Callable, old: dict | None) -> Change:
    snap = files.read(path)
    owned_before = old["owned"] if old else {}
    origin = old or {
        "existed": snap.exists,
        "blank_text": snap.text if snap.text is not None and not snap.text.strip() else None,
        "sha256_before": snap.sha256,
        "mode": None if snap.mode is None else oct(snap.mode),
        "created_dirs": [],
    }
    base = None if snap.text is None else kind.strip(snap.text, path, owned_before)
    pristine = None if snap.text is None else _undo(kind, snap.text, path, owned_before, origin)
    new, owned = add(base, path)
    if old and snap.text is not None and new != snap.text and _same(kind, new, snap.text, path):
        # Every entry of ours is in the file already, as it would write it: the file stays
        # byte for byte (a strip and re-add would move our block below what others added
        # since, such as Codex's hook trust, and Codex keys trust by position).
        new, owned = snap.text, owned_before
    if _undo(kind, new, path, owned, origin) != pristine:
        raise InstallRefused(
            f"cannot edit {display(path)} in a way `waymark uninstall` can undo exactly "
            "(an unusual layout?); nothing was changed. Please report this",
            path=path,
        )
    dirs = files.missing_dirs(os.path.dirname(path))
    record = {
        "path": path,
        "client": kind.client,
        "kind": kind.name,
        "existed": origin["existed"],
        "blank_text": origin["blank_text"],
        "mode": origin["mode"],
        "sha256_before": origin["sha256_before"],
        "sha256_after": files.sha256_text(new, snap.bom),
        "created_dirs": origin["created_dirs"] + dirs,
        "owned": owned,
    }
    status = "unchanged" if new == snap.text else "created" if snap.text is None else "updated"
    return Change(kind, path, snap, new, status, record)


def _same(kind: Kind, a: str, b: str, path: str) -> bool:
    """Whether two texts of a `kind` file hold the same document (key order aside; list
    order counts)."""
    parse = tomledit.parse if kind.name == "codex-config" else jsonedit.parse
    try:
        return bool(parse(a, path) == parse(b, path))
    except WaymarkError:  # not parseable: not the same
        return False


def install(
    clients: list[str] | None = None,
    *,
    dry_run: bool = False,
    python: str | None = None,
    windows: bool | None = None,
    only: str = "both",
    statusline: bool | None = None,
) -> dict[str, Any]:
    """Connect Waymark to `clients` (default: those found): their hooks and MCP server, or
    only one of them (`only`: hooks, mcp; what an earlier install wrote of the other is
    taken out); `statusline` True adds Claude Code's status line where none is set, False
    takes Waymark's out, None keeps what the last install did. Nothing is written when any
    file is refused; with dry_run nothing is written at all and the diffs are returned."""
    if only not in MODES:
        raise InstallRefused(f"--only takes one of {', '.join(MODES)}, not {only!r}")
    python = python or commands.interpreter()
    windows = os.name == "nt" if windows is None else windows
    chosen = list(dict.fromkeys(clients)) if clients else detect()
    state = manifest.load()
    if statusline is None:  # as the last install left it
        last = manifest.record(state, claude.settings_path()) if CLAUDE in chosen else None
        statusline = bool(last and last["owned"].get("statusLine"))
    changes = [
        _plan_install(kind, path, add, manifest.record(state, path))
        for client in chosen
        for kind, path, add in _targets(client, python, windows, only, statusline)
    ]
    kept = {ch.path for ch in changes}
    here = {path for client in chosen for _, path, _ in _all_targets(client, python, windows)}
    # The other role's files of these clients, in this profile (another CLAUDE_CONFIG_DIR's
    # or CODEX_HOME's entries are not this install's to take out).
    dropped = [_plan_uninstall(r) for r in state["files"]
               if r["client"] in chosen and r["path"] in here and r["path"] not in kept]  # fmt: skip
    notes: list[str] = []
    for ch in changes:
        if ch.kind.notes:
            notes += ch.kind.notes(ch.after, ch.path)
        if (
            statusline
            and ch.kind.name == "claude-settings"
            and claude.statusline_taken(ch.after, ch.path)
        ):
            notes.append(
                f"{display(ch.path)} sets a statusLine already: Waymark's was not added "
                "(remove that one and run `waymark install --statusline` again to use it)"
            )
    if not chosen:
        notes.append(
            "found neither Claude Code nor Codex (no `claude`/`codex` on PATH, no ~/.claude, "
            "~/.codex, CLAUDE_CONFIG_DIR or CODEX_HOME); nothing was changed. "
            "Run `waymark install --client claude-code` (or codex) to install anyway"
        )
    elif not dry_run and any(ch.status != "unchanged" for ch in changes):
        notes.append("restart running Claude Code / Codex sessions to load Waymark")
    if not dry_run:
        _apply_uninstall(dropped, state)
        for client in chosen:
            manifest.set_mode(state, client, only)
        _apply_install(changes, state, python)
    report = _report("install", dry_run, chosen, changes + dropped, notes, python=python)
    report["modes"] = {client: only for client in chosen}
    return report


def _apply_install(changes: list[Change], state: dict, python: str) -> None:
    try:
        for ch in changes:
            assert ch.record is not None and ch.after is not None
            if ch.status != "unchanged":
                files.make_dirs(os.path.dirname(ch.path))
                mode = ch.before.mode if ch.before.mode is not None else ch.kind.new_mode
                files.write_atomic(ch.path, ch.after, bom=ch.before.bom, mode=mode)
            manifest.put(state, ch.record)
    finally:
        manifest.save(state, python)


def _plan_uninstall(record: dict) -> Change:
    kind = KINDS[record["kind"]]
    path = record["path"]
    snap = files.read(path)
    if snap.text is None:
        return Change(kind, path, snap, None, "missing", record)
    after = _undo(kind, snap.text, path, record["owned"], record)
    if after == snap.text:
        status = "unchanged"
    elif after is None and not record["existed"]:
        status = "deleted"
    elif after is not None and files.sha256_text(after, snap.bom) == record["sha256_before"]:
        status = "restored"
    else:
        status = "cleaned"
    return Change(kind, path, snap, after, status, record)


def uninstall(
    clients: list[str] | None = None,
    *,
    dry_run: bool = False,
    delete_data: bool = False,
    delete_backups: bool = False,
    everything: bool = False,
    yes: bool = False,
    all_profiles: bool = False,
) -> dict[str, Any]:
    """Remove exactly what the manifest says Waymark added. A file nobody else touched comes
    back byte for byte (or disappears, with the folders we made, if it did not exist).
    Only the client folders this environment names (CLAUDE_CONFIG_DIR, CODEX_HOME, else the
    defaults) are touched; another profile's entries stay, named in a note, unless
    `all_profiles` (or `everything`: without the environment their hooks could not run).
    `everything` also removes the environment install.sh made and its PATH link."""
    if delete_data and not yes:
        raise InstallRefused(
            f"--delete-data deletes every memory in {home.data_home()}; add --yes to confirm"
        )
    if delete_backups and not delete_data:
        raise InstallRefused("--delete-backups goes with --delete-data --yes")
    state = manifest.load()
    records = [r for r in state["files"] if not clients or r["client"] in clients]
    notes: list[str] = []
    if not (all_profiles or everything):
        here = {
            os.path.abspath(path)
            for client in (CLAUDE, CODEX, OPENCODE)
            for _, path, _ in _targets(client, sys.executable, os.name == "nt")
        }
        other = [r for r in records if os.path.abspath(r["path"]) not in here]
        records = [r for r in records if r not in other]
        if other:
            notes.append(
                "kept Waymark's entries of another profile in "
                + ", ".join(sorted(r["path"] for r in other))
                + ": run uninstall with that CLAUDE_CONFIG_DIR / CODEX_HOME, or add"
                " --all-profiles"
            )
    changes = [_plan_uninstall(r) for r in records]
    if not dry_run:
        for client in {r["client"] for r in records}:
            manifest.set_mode(state, client, None)
        _apply_uninstall(changes, state)
    if any(ch.status == "cleaned" for ch in changes):
        notes.append(
            "files changed since the install keep those changes; only Waymark's entries were removed"
        )
    if delete_data:
        notes += _delete_data(dry_run, delete_backups)
    env_notes, env_gone = _remove_environment(dry_run) if everything else ([], False)  # last
    if not delete_data:
        where = home.data_home()
        notes.append(
            # with the environment goes the `waymark` command: advice that still works
            f"your memories stay in {where}: delete that folder to remove them (or reinstall "
            "and run `waymark uninstall --delete-data --yes`)"
            if env_gone
            else f"your memories stay in {where} (`waymark uninstall --delete-data --yes` "
            "deletes them)"
        )
    notes += env_notes
    return _report("uninstall", dry_run, sorted({r["client"] for r in records}), changes, notes)


INSTALL_RECORD = "waymark-install.json"  # install.sh writes it into the environment


def _points_into(link: str, env: str) -> bool:
    """True for install.sh's symlink into `env`, or install.ps1's waymark.cmd shim."""
    if os.path.islink(link):
        return os.path.realpath(link).startswith(env + os.sep)
    if link.endswith(".cmd") and os.path.isfile(link):
        try:
            with open(link, encoding="ascii", errors="replace") as f:
                return os.path.normcase(env) in os.path.normcase(f.read())
        except OSError:
            return False
    return False


def _remove_environment(dry_run: bool) -> tuple[list[str], bool]:
    """The environment install.sh created for this Waymark, and its `waymark` link: (what
    was done, whether the environment is gone, or would be)."""
    import json
    import sys

    record_path = os.path.join(sys.prefix, INSTALL_RECORD)
    try:
        with open(record_path, encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        return [
            f"this Waymark runs from {sys.prefix}, which install.sh did not create (no "
            f"{INSTALL_RECORD} there): the environment is left alone"
        ], False
    env = os.path.realpath(record.get("environment") or sys.prefix)
    if env != os.path.realpath(sys.prefix):
        return [f"{record_path} names another environment ({env}); nothing was removed"], False
    link = record.get("link")
    notes = []
    verb = "would remove" if dry_run else "removed"
    if link and _points_into(link, env):
        if not dry_run:
            os.unlink(link)
        notes.append(f"{verb} the link {link}")
    if not dry_run:
        shutil.rmtree(env)
    notes.append(f"{verb} Waymark's environment {env}")
    return notes, True


def _apply_uninstall(changes: list[Change], state: dict) -> None:
    try:
        for ch in changes:
            assert ch.record is not None
            if ch.status in ("deleted", "restored", "cleaned"):
                if ch.after is None:
                    files.remove(ch.path)
                else:
                    mode = ch.before.mode if ch.before.mode is not None else ch.kind.new_mode
                    files.write_atomic(ch.path, ch.after, bom=ch.before.bom, mode=mode)
            files.remove_empty_dirs(ch.record["created_dirs"])
            manifest.drop(state, ch.path)
    finally:
        manifest.save(state)


# What Waymark keeps in its data home; anything else there (its own environment, a user's
# files when WAYMARK_HOME points somewhere shared) is left alone.
DATA_PREFIXES = ("waymark.db", "hooks.log", "warm.", "models", "hookruns", manifest.NAME)
# Copies a person may want after the store is gone: deleted only when asked by name.
KEPT_COPIES = ("backups", "exports")


def _delete_data(dry_run: bool, delete_backups: bool = False) -> list[str]:
    folder = home.data_home()
    if not os.path.isdir(folder):
        return [f"no data at {folder}"]
    names = sorted(os.listdir(folder))
    prefixes = DATA_PREFIXES + (KEPT_COPIES if delete_backups else ())
    doomed = [n for n in names if n.startswith(prefixes)]
    if not dry_run:
        for name in doomed:
            target = os.path.join(folder, name)
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target)
            else:
                os.unlink(target)
    kept = [n for n in names if n not in doomed]
    verb = "would delete" if dry_run else "deleted"
    notes = [f"{verb} Waymark's data in {folder}: {', '.join(doomed) or 'nothing'}"]
    copies = [n for n in kept if n in KEPT_COPIES]
    if copies:
        notes.append(
            f"kept {' and '.join(copies)} in {folder} (copies of your memories; add "
            "--delete-backups to delete them too)"
        )
    others = [n for n in kept if n not in KEPT_COPIES]
    if others:
        notes.append(f"kept in {folder}: {', '.join(others)} (not Waymark's data)")
    elif not dry_run:
        os.rmdir(folder)
    return notes


def _report(
    action: str,
    dry_run: bool,
    clients: list[str],
    changes: list[Change],
    notes: list[str],
    python: str | None = None,
) -> dict[str, Any]:
    listed = []
    for ch in changes:
        item: dict[str, Any] = {
            "path": ch.path,
            "client": ch.kind.client,
            "what": ch.kind.what,
            "status": ch.status,
        }
        if dry_run:
            item["diff"] = files.diff(
                ch.path, ch.before.text, ch.after if ch.status != "missing" else None
            )
        listed.append(item)
    report: dict[str, Any] = {
        "action": action,
        "dry_run": dry_run,
        "clients": clients,
        "files": listed,
        "notes": notes,
        "manifest": manifest.path(),
    }
    if python:
        report["python"] = python
    return report
