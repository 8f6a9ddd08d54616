"""`waymark doctor`: findings with fixes, exit 0 only when healthy."""

from __future__ import annotations

import io
import json
import pathlib

import pytest
from waymark.installers import install

from waymark import home
from waymark.cli import main
from waymark.storage import connection as db


@pytest.fixture
def user_home(tmp_path, monkeypatch):
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    return h


def doctor(capsys):
    code = main(["doctor", "--json"])
    report = json.loads(capsys.readouterr().out)
    return code, {f["check"]: f for f in report["findings"]}, report["healthy"]


def test_installed_clients_and_a_sound_database_are_healthy(user_home, capsys):
    db.connect().close()
    (user_home / ".claude").mkdir()
    (user_home / ".codex").mkdir()
    install(["claude-code", "codex"])
    code, found, healthy = doctor(capsys)
    assert code == 0 and healthy
    for check in (
        "database",
        "permissions",
        "claude-code hooks",
        "claude-code mcp",
        "codex hooks",
        "codex mcp",
        "hook run",
    ):
        assert found[check]["status"] == "ok", found[check]
    assert found["codex hook trust"]["status"] == "warn"
    assert "/hooks" in found["codex hook trust"]["fix"]


def test_a_found_client_without_waymark_fails_with_the_fix(user_home, capsys):
    db.connect().close()
    (user_home / ".claude").mkdir()
    code, found, healthy = doctor(capsys)
    assert code == 1 and not healthy
    assert found["claude-code hooks"]["status"] == "fail"
    assert found["claude-code hooks"]["fix"] == "waymark install --client claude-code"
    assert found["codex"]["status"] == "skip"


def test_a_corrupt_database_fails_with_a_restore_fix(user_home, capsys):
    home.ensure_home()
    with open(home.db_path(), "wb") as f:
        f.write(b"not a database" * 100)
    code, found, _ = doctor(capsys)
    assert code == 1 and found["database"]["status"] == "fail"
    assert "waymark restore" in found["database"]["fix"]


def test_codex_trust_counts_only_waymarks_own_hooks(user_home, capsys):
    db.connect().close()
    (user_home / ".codex").mkdir()
    install(["codex"])
    hooks_file = user_home / ".codex" / "hooks.json"
    config = user_home / ".codex" / "config.toml"
    base = config.read_text(encoding="utf-8")
    unrelated = f'\n[hooks.state."{user_home}/elsewhere/hooks.json:stop:0:0"]\n'
    config.write_text(base + unrelated + 'trusted_hash = "sha256:00"\n', encoding="utf-8")
    found = doctor(capsys)[1]
    assert found["codex hook trust"]["status"] == "warn"  # someone else's trust is not ours

    events = json.loads(hooks_file.read_text(encoding="utf-8"))["hooks"]
    snake = {
        e: "".join(f"_{c.lower()}" if c.isupper() else c for c in e).lstrip("_") for e in events
    }
    from waymark.installers.checks import trust_hash

    stale = "".join(
        f'\n[hooks.state."{hooks_file}:{snake[event]}:0:0"]\ntrusted_hash = "sha256:1"\n'
        for event in events
    )
    config.write_text(base + stale, encoding="utf-8")
    found = doctor(capsys)[1]["codex hook trust"]
    assert found["status"] == "warn" and "trusted for an older command: re-trust" in found["detail"]
    trust = "".join(
        f'\n[hooks.state."{hooks_file}:{snake[event]}:0:0"]\n'
        f'trusted_hash = "{trust_hash(event, groups[0], groups[0]["hooks"][0])}"\n'
        for event, groups in events.items()
    )
    config.write_text(base + trust, encoding="utf-8")
    found = doctor(capsys)[1]
    assert found["codex hook trust"]["status"] == "ok", found["codex hook trust"]
    assert f"all {len(events)} of Waymark's hooks trusted" in found["codex hook trust"]["detail"]


