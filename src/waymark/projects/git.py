"""What git says about the working tree: names and commits only, never file contents.

Every call has a short timeout and returns None on any failure: git is a nicety here.
"""

from __future__ import annotations

import os

TIMEOUT_S = 2.0
MAX_FILES = 200
MAX_OUTPUT = 8 * 1024 * 1024
_ENV = {"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class Running:
    """A git process whose output is read later. On POSIX it is started with posix_spawn:
    the subprocess module, with its locale, re, signal and threading imports, costs a hook
    ~5 ms. Elsewhere it is a subprocess.Popen."""

    def __init__(self, args: list[str]) -> None:
        env = {**os.environ, **_ENV}
        self.proc: Any = None
        self.pid, self.fd = 0, -1
        self.reaped = False  # its exit status collected (no zombie)
        if hasattr(os, "posix_spawnp"):
            read, write = os.pipe()  # both close-on-exec; dup2 makes the child's stdout plain
            try:
                self.pid = os.posix_spawnp(
                    args[0],
                    args,
                    env,
                    file_actions=[
                        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                        (os.POSIX_SPAWN_DUP2, write, 1),
                        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                    ],
                )
            except BaseException:
                os.close(read)
                raise
            finally:
                os.close(write)
            self.fd = read
        else:
            import subprocess

            self.proc = subprocess.Popen(
                args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
            )

    def output(self, timeout_s: float = TIMEOUT_S) -> bytes | None:
        """Its stdout when it exits 0 within `timeout_s`; else None (and it is killed)."""
        if self.proc is not None:
            import subprocess

            try:
                out, _ = self.proc.communicate(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.communicate()
                return None
            return out if self.proc.returncode == 0 else None
        import select
        import time

        deadline = time.monotonic() + timeout_s
        chunks: list[bytes] = []
        size, finished = 0, False
        try:
            while size <= MAX_OUTPUT:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                    break
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    finished = True
                    break
                chunks.append(chunk)
                size += len(chunk)
        finally:
            os.close(self.fd)
            self.fd = -1  # its number may be another file's from now on
        if not finished:
            os.kill(self.pid, 9)  # SIGKILL, without importing signal
        _, status = os.waitpid(self.pid, 0)
        self.reaped = True
        if not finished or os.waitstatus_to_exitcode(status) != 0:
            return None
        return b"".join(chunks)

    def discard(self) -> None:
        """Stop and reap the process if its output was never read: a long-lived caller (the
        MCP server) must leave no zombie behind. Nothing once `output` ran."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            return
        if not self.pid or self.reaped:
            return
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        try:  # noqa: SIM105 (contextlib would cost a hook process its import)
            os.kill(self.pid, 9)
        except OSError:  # it ended already
            pass
        os.waitpid(self.pid, 0)
        self.reaped = True


def output(root: str, *args: str) -> str | None:
    """What `git -C root ARGS` prints, or None when it fails or takes too long."""
    try:
        out = Running(["git", "-C", root, *args]).output()
    except OSError:
        return None
    return None if out is None else out.decode("utf-8", "replace")


def is_repo(root: str) -> bool:
    return os.path.exists(os.path.join(root, ".git"))


def dirty(root: str) -> dict[str, str] | None:
    """Changed and untracked paths mapped to a cheap signature (status, size, mtime), so two
    snapshots differ when a dirty file changes again."""
    return finish_dirty(start_dirty(root), root)


def start_dirty(root: str | None) -> Running | None:
    """Start `git status` now and read it later (`finish_dirty`): a hook works meanwhile."""
    if not root or not is_repo(root):
        return None
    try:
        return Running(
            ["git", "-C", root, "status", "--porcelain=v1", "-z", "--untracked-files=normal"]
        )
    except OSError:
        return None


def finish_dirty(proc: Running | None, root: str | None) -> dict[str, str] | None:
    if proc is None or root is None:
        return None
    out = proc.output()
    if out is None:
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
    out = output(root, "log", "--oneline", "--no-decorate", f"-{limit}", f"{since}..HEAD")
    return None if out is None else [line for line in out.splitlines() if line.strip()]


def branch(root: str | None) -> str | None:
    """The branch checked out at `root`, read from HEAD (no git process); None when detached
    or not cheaply known."""
    from waymark.projects.locate import git_branch

    return _read_refs(git_branch, root)


def head(root: str | None) -> str | None:
    """The commit checked out at `root`, read from the refs (no git process); None when not
    cheaply known."""
    from waymark.projects.locate import git_head

    return _read_refs(git_head, root)


def _read_refs(read: Callable[[str], str | None], root: str | None) -> str | None:
    if not root:
        return None
    try:
        return read(root)
    except Exception:  # an odd repository layout: nothing known, no problem
        return None


def applies_to_head(root: str, patch: bytes, *, reverse: bool = False) -> bool:
    """True when `patch` (made with no context lines, `diff -U0`) applies to HEAD's tree
    (checked on a scratch index: the user's own is never touched): HEAD holds every line the
    patch removes (`reverse`: every line it adds), wherever they moved."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="waymark-git-") as scratch:
        env = {**os.environ, "GIT_INDEX_FILE": os.path.join(scratch, "index")}
        try:
            read = subprocess.run(["git", "-C", root, "read-tree", "HEAD"], env=env,
                                  capture_output=True, timeout=TIMEOUT_S)  # fmt: skip
            if read.returncode != 0:
                return False
            args = ["apply", "--check", "--cached", "--unidiff-zero", *(["-R"] if reverse else [])]
            done = subprocess.run(["git", "-C", root, *args, "-"],
                                  input=patch, env=env, capture_output=True,
                                  timeout=TIMEOUT_S)  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return False
    return done.returncode == 0
