"""install.sh end to end into a temporary HOME: a real environment, `waymark status`, and the
clients connected (lexical only, `--no-semantic`, to stay fast)."""

from __future__ import annotations

import json
import os
import pathlib
import stat
import subprocess
import sys

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = pathlib.Path(__file__).parents[1]
pytestmark = pytest.mark.skipif(os.name == "nt", reason="install.sh is for Linux and macOS")


def clean_env(home: pathlib.Path) -> dict[str, str]:
    """The caller's environment without anything that points at real Waymark or client data."""
    drop = ("WAYMARK_", "XDG_", "CLAUDE_", "CODEX_", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(HOME=str(home), TMPDIR=str(home.parent / "tmp"))
    return env


def run(cmd: list[str], env: dict[str, str], cwd: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        cmd, env=env, cwd=cwd, capture_output=True, text=True, encoding="utf-8", timeout=600
    )


def test_install_sh_installs_connects_both_clients_and_refuses_loudly(tmp_path):
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".codex").mkdir()
    (tmp_path / "tmp").mkdir()
    env = clean_env(home)
    prefix = home / ".local" / "share" / "waymark" / "env"
    python = prefix / "bin" / "python"
    # A Codex on PATH that says when it runs and warns without ending its line, as Codex's
    # own warnings may: the installer never runs it, so nothing is glued to its last line.
    ran = tmp_path / "codex-ran"
    (tmp_path / "bin").mkdir()
    codex = tmp_path / "bin" / "codex"
    codex.write_text(f"#!/bin/sh\necho \"$@\" >> '{ran}'\nprintf 'WARNING: codex' >&2\n",
                     encoding="utf-8")  # fmt: skip
    codex.chmod(0o755)
    env["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{env['PATH']}"

    first = run(["bash", str(ROOT / "install.sh"), "--no-semantic"], env, home)
    assert first.returncode == 0, first.stdout + first.stderr
    assert not ran.exists() and "WARNING: codex" not in first.stdout + first.stderr
    assert first.stdout.endswith("done: open Claude Code or Codex in any git repository\n")
    # The locked versions, hashes checked, and it says which.
    lock = (ROOT / "requirements" / "lexical.txt").read_text(encoding="utf-8")
    pinned = next(line.split("==")[1].split()[0] for line in lock.splitlines()
                  if line.startswith("mcp=="))  # fmt: skip
    assert f"locked versions: mcp {pinned}," in first.stdout
    got = run([str(python), "-c", "from importlib.metadata import version; print(version('mcp'))"],
              env, home).stdout.strip()  # fmt: skip
    assert got == pinned
    assert "database" in first.stdout and "schema" in first.stdout  # `waymark status` ran
    assert (home / ".local" / "bin" / "waymark").resolve() == (prefix / "bin" / "waymark")
    launcher = (prefix / "bin" / "waymark").read_text(encoding="utf-8")
    assert launcher == f"#!{python} -I\nfrom waymark.cli import entry\nentry()\n"
    said = run([str(home / ".local" / "bin" / "waymark"), "--version"], env, home)
    assert said.returncode == 0 and said.stdout.startswith("waymark ")
    settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    stop = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert stop == (
        f'"{python}" -I -c "from waymark.hooks.stop import main;main()" claude-code'
    )  # the venv's own python
    user = json.loads((home / ".claude.json").read_text(encoding="utf-8"))
    assert user["mcpServers"]["waymark"]["command"] == str(python)
    config = tomllib.loads((home / ".codex" / "config.toml").read_text(encoding="utf-8"))
    assert config["mcp_servers"]["waymark"]["command"] == str(python)
    assert "/hooks" in first.stdout  # the Codex trust step is spelled out

    waymark = str(home / ".local" / "bin" / "waymark")
    data = home / ".local" / "share" / "waymark"
    assert stat.S_IMODE(data.stat().st_mode) == 0o700  # owner-only from the first install
    doctor = json.loads(run([waymark, "doctor", "--json"], env, home).stdout)
    assert all(f["status"] != "fail" for f in doctor["findings"] if f["check"] == "permissions")
    found = {f["check"]: f for f in doctor["findings"]}
    for client in ("claude-code", "codex"):  # a real handshake with the installed server
        assert found[f"{client} mcp"]["status"] == "ok", found[f"{client} mcp"]
        assert "tools/call status" in found[f"{client} mcp"]["detail"]
    # A re-run keeps the capture mode the user chose.
    assert run([waymark, "config", "capture.all_git_repos", "false"], env, home).returncode == 0
    dry = run([waymark, "install", "--dry-run", "--json"], env, home)
    assert dry.returncode == 0, dry.stderr
    assert {f["status"] for f in json.loads(dry.stdout)["files"]} == {"unchanged"}

    # Re-running upgrades in place; --no-clients leaves the clients alone.
    settings_file = home / ".claude" / "settings.json"
    settings_file.write_text('{\n  "model": "opus",\n}\n', encoding="utf-8")
    second = run(["bash", str(ROOT / "install.sh"), "--no-semantic", "--no-clients"], env, home)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "skipped connecting the clients" in second.stdout
    kept = run([waymark, "config", "capture.all_git_repos"], env, home).stdout
    assert kept.strip().endswith("false") and "capture: per project" in second.stdout

    # A malformed config stops the script with a message, and the file is left as it was.
    third = run(["bash", str(ROOT / "install.sh"), "--no-semantic"], env, home)
    assert third.returncode == 1
    assert (
        "settings.json line 3" in third.stderr and "connecting the clients failed" in third.stderr
    )
    assert settings_file.read_text(encoding="utf-8") == '{\n  "model": "opus",\n}\n'


def test_install_sh_dry_run_writes_nothing(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "tmp").mkdir()
    done = run(
        ["bash", str(ROOT / "install.sh"), "--dry-run", "--per-project"], clean_env(home), home
    )
    assert done.returncode == 0, done.stderr
    assert "dry run: nothing is written" in done.stdout
    assert "would set capture per project" in done.stdout
    assert list(home.iterdir()) == []  # no environment, no link, no data


def test_per_project_install_says_so_and_uninstall_all_removes_env_and_link_keeps_backups(
    tmp_path,
):
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "tmp").mkdir()
    env = clean_env(home)
    done = run(
        ["bash", str(ROOT / "install.sh"), "--no-semantic", "--no-clients", "--per-project"],
        env,
        home,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "capture: per project" in done.stdout and "waymark enable" in done.stdout
    assert "recall: lexical (installed without the semantic extra)" in done.stdout
    assert "installed with semantic recall" not in done.stdout
    waymark = home / ".local" / "bin" / "waymark"
    prefix = home / ".local" / "share" / "waymark" / "env"
    config = run([str(waymark), "config", "capture.all_git_repos", "--json"], env, home)
    assert json.loads(config.stdout)["capture.all_git_repos"] is False
    assert run([str(waymark), "backup"], env, home).returncode == 0
    plan = run([str(waymark), "uninstall", "--all", "--dry-run"], env, home).stdout
    assert "would remove Waymark's environment" in plan
    # the `waymark` command goes with it: the advice names what still works
    assert "delete that folder to remove them" in plan and "uninstall --delete-data" in plan
    assert "(`waymark uninstall --delete-data --yes` deletes them)" not in plan

    gone = run([str(waymark), "uninstall", "--all", "--delete-data", "--yes"], env, home)
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert not waymark.exists() and not waymark.is_symlink() and not prefix.exists()
    data = home / ".local" / "share" / "waymark"
    assert not (data / "waymark.db").exists()
    assert list((data / "backups").iterdir())  # copies of the memories are kept, and said so
    assert "kept backups" in gone.stdout and "--delete-backups" in gone.stdout


def test_install_sh_rejects_unknown_options():
    out = subprocess.run(
        ["bash", str(ROOT / "install.sh"), "--bogus"], capture_output=True, text=True
    )
    assert out.returncode == 1 and "unknown option --bogus" in out.stderr


def test_install_ps1_takes_the_same_steps_as_install_sh():
    # No PowerShell on Linux CI to run it: check that it says every step install.sh takes.
    text = (ROOT / "install.ps1").read_text(encoding="utf-8")
    for step in (
        "sys.version_info < (3, 10)",
        "uv venv",
        "-m', 'venv'",
        "requirements\\install.txt",
        "requirements\\lexical.txt",
        "--require-hashes",
        "locked versions",
        "semantic extra unavailable",
        "waymark install",
        "status",
        "NoSemantic",
        "NoClients",
        "PerProject",
        "DryRun",
        "capture.all_git_repos",
        "'index', '--all-projects'",
        "waymark-install.json",
        "--force-reinstall",
    ):
        assert step in text, step


def test_install_sh_dry_run_says_a_model_already_here_is_not_fetched(tmp_path, embedding_model):
    """Run again where Waymark and its model are installed, the dry run says nothing will be
    fetched (it said it would fetch a model that was there)."""
    from waymark.recall import embed

    home = tmp_path / "home"
    (tmp_path / "tmp").mkdir()
    prefix = home / ".local" / "share" / "waymark" / "env"
    (prefix / "bin").mkdir(parents=True)
    python = prefix / "bin" / "python"  # stands for the installed environment's python
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    data = home / ".local" / "share" / "waymark"
    (data / embed.MODEL_DIR_FILE).write_text(embedding_model, encoding="utf-8")
    done = run(["bash", str(ROOT / "install.sh"), "--dry-run", "--no-clients"], clean_env(home),
               home)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "would use the embedding model already here (nothing to fetch)" in done.stdout
    assert "would fetch the embedding model" not in done.stdout
    (data / embed.MODEL_DIR_FILE).unlink()
    again = run(["bash", str(ROOT / "install.sh"), "--dry-run", "--no-clients"],
                {**clean_env(home), "XDG_CACHE_HOME": str(tmp_path / "empty-cache")}, home)  # fmt: skip
    assert "would fetch the embedding model (about 90 MB)" in again.stdout
