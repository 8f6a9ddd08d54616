"""This Waymark's version as `waymark --version` and the diagnostics bundle say it."""

from __future__ import annotations

import os

from waymark import __version__


def text() -> str:
    """This Waymark's version, and its commit where the code runs from a git checkout (an
    editable install, the clone itself): `0.2.0 (commit 1a2b3c4)`; a wheel says `0.2.0`."""
    import subprocess

    here = os.path.dirname(os.path.realpath(__file__))
    try:
        done = subprocess.run(
            ["git", "-C", here, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return __version__
    commit = done.stdout.strip()
    return f"{__version__} (commit {commit})" if done.returncode == 0 and commit else __version__
