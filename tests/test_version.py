"""`waymark --version` names the commit of the checkout it runs from, read from git's own
files (no git process): loose and packed refs, a detached HEAD, a worktree; a wheel, or a
virtual environment that sits inside some other repository, says the version alone."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from waymark.base import version

COMMIT = "1a2b3c4d" * 5


def checkout(root):
    here = root / "src" / "waymark" / "base"
    here.mkdir(parents=True)
    (root / ".git" / "refs" / "heads").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    return here


def test_a_loose_a_packed_and_a_detached_head(tmp_path):
    here = checkout(tmp_path)
    assert version._head(str(here)) is None  # a branch with no commit yet
    (tmp_path / ".git" / "packed-refs").write_text(
        f"# pack-refs with: peeled\n{'0' * 40} refs/heads/other\n{COMMIT} refs/heads/main\n",
        encoding="utf-8",
    )
    assert version._head(str(here)) == COMMIT
    loose = "9f" * 20
    (tmp_path / ".git" / "refs" / "heads" / "main").write_text(loose + "\n", encoding="utf-8")
    assert version._head(str(here)) == loose  # a loose ref wins over the packed one
    (tmp_path / ".git" / "HEAD").write_text(COMMIT + "\n", encoding="utf-8")
    assert version._head(str(here)) == COMMIT


def test_a_worktree_reads_its_head_and_the_main_checkouts_refs(tmp_path):
    main = tmp_path / "main"
    checkout(main)
    (main / ".git" / "refs" / "heads" / "topic").write_text(COMMIT, encoding="utf-8")
    private = main / ".git" / "worktrees" / "wt"
    private.mkdir(parents=True)
    (private / "HEAD").write_text("ref: refs/heads/topic\n", encoding="utf-8")
    (private / "commondir").write_text("../..\n", encoding="utf-8")
    tree = tmp_path / "wt"
    here = tree / "src" / "waymark" / "base"
    here.mkdir(parents=True)
    (tree / ".git").write_text(f"gitdir: {private}\n", encoding="utf-8")
    assert version._head(str(here)) == COMMIT


def test_no_checkout_or_someone_elses_says_the_version_alone(tmp_path):
    site = tmp_path / "project" / ".venv" / "lib" / "site-packages" / "waymark" / "base"
    site.mkdir(parents=True)
    (tmp_path / "project" / ".git").mkdir()  # the user's own repository around the venv
    (tmp_path / "project" / ".git" / "HEAD").write_text(COMMIT, encoding="utf-8")
    assert version._head(str(site)) is None
    (tmp_path / "odd" / "src" / "waymark" / "base").mkdir(parents=True)
    (tmp_path / "odd" / ".git").write_text("not a pointer", encoding="utf-8")
    assert version._head(str(tmp_path / "odd" / "src" / "waymark" / "base")) is None


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_this_checkout_says_what_git_says():
    import os

    here = os.path.dirname(os.path.realpath(version.__file__))
    root = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    if not os.path.exists(os.path.join(root, ".git")):
        pytest.skip("Waymark runs from an installed wheel here, not a checkout")
    said = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    assert version._head(here) == said
    assert version.text().endswith(f"(commit {said[:7]})")
