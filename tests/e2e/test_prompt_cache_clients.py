"""The provider's prompt cache with Waymark in real Claude Code and Codex sessions (scripted
stub model): bench/prompt_cache.py's session of three prompts (the second and third resume
the first) with reads, edits, a command that failed before, a subagent and saves, every hook
saying something. Each request repeats the previous request of its conversation whole from
its start (bench/cache_prefix.py), resuming included: Waymark never makes the cache start
over."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import cache_prefix  # noqa: E402
import prompt_cache  # noqa: E402


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_waymark_never_breaks_the_prompt_cache(clients, client, tmp_path):
    runs = prompt_cache.session(client, tmp_path, waymark=True)["runs"]
    found = prompt_cache.measured(runs)
    assert found["pairs"] >= 12 and found["resume"]["pairs"] == 2, found
    assert found["appends"] == found["pairs"] and not found["breaks"], found
    assert found["resume"]["appends"] == 2, found
    # and Waymark did speak at every point the cache could have broken
    last = json.dumps(runs[-1][-1])
    for kind in ("session-start", "prompt", "tool", "failure"):
        assert f'waymark-memory kind=\\"{kind}\\"' in last, kind
    assert last.count('kind=\\"session-start\\"') == 1  # resuming added no second one
    assert all(cache_prefix.MARK in json.dumps(run[-1]) for run in runs)
