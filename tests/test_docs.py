"""The README and docs/ are part of the product: their commands must be the real ones, the
reference pages what the code says, and the site must build."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).parents[1]


def readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def doc(name: str) -> str:
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def test_ci_runs_the_readmes_test_command_verbatim():
    blocks = re.findall(r"```bash\n(.*?)```", readme(), re.S)
    test_command = next(b.strip() for b in blocks if "pytest" in b)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test_command in ci


def test_readme_starts_with_the_install_command():
    blocks = re.findall(r"```bash\n(.*?)```", readme(), re.S)
    assert blocks[0].strip() == "./install.sh"
    assert (ROOT / "install.sh").stat().st_mode & 0o111


def test_changelog_has_an_unreleased_section():
    assert "## [Unreleased]" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def test_the_docs_document_every_mcp_tool():
    import asyncio

    from mcp import Client

    from waymark.server.app import build_server

    server, state = build_server()

    async def names():
        async with Client(server) as client:
            return [t.name for t in (await client.list_tools()).tools]

    try:
        tools = asyncio.run(names())
    finally:
        state.close()
    assert len(tools) <= 8
    for name in tools:
        assert f"| `{name}` |" in doc("sessions.md"), name


def test_every_picture_the_readme_shows_is_in_the_repository():
    pictures = re.findall(r"!\[[^\]]+\]\(([^)]+)\)", readme())
    assert "docs/images/overview.png" in pictures
    for picture in pictures:
        data = (ROOT / picture).read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000, picture


def test_the_readme_fits_on_a_few_screens_and_its_links_lead_somewhere():
    lines = readme().splitlines()
    assert len(lines) <= 250, f"README.md is {len(lines)} lines; guides belong in docs/"
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme())
    assert any(link.startswith("docs/") for link in links)
    for link in links:
        if "://" not in link:
            assert (ROOT / link).exists(), link


def test_the_reference_pages_are_what_the_code_says():
    done = subprocess.run([sys.executable, str(ROOT / ".ci" / "docs"), "--check"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_the_site_builds_strict(tmp_path):
    """A broken link, a missing anchor or a page left out of mkdocs.yml's nav fails it."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env=env)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").exists()


def test_troubleshooting_has_an_entry_for_every_error_code_and_every_doctor_check():
    from waymark import errors

    page = doc("troubleshooting.md")
    codes = {c.code for c in vars(errors).values()
             if isinstance(c, type) and issubclass(c, errors.WaymarkError)}  # fmt: skip
    missing = [code for code in sorted(codes) if f"### `{code}`" not in page]
    assert missing == [], "error codes without an entry"
    sources = [*(ROOT / "src" / "waymark").rglob("*.py"), *(ROOT / "installers").glob("*.py")]
    checks = set()
    for path in sources:
        for name in re.findall(r'finding\(\s*f?"([^"]+)"', path.read_text(encoding="utf-8")):
            name = name.replace("{client}", "CLIENT")
            if re.search(r"[a-z]", re.sub(r"\{[^}]*\}|CLIENT", "", name)):
                checks.add(name)
    checks |= {"claude-code prompt hook", "claude-code hook chain", "opencode hooks"}
    assert len(checks) >= 18
    missing = [name for name in sorted(checks) if f"### {name}\n" not in page]
    assert missing == [], "doctor checks without an entry"


def test_every_command_is_in_a_guide():
    from waymark.cli.table import COMMANDS

    guides = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md"))
    missing = [name for name, _, _ in COMMANDS if f"waymark {name}" not in guides]
    assert missing == [], "commands no guide mentions"
