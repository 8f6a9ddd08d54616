"""What a release ships: one version everywhere, a wheel and an sdist that build without a
warning and carry every file Waymark reads, and a wheel that `uv tool install` and `pipx
install` put in a fresh environment from which `waymark install` connects a client and
`waymark doctor` speaks to its server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from waymark import __version__

ROOT = Path(__file__).parents[1]
DIST = "waymark-agent-memory"
BIN = Path(sys.executable).parent
posix_only = pytest.mark.skipif(os.name != "posix", reason="the tool folders are POSIX paths")


def test_one_version_everywhere():
    for manifest in ("plugin/.claude-plugin/plugin.json", "plugin/.codex-plugin/plugin.json"):
        assert json.loads((ROOT / manifest).read_text(encoding="utf-8"))["version"] == __version__
    market = json.loads((ROOT / ".claude-plugin/marketplace.json").read_text(encoding="utf-8"))
    assert market["metadata"]["version"] == __version__
    assert {p["version"] for p in market["plugins"]} == {__version__}
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert (
        f'name = "{DIST}"' in pyproject
        and 'version = { attr = "waymark.__version__" }' in pyproject
    )
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[([^\]]+)\]", changelog, re.M)
    assert releases[:2] == ["Unreleased", __version__], releases[:3]


def test_the_version_names_the_commit_in_a_checkout():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "waymark", "--version"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert done.stdout.strip() == f"waymark {__version__} (commit {head})"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The wheel and the sdist, as `python -m build` makes them, and what it printed."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "-o", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    wheel = next(out.glob("*.whl"))
    sdist = next(out.glob("*.tar.gz"))
    return wheel, sdist, done.stdout + done.stderr


def test_the_build_has_no_warning_and_carries_every_file_waymark_reads(built):
    wheel, sdist, said = built
    assert wheel.name == f"waymark_agent_memory-{__version__}-py3-none-any.whl"
    noisy = [line for line in said.splitlines()
             if "WARNING" in line or "Deprecat" in line or "is absent from" in line]  # fmt: skip
    assert not noisy, noisy
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        metadata = z.read(f"waymark_agent_memory-{__version__}.dist-info/METADATA").decode()
    for path in (
        "waymark/web/templates/base.html",
        "waymark/web/static/style.css",
        "waymark/web/static/feed.js",
        "waymark/server/handshake.json",
        "waymark/hooks/stop.py",
        "waymark/installers/claude.py",
        f"waymark_agent_memory-{__version__}.data/data/share/waymark/templates/instructions.md",
    ):
        assert path in names, path
    assert f"Name: {DIST}\n" in metadata and f"Version: {__version__}\n" in metadata
    for extra in ("semantic", "team"):
        assert f"Provides-Extra: {extra}\n" in metadata
    with tarfile.open(sdist) as t:
        inside = {name.split("/", 1)[1] for name in t.getnames() if "/" in name}
    for path in ("templates/instructions.md", "src/waymark/web/templates/base.html",
                 "hooks/stop.py", "installers/claude.py", "pyproject.toml"):  # fmt: skip
        assert path in inside, path


def installed_by(tool: str, wheel: Path, where: Path) -> Path:
    """Install `wheel` with `tool` into folders under `where`; the `waymark` it puts on PATH.
    The locked versions are its constraints (the caches stay the user's, for speed)."""
    lock = str(ROOT / "requirements" / "install.txt")
    env = dict(os.environ)
    if tool == "uv":
        env.update(UV_TOOL_DIR=str(where / "tools"), UV_TOOL_BIN_DIR=str(where / "bin"))
        argv = [str(BIN / "uv"), "tool", "install", "--quiet", "--constraints", lock, str(wheel)]
    else:
        env.update(PIPX_HOME=str(where / "pipx"), PIPX_BIN_DIR=str(where / "bin"),
                   PIPX_MAN_DIR=str(where / "man"))  # fmt: skip
        argv = [str(BIN / "pipx"), "install", f"--pip-args=-c {lock}", str(wheel)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return where / "bin" / "waymark"


@posix_only
@pytest.mark.parametrize("tool", ["uv", "pipx"])
def test_the_wheel_installs_as_a_tool_and_connects_a_client(built, tool, tmp_path):
    waymark = installed_by(tool, built[0], tmp_path / tool)
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("WAYMARK_", "CLAUDE_", "CODEX_", "XDG_", "VIRTUAL_ENV"))}  # fmt: skip
    env.update(HOME=str(home), PATH=f"{waymark.parent}:/usr/bin:/bin")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(waymark), *args], env=env, cwd=home, capture_output=True,
                              text=True, timeout=300)  # fmt: skip

    assert run("--version").stdout.strip() == f"waymark {__version__}"
    assert run("install", "--client", "claude-code").returncode == 0
    python = json.loads((home / ".claude.json").read_text())["mcpServers"]["waymark"]["command"]
    assert Path(python).parent == Path(os.path.realpath(waymark)).parent  # the tool's own env
    doctor = json.loads(run("doctor", "--json").stdout)
    found = {f["check"]: f for f in doctor["findings"]}
    assert found["claude-code mcp"]["status"] == "ok", found["claude-code mcp"]
    assert "tools/call hook" in found["claude-code mcp"]["detail"]
