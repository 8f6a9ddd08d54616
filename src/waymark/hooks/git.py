"""What git says about the working tree: names and commits only, never file contents.

Every call has a short timeout and returns None on any failure: git is a nicety here.
"""

from __future__ import annotations

import os
import subprocess

TIMEOUT_S = 2.0
MAX_FILES = 200


def _git(root: str, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", root, *args],
            capture_output=True,
            timeout=TIMEOUT_S,
            check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace")


def is_repo(root: str) -> bool:
    return os.path.exists(os.path.join(root, ".git"))


def dirty(root: str) -> dict[str, str] | None:
    """Changed and untracked paths mapped to a cheap signature (status, size, mtime), so two
    snapshots differ when a dirty file changes again."""
    return finish_dirty(start_dirty(root), root)


def start_dirty(root: str | None) -> subprocess.Popen[bytes] | None:
    """Start `git status` now and read it later (`finish_dirty`): a hook works meanwhile."""
    if not root or not is_repo(root):
        return None
    try:
        return subprocess.Popen(
            ["git", "-C", root, "status", "--porcelain=v1", "-z", "--untracked-files=normal"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except OSError:
        return None


def finish_dirty(proc: subprocess.Popen[bytes] | None, root: str | None) -> dict[str, str] | None:
    if proc is None or root is None:
        return None
    try:
        out, _ = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    if proc.returncode != 0:
        return None
    result: dict[str, str] = {}
    entries = out.decode("utf-8", "replace").split("\0")
    i = 0
    while i < len(entries) and len(result) < MAX_FILES:
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        status, path = entry[:2], entry[3:]
        if status[0] in "RC":
            i += 1  # the rename's source path follows
        try:
            st = os.stat(os.path.join(root, path))
            result[path] = f"{status} {st.st_size} {st.st_mtime_ns}"
        except OSError:
            result[path] = f"{status} gone"
    return result


def commits_since(root: str, since: str | None, limit: int = 10) -> list[str] | None:
    """One line per commit after `since` (a sha), newest first."""
    if not since or not is_repo(root):
        return None
    out = _git(root, "log", "--oneline", "--no-decorate", f"-{limit}", f"{since}..HEAD")
    return None if out is None else [line for line in out.splitlines() if line.strip()]
