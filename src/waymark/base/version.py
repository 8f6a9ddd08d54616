"""This Waymark's version as `waymark --version` and the diagnostics bundle say it."""

from __future__ import annotations

import os

from waymark import __version__


def text() -> str:
    """This Waymark's version, and its commit where the code runs from a git checkout (an
    editable install, the clone itself): `0.2.0 (commit 1a2b3c4)`; a wheel says `0.2.0`.

    The commit is read from the checkout's own files, not asked of git: `--version` is a
    command people and agents run to see that Waymark works, and starting git (and
    `subprocess`) cost it ~8 ms of its ~12."""
    here = os.path.dirname(os.path.realpath(__file__))
    try:
        commit = _head(here)
    except (OSError, ValueError, UnicodeDecodeError):
        commit = None
    return f"{__version__} (commit {commit[:7]})" if commit else __version__


def _head(here: str) -> str | None:
    """The commit HEAD names in the checkout Waymark runs from, or None outside one."""
    git = _git_dir(here)
    if git is None:
        return None
    head = _read(os.path.join(git, "HEAD"))
    if not head.startswith("ref: "):
        return _commit(head)  # a detached HEAD holds the commit itself
    ref = head[5:].strip()
    common = git
    if os.path.exists(os.path.join(git, "commondir")):  # a worktree: refs live in the main one
        common = os.path.normpath(os.path.join(git, _read(os.path.join(git, "commondir"))))
    for base in (git, common):
        path = os.path.join(base, *ref.split("/"))
        if os.path.isfile(path):
            return _commit(_read(path))
    packed = os.path.join(common, "packed-refs")
    if os.path.isfile(packed):
        with open(packed, encoding="utf-8") as f:
            for line in f:
                commit, _, name = line.strip().partition(" ")
                if name == ref:
                    return _commit(commit)
    return None


def _git_dir(here: str) -> str | None:
    """The `.git` of the checkout whose `src/waymark/base` is `here` (a `.git` file points to
    it in a worktree), or None: a wheel installed in a virtual environment that happens to
    sit inside some other repository is not that repository's commit."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    dot = os.path.join(root, ".git")
    if os.path.isdir(dot):
        return dot
    if os.path.isfile(dot):
        pointer = _read(dot)
        if pointer.startswith("gitdir: "):
            return os.path.normpath(os.path.join(root, pointer[8:].strip()))
    return None


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read(4096).strip()


def _commit(text: str) -> str | None:
    text = text.strip()
    if len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text):
        return text
    return None
