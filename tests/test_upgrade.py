"""Upgrading keeps what a user's clients trust: `waymark install` over the install of the
previous release leaves every hook command byte for byte as it was, so Codex keeps its hook
trust and Claude Code its settings. The previous release's own code makes the first install
(from git history), this code the second, one interpreter for both."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PREVIOUS = "7c7023b"  # 0.1.0, the last commit before 0.2.0
posix_only = pytest.mark.skipif(os.name != "posix", reason="hook commands differ on Windows")


def previous_release(tmp: Path) -> Path:
    """The previous release's package laid out as its wheel lays it out."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", PREVIOUS, "src", "hooks", "installers"],
        capture_output=True,
    )
    if archive.returncode != 0:
        pytest.skip(f"commit {PREVIOUS} is not in this clone's history (a shallow clone?)")
    tree = tmp / "tree"
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as t:
        t.extractall(tree, filter="data")
    package = tmp / "package"
    shutil.copytree(tree / "src" / "waymark", package / "waymark")
    shutil.copytree(tree / "hooks", package / "waymark" / "hooks")
    shutil.copytree(tree / "installers", package / "waymark" / "installers")
    return package


@posix_only
def test_an_upgrade_keeps_every_hook_command_and_codexs_trust(tmp_path, monkeypatch):
    from waymark.installers import checks, install

    home, data = tmp_path / "home", tmp_path / "data"
    (home / ".claude").mkdir(parents=True)
    (home / ".codex").mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("WAYMARK_", "CLAUDE_", "CODEX_", "XDG_", "PYTHON"))}  # fmt: skip
    env.update(HOME=str(home), WAYMARK_HOME=str(data), PATH="/usr/bin:/bin",
               PYTHONPATH=str(previous_release(tmp_path)))  # fmt: skip
    code = ("import waymark, sys; from waymark.cli import main; "
            "assert waymark.__version__ == '0.1.0', waymark.__file__; sys.exit(main(['install']))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=home, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr

    # The user trusts Waymark's hooks in Codex (what /hooks writes: the hash of each handler).
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("WAYMARK_HOME", str(data))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(var, raising=False)
    config = home / ".codex" / "config.toml"
    hooks_file = home / ".codex" / "hooks.json"
    trusted = "".join(f'\n[hooks.state."{key}"]\ntrusted_hash = "{digest}"\n'
                      for key, (_, digest) in checks._current_hashes(str(hooks_file)).items())  # fmt: skip
    config.write_text(config.read_text(encoding="utf-8") + trusted, encoding="utf-8")
    assert checks._codex_trust()["status"] == "ok"
    files = [home / ".claude" / "settings.json", home / ".claude.json", hooks_file, config]
    before = {path: path.read_bytes() for path in files}

    install(["claude-code", "codex"])  # this release's install, over the previous one's

    for path in (home / ".claude.json", config):
        assert path.read_bytes() == before[path], f"{path} changed on upgrade"
    for path in (home / ".claude" / "settings.json", hooks_file):
        old = json.loads(before[path])["hooks"]
        new = json.loads(path.read_bytes())["hooks"]
        assert {event: new[event] for event in old} == old, f"{path}: a hook command changed"
        assert set(new) - set(old) == {"SubagentStop"}  # what this release adds (#48)
    trust = checks._codex_trust()  # every hook trusted before still runs; the new one asks
    assert trust["status"] == "warn" and "older command" not in trust["detail"]
    assert "SubagentStop hook(s) are not trusted" in trust["detail"]
    commands = [h["command"] for groups in json.loads(before[hooks_file])["hooks"].values()
                for g in groups for h in g["hooks"]]  # fmt: skip
    assert commands and all(sys.executable in c for c in commands)


def test_a_second_install_leaves_a_file_the_client_changed_since(tmp_path, monkeypatch):
    """Claude Code rewrites ~/.claude.json on its own (counters, projects): a second
    `waymark install` finds Waymark's entry there as it wrote it and changes nothing (#44)."""
    from waymark.installers import install

    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(var, raising=False)
    install(["claude-code"])
    config = home / ".claude.json"
    doc = json.loads(config.read_text(encoding="utf-8"))
    doc.update(numStartups=3, projects={"/work/app": {"allowedTools": []}})
    config.write_text(json.dumps(doc, indent=4), encoding="utf-8")  # the client's own layout
    before = config.read_bytes()
    report = install(["claude-code"])
    assert config.read_bytes() == before
    statuses = {os.path.basename(f["path"]): f["status"] for f in report["files"]}
    assert statuses[".claude.json"] == "unchanged", statuses