def test_the_trust_hash_is_codexs_formula():
    import hashlib

    from waymark.installers.checks import trust_hash

    group = {
        "matcher": "startup|resume",
        "hooks": [{"type": "command", "command": "x", "timeout": 10}],
    }
    want = '{"event_name":"session_start","hooks":[{"async":false,"command":"x","timeout":10,'
    want += '"type":"command"}],"matcher":"startup|resume"}'
    expected = "sha256:" + hashlib.sha256(want.encode()).hexdigest()
    assert trust_hash("SessionStart", group, group["hooks"][0]) == expected
    bare = {"hooks": [{"type": "command", "command": "x"}]}
    assert (
        trust_hash("Stop", bare, bare["hooks"][0])
        == "sha256:"
        + hashlib.sha256(
            b'{"event_name":"stop","hooks":[{"async":false,"command":"x","timeout":600,'
            b'"type":"command"}]}'
        ).hexdigest()
    )


def test_a_bad_project_config_is_named_and_a_good_one_summarised(repo, monkeypatch):
    from waymark.health.doctor import project_config

    assert project_config(str(repo)) == []  # no .waymark.toml: nothing to say
    (repo / ".waymark.toml").write_text(
        '[guard]\nask_paths = ["migrations/"]\n[output]\ntrim_over = 8000\n'
    )
    (found,) = project_config(str(repo))
    assert found["status"] == "ok"
    assert "guard asks for 1 paths, 0 commands" in found["detail"]
    assert "over 8,000 characters trimmed, kept 7 days" in found["detail"]
    (repo / ".waymark.toml").write_text('[guard]\nask_paths = "migrations/"\n')
    (found,) = project_config(str(repo))
    assert found["status"] == "fail" and "[guard] ask_paths must be a list" in found["detail"]
    (repo / ".waymark.toml").write_text("[guard\n")
    (found,) = project_config(str(repo))
    assert found["status"] == "fail" and "not valid TOML" in found["detail"]


def test_an_unknown_project_config_key_is_a_warning_with_the_closest_name(
    conn, enabled, repo, monkeypatch
):
    from test_hooks import hook, payload
    from waymark import home
    from waymark.health.doctor import project_config

    (repo / ".waymark.toml").write_text(
        '[capture]\nignore_path = ["secrets/"]\n[gaurd]\nask_paths = ["db/"]\nnmae = "x"\n'
        "[summary]\nenabled = true\n"
    )
    found = project_config(str(repo))
    assert [f["status"] for f in found] == ["ok", "warn", "warn"]
    capture, table = found[1]["detail"], found[2]["detail"]
    assert "[capture] has no setting ignore_path; did you mean ignore_paths?" in capture
    assert "unknown table [gaurd]; did you mean [guard]?" in table  # nmae is inside [gaurd]
    (repo / ".waymark.toml").write_text('nmae = "shop"\n')
    (key,) = [f for f in project_config(str(repo)) if f["status"] == "warn"]
    assert "unknown key nmae; did you mean name?" in key["detail"]
    # and each session start says so in the hooks' log
    done = hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo)))
    assert done.returncode == 0
    log = (pathlib.Path(home.data_home()) / "hooks.log").read_text(encoding="utf-8")
    assert "unknown key nmae; did you mean name?" in log


def test_a_codex_home_that_names_no_folder_is_no_codex(user_home, capsys, monkeypatch):
    """#44: a Claude-only install with CODEX_HOME set (no Codex program, no folder) was "not
    healthy", with FAIL lines for Codex's hooks and MCP server."""
    db.connect().close()
    (user_home / ".claude").mkdir()
    install(["claude-code"])
    monkeypatch.setenv("CODEX_HOME", str(user_home / "no-codex-here"))
    code, found, healthy = doctor(capsys)
    assert code == 0 and healthy
    assert found["codex"]["status"] == "skip"
