"""`waymark install` / `uninstall` into a temporary HOME: the files are as the clients expect,
re-installing changes nothing, and uninstalling gives back every file byte for byte."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys

import pytest
from waymark.installers import commands, install, jsonedit, manifest, tomledit, uninstall

from waymark.cli import main
from waymark.storage import connection as db

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

PY = "/opt/way mark/env/bin/python"
PY_NEW = "/opt/waymark-2/env/bin/python"
CLAUDE_EVENTS = {
    "SessionStart": ("session_start", 10),
    "UserPromptSubmit": ("user_prompt_submit", 5),
    "PostToolUse": ("post_tool_use", 5),
    "PostToolUseFailure": ("post_tool_use_failure", 5),
    "PreCompact": ("pre_compact", 10),
    "Stop": ("stop", 10),
    "SessionEnd": ("session_end", 2),
}
CODEX_EVENTS = {k: v for k, v in CLAUDE_EVENTS.items() if k != "PostToolUseFailure"}


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh HOME with no client configured; nothing from the real machine leaks in."""
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    return h


def tree(root) -> dict:
    """Every file under root: bytes and mode (symlinks as their target)."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            out[rel] = ("link", os.readlink(p))
        elif p.is_dir():
            out[rel] = ("dir", stat.S_IMODE(p.stat().st_mode))
        else:
            out[rel] = ("file", p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
    return out


def write(path, text: str | bytes, mode: int = 0o644):
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8") if isinstance(text, str) else text
    path.write_bytes(data)
    path.chmod(mode)


def hook_commands(doc: dict, event: str) -> list[str]:
    return [
        h["command"]
        for group in doc.get("hooks", {}).get(event, [])
        for h in group["hooks"]
        if commands.is_waymark_hook(h)
    ]


def check_claude(home, py=PY):
    settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8-sig"))
    for event, (module, timeout) in CLAUDE_EVENTS.items():
        groups = [
            g
            for g in settings["hooks"][event]
            if any(commands.is_waymark_hook(h) for h in g["hooks"])
        ]
        assert len(groups) == 1, event
        (handler,) = groups[0]["hooks"]
        assert handler == {
            "type": "command",
            "command": f'"{py}" -I -c "from waymark.hooks.{module} import main;main()" claude-code',
            "timeout": timeout,
        }
        matcher = "startup|resume|clear|compact" if event == "SessionStart" else None
        assert groups[0].get("matcher") == matcher
    user = json.loads((home / ".claude.json").read_text(encoding="utf-8-sig"))
    assert user["mcpServers"]["waymark"] == {
        "type": "stdio",
        "command": py,
        "args": ["-m", "waymark", "mcp"],
        "env": {},
    }
    return settings, user


def check_codex(home, py=PY):
    config = tomllib.loads((home / ".codex" / "config.toml").read_text(encoding="utf-8-sig"))
    server = config["mcp_servers"]["waymark"]
    assert server["command"] == py and server["args"] == ["-m", "waymark", "mcp"]
    assert {"WAYMARK_HOME", "WAYMARK_EMBED_MODEL_DIR", "XDG_DATA_HOME"} <= set(server["env_vars"])
    hooks = json.loads((home / ".codex" / "hooks.json").read_text(encoding="utf-8-sig"))
    assert set(hooks) == {"hooks"}
    for event, (module, _) in CODEX_EVENTS.items():
        assert hook_commands(hooks, event) == [
            f'"{py}" -I -c "from waymark.hooks.{module} import main;main()" codex'
        ]
    assert "PostToolUseFailure" not in hooks["hooks"]
    return config, hooks


# Config files as users and the clients themselves leave them.
CLAUDE_SETTINGS = {
    "none": None,
    "json.stringify": json.dumps(
        {
            "model": "opus",
            "permissions": {"allow": ["Bash(npm test)"]},
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]},
        },
        indent=2,
    ),
    "hand-written": '{\n    "hooks": {\n        "SessionStart": [\n'
    '            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}\n'
    '        ]\n    },\n    "env": {"A": "1"}\n}\n',
    "tabs-crlf-bom": '\ufeff{\r\n\t"hooks": {\r\n\t}\r\n}',
    "empty-object": "{}\n",
    "empty-lines": "{\n}\n",
    "blank": "\n",
    "one-line": '{"model":"sonnet","hooks":{"Stop":[]}}',
}
CLAUDE_USER = {
    "none": None,
    "state": json.dumps(
        {
            "numStartups": 12,
            "projects": {"/w/p": {"allowedTools": []}},
            "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp", "args": [], "env": {}}},
            "oauthAccount": {"emailAddress": "me@example.com"},
        },
        indent=2,
    ),
    "own-waymark": '{\n  "mcpServers": {\n    "waymark": {"command": "waymark", "args": ["mcp"]}\n  }\n}\n',
}
CODEX_CONFIG = {
    "none": None,
    "typical": """# my codex config
