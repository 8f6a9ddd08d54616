"""locate(): which project a path belongs to, checked against repositories made by real git."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from waymark.errors import ProjectError
from waymark.projects.locate import git_branch, git_head, locate

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture(autouse=True)
def git_env(tmp_path, monkeypatch):
    """Commits work on a fresh machine, and no user or outer-repository config leaks in."""
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Test")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "test@example.com")


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        encoding="utf-8",
    )
    return result.stdout.strip()


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q")
    (path / "src").mkdir()
    (path / "src" / "app.py").write_text("print('hi')\n", encoding="utf-8")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "first")
    return Path(os.path.realpath(path))


@pytest.fixture
def repo(tmp_path) -> Path:
    return make_repo(tmp_path / "repo")


def test_subdirectory_resolves_to_repository_root(repo):
    location = locate(repo / "src")
    assert location.root == str(repo)
    assert location.how == "git"
    assert location.git_dir == str(repo / ".git")
    assert location.top == str(repo)
    assert location.name is None and location.config_path is None


def test_file_path_resolves_to_repository_root(repo):
    assert locate(repo / "src" / "app.py").root == str(repo)


def test_worktree_resolves_to_main_repository_root_and_reports_its_own_branch(repo):
    git(repo, "worktree", "add", "-q", "-b", "feature", str(repo.parent / "wt"))
    worktree = repo.parent / "wt"

    location = locate(worktree / "src")

    assert location.root == str(repo)
    assert location.how == "git-worktree"
    assert location.git_dir == str(repo / ".git")
    assert location.top == str(worktree)
    assert git_branch(location) == "feature"
    assert git_branch(str(worktree)) == "feature"
    assert git_branch(repo) == "main"
    assert git_head(location) == git(worktree, "rev-parse", "HEAD")


def test_worktree_of_bare_repository_resolves_to_bare_directory(repo, tmp_path):
    git(tmp_path, "clone", "-q", "--bare", str(repo), "bare.git")
    bare = Path(os.path.realpath(tmp_path / "bare.git"))
    git(bare, "worktree", "add", "-q", str(tmp_path / "bare-wt"), "main")

    location = locate(tmp_path / "bare-wt" / "src")

    assert location.root == str(bare)
    assert location.how == "git-worktree"
    assert location.git_dir == str(bare)
    assert git_branch(location) == "main"


def test_submodule_resolves_to_itself(repo, tmp_path):
    library = make_repo(tmp_path / "library")
    git(repo, "submodule", "add", "-q", str(library), "lib")
    submodule = repo / "lib"

    location = locate(submodule / "src")

    assert location.root == str(submodule)
    assert location.how == "git"
    assert location.git_dir == str(repo / ".git" / "modules" / "lib")
    assert git_head(location) == git(library, "rev-parse", "HEAD")


def test_worktree_of_submodule_resolves_to_submodule_checkout(repo, tmp_path):
    library = make_repo(tmp_path / "library")
    git(repo, "submodule", "add", "-q", str(library), "lib")
    git(repo / "lib", "worktree", "add", "-q", "-b", "side", str(tmp_path / "lib-wt"))

    location = locate(tmp_path / "lib-wt")

    assert location.root == str(repo / "lib")
    assert location.how == "git-worktree"
    assert git_branch(location) == "side"


def test_directory_outside_git_resolves_to_itself(tmp_path):
    plain = tmp_path / "plain"
    (plain / "deep").mkdir(parents=True)

    location = locate(plain)

    assert location.root == os.path.realpath(plain)
    assert location.how == "directory"
    assert location.git_dir is None
    assert git_branch(location) is None
    assert git_head(plain / "deep") is None


def test_waymark_toml_name_is_shared_by_clone_and_original(repo, tmp_path):
    (repo / ".waymark.toml").write_text('name = "shop-api"\n', encoding="utf-8")
    git(repo, "add", ".waymark.toml")
    git(repo, "commit", "-q", "-m", "name the project")
    git(tmp_path, "clone", "-q", str(repo), "clone")
    clone = Path(os.path.realpath(tmp_path / "clone"))

    original, copy = locate(repo / "src"), locate(clone / "src")

    assert original.name == copy.name == "shop-api"
    assert original.config_path == str(repo / ".waymark.toml")
    assert copy.config_path == str(clone / ".waymark.toml")
    assert copy.root == str(clone)


def test_waymark_toml_accepts_name_under_project_table(repo):
    (repo / ".waymark.toml").write_text('[project]\nname = "shop_api.v2"\n', encoding="utf-8")
    assert locate(repo).name == "shop_api.v2"


def test_worktree_waymark_toml_wins_over_main_repository(repo):
    (repo / ".waymark.toml").write_text('name = "main-name"\n', encoding="utf-8")
    worktree = repo.parent / "wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(worktree))
    assert locate(worktree).name == "main-name"

    (worktree / ".waymark.toml").write_text('name = "wt-name"\n', encoding="utf-8")
    location = locate(worktree)

    assert location.name == "wt-name"
    assert location.config_path == str(worktree / ".waymark.toml")
    assert location.root == str(repo)


def test_waymark_toml_without_name_leaves_project_unnamed(repo):
    (repo / ".waymark.toml").write_text("[other]\nx = 1\n", encoding="utf-8")
    location = locate(repo)
    assert location.name is None and location.config_path is None


@pytest.mark.parametrize("value", ['""', '"has space"', '"' + "x" * 101 + '"', "42", '"né"'])
def test_invalid_name_raises_project_error_naming_the_file(repo, value):
    config = repo / ".waymark.toml"
    config.write_text(f"name = {value}\n", encoding="utf-8")

    with pytest.raises(ProjectError) as caught:
        locate(repo)

    assert str(config) in caught.value.message
    assert "1-100 characters" in caught.value.message
    assert caught.value.code == "project_error"


def test_malformed_toml_raises_project_error_naming_file_and_line(repo):
    config = repo / ".waymark.toml"
    config.write_text('# project\nname = "ok"\nname =\n', encoding="utf-8")

    with pytest.raises(ProjectError) as caught:
        locate(repo / "src")

    assert str(config) in caught.value.message
    assert "line 3" in caught.value.message


def test_nonexistent_path_raises_project_error(tmp_path):
    missing = tmp_path / "nope" / "file.py"
    with pytest.raises(ProjectError, match="does not exist"):
        locate(missing)


def test_symlinked_directory_resolves_to_real_root(repo, tmp_path):
    link = tmp_path / "link"
    try:
        link.symlink_to(repo, target_is_directory=True)
    except OSError:
        pytest.skip("symlinks not permitted here")

    location = locate(link / "src")

    assert location.root == str(repo)
    assert location.top == str(repo)


def test_detached_head_gives_no_branch(repo):
    sha = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "--detach")

    assert git_branch(repo) is None
    assert git_head(repo) == sha


def test_git_head_reads_loose_ref_then_packed_refs(repo):
    sha = git(repo, "rev-parse", "HEAD")
    assert (repo / ".git" / "refs" / "heads" / "main").is_file()
    assert git_head(repo / "src") == sha

    git(repo, "pack-refs", "--all")

    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert git_head(repo / "src") == sha


def test_unborn_branch_has_a_name_but_no_head(tmp_path):
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q")

    assert git_branch(fresh) == "main"
    assert git_head(fresh) is None


def test_git_file_without_gitdir_raises_project_error(tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / ".git").write_text("nonsense\n", encoding="utf-8")

    with pytest.raises(ProjectError, match="gitdir"):
        locate(broken)


def test_stray_git_directory_that_is_not_a_repository_is_passed_over(repo):
    (repo / "src" / ".git").mkdir()
    assert locate(repo / "src").root == str(repo)


def test_an_invalid_project_name_is_never_repeated_in_an_error_or_the_hooks_log(tmp_path):
    """A name is where a pasted secret lands: the error (which a hook logs) says its length
    and the characters that may not be, never the value; a valid-looking name the redactor
    flags is refused too."""
    import json as _json
    import os as _os
    import subprocess as _subprocess
    import sys as _sys

    from waymark.errors import ProjectError
    from waymark.projects.locate import _parse_name

    corpus = _json.loads((Path(__file__).parent / "fixtures" / "secrets_corpus.json").read_text())
    config = tmp_path / ".waymark.toml"
    for case in corpus["positive"]:
        for secret in case["secrets"]:
            config.write_text("name = " + _json.dumps(f"app {secret}") + "\n", encoding="utf-8")
            with pytest.raises(ProjectError) as raised:
                _parse_name(str(config))
            assert secret not in str(raised.value) and secret not in repr(raised.value.details)
    config.write_text('name = "app-ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"\n', encoding="utf-8")
    with pytest.raises(ProjectError, match="looks like it holds a secret"):
        _parse_name(str(config))
    home, repo = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    repo.mkdir()
    _subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".waymark.toml").write_text('name = "db pw Pg#6oukfbH0bu7F"\n', encoding="utf-8")
    payload = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart",
               "source": "startup"}  # fmt: skip
    done = _subprocess.run(
        [_sys.executable, "-I", "-c", "from waymark.hooks.session_start import main;main()",
         "claude-code"], input=_json.dumps(payload).encode(), capture_output=True,
        env={**_os.environ, "WAYMARK_HOME": str(home)}, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout == b""
    logged = (home / "hooks.log").read_text(encoding="utf-8")
    assert "the project name is invalid (21 characters, with spaces, '#')" in logged
    assert "6oukfbH0bu7F" not in logged
