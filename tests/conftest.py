"""Every test gets its own data home: a real SQLite file under tmp_path."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from waymark.projects.resolve import Project, resolve
from waymark.storage import connection as db


@pytest.fixture(autouse=True)
def waymark_home(tmp_path, monkeypatch):
    home = tmp_path / "waymark-home"
    monkeypatch.setenv("WAYMARK_HOME", str(home))
    return home


@pytest.fixture
def repo(tmp_path):
    """A real git repository with one commit and a few files."""
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "core.py").write_text("def run():\n    pass\n", encoding="utf-8")
    (root / "README.md").write_text("# demo\n", encoding="utf-8")
    env = git_env(tmp_path)
    subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "init", "-q", str(root)], check=True, env=env
    )
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "init"], check=True, env=env)
    return root


def git_env(tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(tmp_path),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    return env


@pytest.fixture
def conn():
    connection = db.connect()
    yield connection
    connection.close()


@pytest.fixture
def project(conn, repo) -> Project:
    return resolve(conn, str(repo))


def isolated(code: str) -> str:
    """What `code` prints in a fresh `python -I` process, as a hook process starts."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True
    )
    return done.stdout