model = "gpt-5"
approval_policy = "never"   # trailing comment
instructions = \"\"\"
[not a table]
\"\"\"

# servers
[mcp_servers.other]
command = "npx"
args = [
  "-y",
  "x",
]

[projects."/home/me/p"]
trust_level = "trusted"
""",
    "tables-only-no-newline": '[mcp_servers]\nother = { command = "x" }\n\n[features]\nhooks = true',
    "crlf": 'model = "o3"\r\n\r\n[tui]\r\nnotifications = true\r\n',
    "dotted": 'model = "o3"\nmcp_servers.other.command = "x"\n',
    "empty": "",
    "user-notify": 'notify = ["terminal-notifier", "-title", "Codex"]\nmodel = "o3"\n',
    "own-waymark": '[mcp_servers.waymark]\ncommand = "waymark"\nargs = ["mcp"]\n\n'
    '[mcp_servers.waymark.env]\nWAYMARK_HOME = "/data"\n\n[tui]\nnotifications = true\n',
}
CODEX_HOOKS = {
    "none": None,
    "user-hooks": json.dumps(
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "afplay ding.aiff"}]}]}},
        indent=2,
    )
    + "\n",
}


def _seed(home, files: dict) -> None:
    for rel, text in files.items():
        if text is not None:
            write(home / rel, text, 0o640 if rel.endswith("settings.json") else 0o600)


@pytest.mark.parametrize("settings", CLAUDE_SETTINGS)
@pytest.mark.parametrize("user", CLAUDE_USER)
def test_claude_install_is_idempotent_and_uninstall_restores_every_byte(home, settings, user):
    _seed(
        home,
        {".claude/settings.json": CLAUDE_SETTINGS[settings], ".claude.json": CLAUDE_USER[user]},
    )
    (home / ".claude").mkdir(exist_ok=True)
    before = tree(home)

    report = install(["claude-code"], python=PY)
    assert [f["status"] for f in report["files"]] != ["unchanged", "unchanged"]
    check_claude(home)
    after = tree(home)
    assert install(["claude-code"], python=PY)["files"][0]["status"] == "unchanged"
    assert tree(home) == after  # re-install changes nothing

    result = uninstall()
    assert {f["status"] for f in result["files"]} <= {"restored", "deleted"}
    assert tree(home) == before
    assert not os.path.exists(manifest.path())


@pytest.mark.parametrize("config", CODEX_CONFIG)
@pytest.mark.parametrize("hooks", CODEX_HOOKS)
def test_codex_install_is_idempotent_and_uninstall_restores_every_byte(home, config, hooks):
    _seed(
        home, {".codex/config.toml": CODEX_CONFIG[config], ".codex/hooks.json": CODEX_HOOKS[hooks]}
    )
    (home / ".codex").mkdir(exist_ok=True)
    before = tree(home)
    original = tomllib.loads(CODEX_CONFIG[config] or "")

    report = install(["codex"], python=PY)
    parsed, _ = check_codex(home)
    # Nothing of the user's changed meaning; notify only where the user had none.
    expected = dict(original)
    if "notify" not in original:
        expected["notify"] = [PY, "-I", "-m", "waymark.hooks.notify"]
    expected.setdefault("mcp_servers", {})
    expected["mcp_servers"] = {
        **expected["mcp_servers"],
        "waymark": parsed["mcp_servers"]["waymark"],
    }
    assert parsed == expected
    assert any("/hooks" in n for n in report["notes"])  # the trust step is spelled out
    after = tree(home)
    install(["codex"], python=PY)
    assert tree(home) == after

    uninstall()
    assert tree(home) == before


def test_fresh_files_get_private_modes_and_folders_we_made_go_away(home):
    install(["claude-code", "codex"], python=PY)
    mode = lambda p: stat.S_IMODE(p.stat().st_mode)  # noqa: E731
    assert mode(home / ".claude.json") == 0o600 and mode(home / ".codex" / "config.toml") == 0o600
    assert mode(home / ".claude" / "settings.json") == 0o644
    assert mode(home / ".codex" / "hooks.json") == 0o644
    uninstall()
    assert tree(home) == {}


def test_claude_config_dir_and_codex_home_are_honoured(home, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "cx"))
    report = install(python=PY)  # both found through their variables
    assert report["clients"] == ["claude-code", "codex"]
    assert {f["path"] for f in report["files"]} == {
        str(tmp_path / "cc" / "settings.json"),
        str(tmp_path / "cc" / ".claude.json"),
        str(tmp_path / "cx" / "config.toml"),
        str(tmp_path / "cx" / "hooks.json"),
    }
    assert tree(home) == {}
    uninstall()
    assert not (tmp_path / "cc").exists() and not (tmp_path / "cx").exists()


def test_only_clients_found_on_the_machine_are_installed(home, tmp_path, capsys):
    assert main(["install"]) == 0
    out = capsys.readouterr().out
    assert "found neither Claude Code nor Codex" in out and tree(home) == {}
    claude_bin = tmp_path / "bin" / "claude"
    write(claude_bin, "#!/bin/sh\n", 0o755)
    assert install(python=PY)["clients"] == ["claude-code"]
    (home / ".codex").mkdir()
    assert install(python=PY)["clients"] == ["claude-code", "codex"]


def test_malformed_json_is_refused_with_file_and_line_and_nothing_changes(home, capsys):
    _seed(home, {".claude/settings.json": '{\n  "model": "opus",\n}\n'})
    (home / ".codex").mkdir()
    before = tree(home)
    code = main(["install", "--json"])
    err = json.loads(capsys.readouterr().out)
    assert code == 1 and err["code"] == "config_malformed"
    assert "settings.json line 3" in err["message"] and err["details"]["line"] == 3
    assert tree(home) == before  # the Codex files were not written either
    assert not os.path.exists(manifest.path())


def test_malformed_toml_is_refused_with_file_and_line_and_nothing_changes(home, capsys):
    _seed(home, {".codex/config.toml": 'model = "o3"\napproval_policy = \n'})
    before = tree(home)
    assert main(["install", "--client", "all"]) == 1
    err = capsys.readouterr().err
    assert "config.toml line 2" in err and "[config_malformed]" in err
    assert tree(home) == before


def test_dry_run_prints_the_diff_and_changes_nothing(home, capsys):
    _seed(home, {".codex/config.toml": 'model = "o3"\n'})
    before = tree(home)
    assert main(["install", "--client", "codex", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert '+notify = ["' in out and "+[mcp_servers.waymark]" in out
    assert "dry run: nothing was written" in out
    assert tree(home) == before and not os.path.exists(manifest.path())
    install(["codex"], python=PY)
    after = tree(home)
    assert main(["uninstall", "--dry-run", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert any(
        line.startswith("-[mcp_servers.waymark]")
        for f in report["files"]
        for line in f["diff"].splitlines()
    )
    assert tree(home) == after


def test_uninstall_keeps_what_others_changed_since(home):
    settings = home / ".claude" / "settings.json"
    config = home / ".codex" / "config.toml"
    _seed(
        home, {".claude/settings.json": '{"model": "opus"}', ".codex/config.toml": 'model = "o3"\n'}
    )
    install(["claude-code", "codex"], python=PY)
    # Claude rewrites the file its own way and the user adds a hook; Codex records trust.
    doc = json.loads(settings.read_text(encoding="utf-8-sig"))
    doc["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "say done"}]})
    doc["theme"] = "dark"
    settings.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    with config.open("a", encoding="utf-8") as f:
        f.write('\n[hooks.state."hooks.json:stop:0"]\ntrusted_hash = "abc"\n')

    report = uninstall()
    assert {f["status"] for f in report["files"]} == {"cleaned", "deleted"}
    assert json.loads(settings.read_text(encoding="utf-8-sig")) == {
        "model": "opus",
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]},
        "theme": "dark",
    }
    assert tomllib.loads(config.read_text(encoding="utf-8-sig")) == {
        "model": "o3",
        "hooks": {"state": {"hooks.json:stop:0": {"trusted_hash": "abc"}}},
    }


def test_a_new_interpreter_replaces_the_old_entries_instead_of_adding_more(home):
    _seed(home, {".claude/settings.json": CLAUDE_SETTINGS["hand-written"]})
    before = tree(home)
    install(["claude-code", "codex"], python=PY)
    report = install(["claude-code", "codex"], python=PY_NEW)
    assert {f["status"] for f in report["files"]} == {"updated"}
    settings, _ = check_claude(home, PY_NEW)
    check_codex(home, PY_NEW)
    assert all(PY not in c for e in CLAUDE_EVENTS for c in hook_commands(settings, e))
    uninstall()
    assert tree(home) == before


def test_waymark_hooks_left_by_a_lost_install_are_replaced_not_duplicated(home):
    install(["claude-code"], python=PY)
    os.unlink(manifest.path())
    install(["claude-code"], python=PY_NEW)
    settings, _ = check_claude(home, PY_NEW)
    assert sum(len(hook_commands(settings, e)) for e in CLAUDE_EVENTS) == len(CLAUDE_EVENTS)


def test_a_symlinked_config_is_edited_through_the_link(home, tmp_path):
    dotfiles = tmp_path / "dotfiles" / "settings.json"
    write(dotfiles, '{"model": "opus"}\n', 0o600)
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").symlink_to(dotfiles)
    install(["claude-code"], python=PY)
    assert (home / ".claude" / "settings.json").is_symlink()
    assert "waymark.hooks.stop" in dotfiles.read_text(encoding="utf-8")
    assert stat.S_IMODE(dotfiles.stat().st_mode) == 0o600
    uninstall()
    assert dotfiles.read_text(encoding="utf-8") == '{"model": "opus"}\n'
    assert (home / ".claude" / "settings.json").is_symlink()


def test_a_users_notify_is_kept_and_the_user_is_told(home):
    _seed(home, {".codex/config.toml": CODEX_CONFIG["user-notify"]})
    report = install(["codex"], python=PY)
    config, _ = check_codex(home)
    assert config["notify"] == ["terminal-notifier", "-title", "Codex"]
    assert any("already sets `notify`" in n for n in report["notes"])


def test_settings_that_disable_hooks_are_pointed_out(home):
    _seed(
        home,
        {
            ".claude/settings.json": '{"disableAllHooks": true}',
            ".codex/config.toml": "[features]\nhooks = false\n",
        },
    )
    notes = install(["claude-code", "codex"], python=PY)["notes"]
    assert any("disableAllHooks" in n for n in notes)
    assert any("hooks = false" in n for n in notes)


def test_uninstall_of_one_client_leaves_the_other(home):
    install(["claude-code", "codex"], python=PY)
    uninstall(["codex"])
    assert not (home / ".codex").exists()
    check_claude(home)
    assert {f["client"] for f in manifest.load()["files"]} == {"claude-code"}


def test_data_is_kept_unless_delete_data_yes(home, waymark_home, capsys):
    install(["claude-code"], python=PY)
    db.connect().close()
    (waymark_home / "env").mkdir()  # the environment install.sh puts in the data folder
    assert main(["uninstall", "--delete-data", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["code"] == "install_refused"
    assert (home / ".claude.json").exists()  # refused before touching anything
    assert main(["uninstall"]) == 0
    assert "your memories stay in" in capsys.readouterr().out
    assert (waymark_home / "waymark.db").exists()
    assert main(["uninstall", "--delete-data", "--yes"]) == 0
    assert sorted(os.listdir(waymark_home)) == ["env"]


def test_hook_commands_survive_the_shell_with_awkward_paths(tmp_path):
    folder = tmp_path / 'we ird "$HOME" `x`'
    fake = folder / "python"
    write(fake, '#!/bin/sh\nprintf "%s\\n" "$0" "$@"\n', 0o755)
    command = commands.hook_command(str(fake), "stop", "codex")
    out = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        str(fake),
        "-I",
        "-c",
        "from waymark.hooks.stop import main;main()",
        "codex",
    ]
    assert commands.is_waymark_hook({"command": command})


def test_windows_commands_use_forward_slashes_for_bash_and_cmd_quoting_only_when_needed():
    spaced = r"C:\Users\Jo Do\AppData\Local\waymark\env\Scripts\python.exe"
    plain = r"C:\Users\jo\AppData\Local\waymark\env\Scripts\python.exe"
    (event, group), *_ = commands.hook_groups(spaced, "codex", windows=True)
    handler = group["hooks"][0]
    assert handler["command"] == (
        '"C:/Users/Jo Do/AppData/Local/waymark/env/Scripts/python.exe"'
        ' -I -c "from waymark.hooks.session_start import main;main()" codex'
    )
    assert handler["commandWindows"] == (
        f'"{spaced}" -I -c "from waymark.hooks.session_start import main;main()" codex'
    )
    (_, group), *_ = commands.hook_groups(plain, "codex", windows=True)
    assert group["hooks"][0]["commandWindows"] == (
        f'{plain} -I -c "from waymark.hooks.session_start import main;main()" codex'
    )
    (_, group), *_ = commands.hook_groups(plain, "claude-code", windows=True)
    assert "commandWindows" not in group["hooks"][0]
    (_, group), *_ = commands.hook_groups(PY, "codex", windows=False)
    assert "commandWindows" not in group["hooks"][0]


def test_install_uses_the_environments_python_without_resolving_links(home, tmp_path, monkeypatch):
    venv_python = tmp_path / "venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.symlink_to(sys.executable)
    monkeypatch.setattr("sys.executable", str(venv_python))
    install(["claude-code"])
    check_claude(home, str(venv_python))


def test_json_edits_keep_the_files_own_layout():
    text = '{\n    "a": [1, 2],\n    "b": {}\n}\n'
    root = jsonedit.scan(text)
    added = jsonedit.add_member(text, root, "c", {"d": [True]})
    assert (
        added
        == '{\n    "a": [1, 2],\n    "b": {},\n    "c": {\n        "d": [\n            true\n        ]\n    }\n}\n'
    )
    assert jsonedit.remove_child(added, jsonedit.scan(added), 2) == text


def test_toml_scanner_ignores_brackets_inside_strings_and_arrays():
    text = 'a = """\n[x]\n"""\nb = [\n  [1],\n]\n# [c]\n[real]\nk = "[v]"\n'
    headers = [line.key for line in tomledit.scan(text) if line.kind == "header"]
    assert headers == [("real",)]
    assert tomledit.top_level_end(text) == text.index("# [c]")


def test_waymarks_codex_blocks_edited_by_the_user_are_still_removed(home):
    config = home / ".codex" / "config.toml"
    _seed(home, {".codex/config.toml": 'model = "o3"\n\n[tui]\nnotifications = true\n'})
    install(["codex"], python=PY)
    text = config.read_text(encoding="utf-8")
    text = text.replace("args = [", "startup_timeout_sec = 20\nargs = [")
    text = text.replace('"waymark.hooks.notify"]', '"waymark.hooks.notify", "--quiet"]')
    config.write_text(text, encoding="utf-8")
    assert {f["status"] for f in uninstall()["files"]} == {"restored", "deleted"}
    assert config.read_text(encoding="utf-8") == 'model = "o3"\n\n[tui]\nnotifications = true\n'


def test_install_says_so_when_the_waymark_plugin_is_enabled_too(home):
    claude_dir = home / ".claude"
    claude_dir.mkdir()
    (claude_dir / "settings.json").write_text(
        '{"enabledPlugins": {"waymark@waymark": true}}\n', encoding="utf-8"
    )
    codex_dir = home / ".codex"
    codex_dir.mkdir()
    (codex_dir / "config.toml").write_text(
        '[plugins."waymark@waymark"]\nenabled = true\n', encoding="utf-8"
    )
    report = install(["claude-code", "codex"], python=PY)
    notes = " ".join(report["notes"])
    assert "Waymark plugin (waymark@waymark) is also enabled in Claude Code" in notes
    assert "also enabled in Codex" in notes and "runs each event once" in notes


def test_uninstall_under_a_second_profile_leaves_the_default_profile_alone(
    home, tmp_path, monkeypatch, capsys
):
    install(["claude-code", "codex"], python=PY)  # the default profile: ~/.claude, ~/.codex
    default_settings = (home / ".claude" / "settings.json").read_text(encoding="utf-8")
    default_config = (home / ".codex" / "config.toml").read_text(encoding="utf-8")
    second_claude, second_codex = tmp_path / "work-claude", tmp_path / "work-codex"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(second_claude))
    monkeypatch.setenv("CODEX_HOME", str(second_codex))
    install(["claude-code", "codex"], python=PY)
    assert main(["uninstall", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    touched = {f["path"] for f in report["files"]}
    assert touched and all(str(tmp_path / "work-") in p for p in touched)
    assert any("another profile" in n for n in report["notes"])
    assert (home / ".claude" / "settings.json").read_text(encoding="utf-8") == default_settings
    assert (home / ".codex" / "config.toml").read_text(encoding="utf-8") == default_config
    assert not (second_codex / "config.toml").exists()  # Waymark created it: deleted
    assert main(["uninstall", "--all-profiles", "--json"]) == 0
    capsys.readouterr()
    assert not (home / ".codex" / "config.toml").exists()


def test_only_hooks_or_only_the_mcp_server_and_switching_takes_the_other_out(home, capsys):
    (home / ".claude").mkdir()
    (home / ".codex").mkdir()
    before = tree(home)
    report = install(["claude-code", "codex"], python=PY, only="mcp")
    assert report["modes"] == {"claude-code": "mcp", "codex": "mcp"}
    assert not (home / ".claude" / "settings.json").exists()
    assert not (home / ".codex" / "hooks.json").exists()
    user = json.loads((home / ".claude.json").read_text(encoding="utf-8"))
    assert "waymark" in user["mcpServers"]
    config = tomllib.loads((home / ".codex" / "config.toml").read_text(encoding="utf-8"))
    assert "waymark" in config["mcp_servers"] and "notify" not in config  # notify goes with hooks
    assert manifest.mode_of("codex") == "mcp"

    install(["claude-code", "codex"], python=PY, only="hooks")  # switch: the server comes out
    assert not (home / ".claude.json").exists() and not (home / ".codex" / "config.toml").exists()
    check_claude_hooks = json.loads(
        (home / ".claude" / "settings.json").read_text(encoding="utf-8")
    )
    assert "SessionStart" in check_claude_hooks["hooks"]
    assert (home / ".codex" / "hooks.json").exists()
    assert manifest.mode_of("claude-code") == "hooks"

    install(["claude-code", "codex"], python=PY)  # both again: as a plain install
    check_claude(home)
    check_codex(home)
    assert manifest.mode_of("codex") == "both"
    uninstall()
    assert tree(home) == before
    assert manifest.mode_of("codex") is None


def test_doctor_and_status_say_each_clients_install_mode(repo, home, monkeypatch, capsys):
    (home / ".claude").mkdir()
    (home / ".codex").mkdir()
    monkeypatch.chdir(repo)
    assert main(["install", "--client", "claude-code", "--only", "mcp"]) == 0
    assert main(["install", "--client", "codex", "--only", "hooks"]) == 0
    capsys.readouterr()
    main(["doctor", "--json"])
    found = {f["check"]: f for f in json.loads(capsys.readouterr().out)["findings"]}
    assert found["claude-code install mode"]["detail"].startswith("MCP server only")
    assert found["claude-code hooks"]["status"] == "skip"  # not a failure: not asked for
    assert found["codex install mode"]["detail"].startswith("hooks only")
    assert found["codex mcp"]["status"] == "skip"
    assert main(["enable"]) == 0
    capsys.readouterr()
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert "install     claude-code: MCP server only" in out
    assert "install     codex: hooks only" in out
    assert main(["install", "--only", "neither"]) == 2


OPENCODE_CONFIG = """{
  "$schema": "https://opencode.ai/config.json",
  "theme": "tokyonight",
  "mcp": {
    "docs": {"type": "remote", "url": "https://example.com/mcp", "enabled": true}
  }
}
"""


def test_opencode_gets_the_mcp_server_and_uninstall_restores_every_byte(home, capsys):
    write(home / ".config" / "opencode" / "opencode.json", OPENCODE_CONFIG, 0o600)
    before = tree(home)
    report = install(["opencode"], python=PY)
    assert [(f["client"], f["status"]) for f in report["files"]] == [("opencode", "updated")]
    assert any("runs no hooks" in n and "waymark proxy" in n for n in report["notes"])
    doc = json.loads((home / ".config" / "opencode" / "opencode.json").read_text(encoding="utf-8"))
    assert doc["mcp"]["waymark"] == {"type": "local", "command": [PY, "-m", "waymark", "mcp"],
                                     "enabled": True}  # fmt: skip
    assert doc["mcp"]["docs"]["url"] == "https://example.com/mcp" and doc["theme"] == "tokyonight"
    assert install(["opencode"], python=PY)["files"][0]["status"] == "unchanged"
    assert manifest.mode_of("opencode") == "both"
    uninstall(["opencode"])
    assert tree(home) == before


def test_an_opencode_config_with_comments_is_refused_and_left_alone(home, capsys):
    jsonc = home / ".config" / "opencode" / "opencode.jsonc"
    write(jsonc, '{\n  // mine\n  "mcp": {}\n}\n', 0o600)
    before = tree(home)
    assert main(["install", "--client", "opencode"]) == 1
    assert "does not edit" in capsys.readouterr().err
    assert tree(home) == before


def test_doctor_says_opencode_runs_no_hooks_and_checks_its_server(repo, home, monkeypatch, capsys):
    (home / ".config" / "opencode").mkdir(parents=True)
    monkeypatch.chdir(repo)
    main(["doctor", "--json"])
    found = {f["check"]: f for f in json.loads(capsys.readouterr().out)["findings"]}
    assert found["opencode hooks"]["status"] == "skip"
    assert found["opencode mcp"]["status"] == "fail"
    assert main(["install", "--client", "opencode"]) == 0
    capsys.readouterr()
    main(["doctor", "--json"])
    found = {f["check"]: f for f in json.loads(capsys.readouterr().out)["findings"]}
    assert found["opencode mcp"]["status"] == "ok"


def fake_claude(home, version: str) -> None:
    """A `claude` on PATH that says `version`, as `claude --version` does."""
    exe = home.parent / "bin" / "claude"
    exe.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n", encoding="utf-8")
    exe.chmod(0o755)


def prompt_handlers(home) -> list[dict]:
    settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    (group,) = settings["hooks"]["UserPromptSubmit"]
    return group["hooks"]


def test_a_claude_code_that_runs_mcp_tool_hooks_also_gets_the_prompt_hook_as_a_server_call(
    home,
):
    (home / ".claude").mkdir()
    fake_claude(home, "2.1.332")
    before = tree(home)
    install(["claude-code"], python=PY)
    command, tool = prompt_handlers(home)
    assert commands.is_waymark_hook(command)  # the fallback when the server is not connected
    assert tool == {
        "type": "mcp_tool", "server": "waymark", "tool": "hook", "timeout": 5,
        "input": {"event": "UserPromptSubmit", "prompt": "${prompt}",
                  "prompt_id": "${prompt_id}", "session_id": "${session_id}", "cwd": "${cwd}",
                  "agent_id": "${agent_id}"},
    }  # fmt: skip
    user = json.loads((home / ".claude.json").read_text(encoding="utf-8"))
    assert tool["server"] in user["mcpServers"]  # the server the call goes to
    after = tree(home)
    assert install(["claude-code"], python=PY)["files"][0]["status"] == "unchanged"
    assert tree(home) == after
    install(["claude-code"], python=PY, only="hooks")  # no server: no call to one
    assert [h["type"] for h in prompt_handlers(home)] == ["command"]
    install(["claude-code"], python=PY)
    assert len(prompt_handlers(home)) == 2
    uninstall()
    assert tree(home) == before


@pytest.mark.parametrize("said", ["2.1.117", "1.0.3", "not a version"])
def test_an_older_or_unreadable_claude_code_gets_the_command_hooks_only(home, said):
    (home / ".claude").mkdir()
    fake_claude(home, said)
    install(["claude-code"], python=PY)
    check_claude(home)
    assert [h["type"] for h in prompt_handlers(home)] == ["command"]


def test_doctor_says_how_claude_codes_prompt_hook_reaches_waymark(repo, home, monkeypatch, capsys):
    (home / ".claude").mkdir()
    monkeypatch.chdir(repo)

    def route() -> dict:
        capsys.readouterr()
        main(["doctor", "--json"])
        found = {f["check"]: f for f in json.loads(capsys.readouterr().out)["findings"]}
        return found["claude-code prompt hook"]

    fake_claude(home, "2.1.100")
    assert main(["install", "--client", "claude-code"]) == 0
    assert route()["status"] == "skip" and "older than 2.1.118" in route()["detail"]
    fake_claude(home, "2.1.332")  # upgraded since: the install could do better
    said = route()
    assert said["status"] == "warn" and said["fix"] == "waymark install --client claude-code"
    assert main(["install", "--client", "claude-code"]) == 0
    said = route()
    assert said["status"] == "ok" and "mcp_tool" in said["detail"]


def test_a_waymark_hook_is_known_by_its_command_word_by_word_as_the_pattern_knew_it():
    import re

    pattern = re.compile(r"(^|\s)(-m\s+|-c\s+[\"']?from\s+)waymark\.hooks\.[A-Za-z_]+(\s|$)")
    commands_seen = [
        h["command"]
        for client in ("claude-code", "codex") for windows in (False, True)
        for _, group in commands.hook_groups("/opt/w env/bin/python", client, windows=windows)
        for h in group["hooks"] if "command" in h
    ]  # fmt: skip
    commands_seen += [
        "python -m waymark.hooks.stop codex", "python3 -I -m waymark.hooks.session_start",
        "python -c 'from waymark.hooks.stop import main;main()'", "python -m waymark.hooks.",
        "python -m waymark.hooks.st0p", "python -m waymark.hooks.stop2 x", "-m waymark.hook.stop",
        "python -c \"\"from waymark.hooks.stop\"", "python -c from waymark.hooks.stop\"",
        "python -m", "python -c", "python -c from", "echo waymark.hooks.stop",
        "python  -m\twaymark.hooks.pre_tool_use", "x-m waymark.hooks.stop", "",
    ]  # fmt: skip
    assert len(commands_seen) > 20
    for command in commands_seen:
        said = commands.is_waymark_hook({"command": command})
        assert said == (pattern.search(command) is not None), command


def exec_handlers(home) -> dict[str, dict]:
    settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    return {event: g["hooks"][0] for event, groups in settings["hooks"].items() for g in groups}


def test_a_claude_code_that_takes_args_runs_each_hook_without_a_shell(home):
    (home / ".claude").mkdir()
    before = tree(home)
    fake_claude(home, "2.1.139")
    install(["claude-code"], python=PY)
    handlers = exec_handlers(home)
    for event, (module, timeout) in CLAUDE_EVENTS.items():
        assert handlers[event] == {
            "type": "command", "command": PY, "timeout": timeout,
            "args": ["-I", "-c", f"from waymark.hooks.{module} import main;main()", "claude-code"],
        }, event  # fmt: skip
        assert commands.is_waymark_hook(handlers[event])
    after = tree(home)
    assert install(["claude-code"], python=PY)["files"][0]["status"] == "unchanged"
    assert tree(home) == after
    fake_claude(home, "2.1.138")  # one that does not take `args`: the command form again
    install(["claude-code"], python=PY)
    for event, (module, _) in CLAUDE_EVENTS.items():
        assert "args" not in exec_handlers(home)[event]
        assert exec_handlers(home)[event]["command"] == (
            f'"{PY}" -I -c "from waymark.hooks.{module} import main;main()" claude-code'
        )
    fake_claude(home, "2.1.139")
    install(["claude-code"], python=PY)
    uninstall()
    assert tree(home) == before


def test_an_exec_form_hook_starts_the_hook_itself_and_doctor_fires_it(home, tmp_path, capsys):
    """The argv the client spawns (no shell) runs the hook, and `doctor --self-test` fires it
    the same way; a path with spaces and quotes needs no quoting."""
    from waymark.installers import checks
    from waymark.installers.wiring import handler_argv

    odd = tmp_path / 'we ird "$HOME" `x`'
    odd.mkdir()
    python = odd / "python"  # Waymark's interpreter, reached through an awkward folder
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    (home / ".claude").mkdir()
    fake_claude(home, "2.1.332")
    install(["claude-code"], python=str(python))
    argv = handler_argv(exec_handlers(home)["SessionEnd"])
    assert argv is not None and argv[0] == str(python)
    done = subprocess.run(argv, input=b'{"session_id": "x", "cwd": "/nonexistent"}',
                          capture_output=True, timeout=60)  # fmt: skip
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    found = checks.self_test("claude-code")
    assert found and all(f["status"] == "ok" for f in found), found


def test_doctor_says_when_claude_codes_hooks_could_run_without_a_shell(repo, home, monkeypatch,
                                                                       capsys):  # fmt: skip
    (home / ".claude").mkdir()
    monkeypatch.chdir(repo)

    def form() -> dict:
        capsys.readouterr()
        main(["doctor", "--json"])
        found = {f["check"]: f for f in json.loads(capsys.readouterr().out)["findings"]}
        return found["claude-code hook form"]

    fake_claude(home, "2.1.100")
    assert main(["install", "--client", "claude-code", "--only", "hooks"]) == 0
    assert form()["status"] == "skip" and "older than 2.1.139" in form()["detail"]
    fake_claude(home, "2.1.140")  # upgraded since
    said = form()
    assert said["status"] == "warn" and said["fix"] == "waymark install --client claude-code"
    assert main(["install", "--client", "claude-code", "--only", "hooks"]) == 0
    said = form()
    assert said["status"] == "ok" and "exec form" in said["detail"]
