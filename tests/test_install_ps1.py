"""install.ps1 cannot run here (no PowerShell on Linux CI): it is parsed with a real PowerShell
grammar instead (tree-sitter-powershell, installed by .ci/run into .cache/ps1parse), so a
syntax error never ships. WAYMARK_PS1PARSE names another folder holding that install."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).parents[1]
PARSER = pathlib.Path(os.environ.get("WAYMARK_PS1PARSE", ROOT / ".cache" / "ps1parse"))


def parse(path: pathlib.Path) -> dict:
    if shutil.which("node") is None:
        pytest.skip("node is not installed (.ci/run needs it for these checks)")
    if not (PARSER / "node_modules" / "tree-sitter-powershell").is_dir():
        pytest.skip(f"no tree-sitter-powershell under {PARSER}: run .ci/run, or npm ci there")
    done = subprocess.run(
        ["node", str(PARSER / "parse.mjs"), str(path)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_install_ps1_parses_as_powershell():
    result = parse(ROOT / "install.ps1")
    assert result == {"ok": True, "root": "program", "errors": []}


def test_the_parser_does_catch_a_broken_script(tmp_path):
    broken = tmp_path / "broken.ps1"
    text = (ROOT / "install.ps1").read_text(encoding="utf-8")
    broken.write_text(text.replace(") {", " {", 1), encoding="utf-8")  # one lost parenthesis
    result = parse(broken)
    assert result["ok"] is False and result["errors"]
