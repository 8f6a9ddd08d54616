"""`waymark` ends its process without tearing the interpreter down (`cli.entry`): the exit
code, every byte of output, other threads and exit handlers must all be as Python's own exit
leaves them."""

from __future__ import annotations

import subprocess
import sys

import pytest


def entry_with(body: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """Run `cli.entry()` in a fresh process, its `main` replaced by `body` (a function body
    returning the command's code), as the launcher runs it."""
    code = (
        "import atexit, sys, threading, time\n"
        "from waymark import cli\n"
        "def main():\n" + "".join(f"    {line}\n" for line in body.splitlines()) +
        "cli.main = main\n"
        "cli.entry()\n"
    )  # fmt: skip
    return subprocess.run([sys.executable, "-I", "-c", code, *argv], capture_output=True,
                          text=True, timeout=60)  # fmt: skip


def test_every_byte_written_reaches_the_reader():
    done = entry_with("sys.stdout.write('x' * 2_000_000)\nsys.stderr.write('e' * 70_000)\nreturn 0")
    assert done.returncode == 0
    assert len(done.stdout) == 2_000_000 and len(done.stderr) == 70_000


@pytest.mark.parametrize(
    ("body", "status", "err"),
    [
        ("return 0", 0, ""),
        ("return 1", 1, ""),
        ("return 141", 141, ""),
        ("sys.exit(2)", 2, ""),  # argparse's usage errors
        ("sys.exit(None)", 0, ""),  # argparse's --help
        ("sys.exit('waymark: gone')", 1, "waymark: gone\n"),
    ],
)
def test_the_exit_status_is_what_sys_exit_would_give(body, status, err):
    done = entry_with(body)
    assert (done.returncode, done.stderr) == (status, err)


def test_exit_handlers_and_other_threads_finish_first():
    body = (
        "atexit.register(lambda: print('handler ran', flush=True))\n"
        "def late():\n"
        "    time.sleep(0.2)\n"
        "    print('thread done', flush=True)\n"
        "threading.Thread(target=late).start()\n"
        "return 3"
    )
    done = entry_with(body)
    assert done.returncode == 3
    assert done.stdout == "thread done\nhandler ran\n"


def test_the_real_command_exits_with_its_code(repo):
    ok = subprocess.run([sys.executable, "-m", "waymark", "--version"], capture_output=True,
                        text=True, cwd=repo, timeout=60)  # fmt: skip
    assert ok.returncode == 0 and ok.stdout.startswith("waymark ")
    refused = subprocess.run([sys.executable, "-m", "waymark", "show", "nope"],
                             capture_output=True, text=True, cwd=repo, timeout=60)  # fmt: skip
    assert refused.returncode == 1 and refused.stderr.startswith("waymark: ")
    usage = subprocess.run([sys.executable, "-m", "waymark", "list", "--limit", "0"],
                           capture_output=True, text=True, cwd=repo, timeout=60)  # fmt: skip
    assert usage.returncode == 2
    helped = subprocess.run([sys.executable, "-m", "waymark", "list", "--help"],
                            capture_output=True, text=True, cwd=repo, timeout=60)  # fmt: skip
    assert helped.returncode == 0 and "usage: waymark list" in helped.stdout
