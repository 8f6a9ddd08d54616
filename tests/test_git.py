"""The hooks' git runner: posix_spawn on POSIX, with the subprocess module's guarantees."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from waymark.projects import git


def test_output_of_a_command_that_succeeds(repo):
    out = git.Running(["git", "-C", str(repo), "rev-parse", "--show-toplevel"]).output()
    assert out is not None and os.path.samefile(out.decode().strip(), repo)


def test_a_failing_command_gives_none_and_leaves_no_zombie(tmp_path):
    run = git.Running(["git", "-C", str(tmp_path), "rev-parse", "HEAD"])  # not a repository
    assert run.output() is None
    if run.proc is None:
        with pytest.raises(ChildProcessError):
            os.waitpid(run.pid, os.WNOHANG)  # already reaped


def test_a_missing_program_raises_oserror_for_the_caller_to_catch():
    with pytest.raises(OSError):
        git.Running(["waymark-no-such-program-here"])


@pytest.mark.skipif(sys.platform == "win32", reason="uses sh")
def test_a_status_nobody_reads_is_stopped_and_reaped():
    run = git.Running(["sh", "-c", "sleep 30"])
    started = time.monotonic()
    run.discard()
    assert time.monotonic() - started < 5
    if run.proc is None:
        with pytest.raises(ChildProcessError):
            os.waitpid(run.pid, os.WNOHANG)  # reaped: no zombie left in a long-lived process
    run.discard()  # twice: nothing more to do
    done = git.Running(["sh", "-c", "echo ok"])
    assert done.output() == b"ok\n"
    done.discard()  # after its output was read: nothing to do


@pytest.mark.skipif(sys.platform == "win32", reason="uses sh")
def test_a_command_past_its_deadline_is_killed_and_gives_none():
    started = time.monotonic()
    run = git.Running(["sh", "-c", "echo started; sleep 30"])
    assert run.output(timeout_s=0.3) is None
    assert time.monotonic() - started < 5
    if run.proc is None:
        with pytest.raises(ProcessLookupError):
            os.kill(run.pid, 0)  # gone, and reaped


@pytest.mark.skipif(sys.platform == "win32", reason="uses sh")
def test_large_output_arrives_whole_and_stdin_is_not_inherited():
    run = git.Running(["sh", "-c", "head -c 3000000 /dev/zero; cat"])  # cat reads /dev/null
    out = run.output(timeout_s=10)
    assert out is not None and len(out) == 3_000_000


def test_dirty_and_commits_match_what_git_reports(repo):
    (repo / "new.txt").write_text("fresh\n", encoding="utf-8")
    (repo / "README.md").write_text("changed\n", encoding="utf-8")
    found = git.dirty(str(repo))
    assert found is not None and set(found) == {"new.txt", "README.md"}
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--max-parents=0", "HEAD"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert git.commits_since(str(repo), head) == []
