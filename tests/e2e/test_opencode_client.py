"""The real opencode CLI reads the config `waymark install --client opencode` writes and
connects to Waymark's MCP server. `.ci/run` installs the pinned CLI (tests/tools/opencode);
WAYMARK_OPENCODE_BIN names it. Without it this test skips, saying why.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from waymark.cli import main

BIN = os.environ.get("WAYMARK_OPENCODE_BIN", "")


def test_opencode_connects_to_the_server_waymark_install_registered(tmp_path: Path, repo, capsys):
    if not BIN or not Path(BIN).is_file():
        pytest.skip("WAYMARK_OPENCODE_BIN is not set to the opencode CLI (see .ci/run)")
    home = tmp_path / "home"
    config = tmp_path / "config"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(config),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "XDG_STATE_HOME": str(tmp_path / "state"), "OPENCODE_DISABLE_AUTOUPDATE": "1"}  # fmt: skip
    old = {k: os.environ.get(k) for k in ("HOME", "XDG_CONFIG_HOME")}
    os.environ.update(HOME=str(home), XDG_CONFIG_HOME=str(config))
    try:
        assert main(["install", "--client", "opencode"]) == 0
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    assert (config / "opencode" / "opencode.json").is_file()
    listed = subprocess.run([BIN, "mcp", "list"], cwd=repo, env=env, capture_output=True,
                            text=True, timeout=120)  # fmt: skip
    out = listed.stdout + listed.stderr
    assert "waymark" in out and "connected" in out, out
    assert f"{sys.executable} -m waymark mcp" in out
