"""The README is part of the product: its commands must be the real ones."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).parents[1]


def readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


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


def test_readme_documents_every_mcp_tool():
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
        assert f"| `{name}` |" in readme(), name


def test_every_picture_the_readme_shows_is_in_the_repository():
    pictures = re.findall(r"!\[[^\]]+\]\(([^)]+)\)", readme())
    assert "tests/screenshots/overview.png" in pictures
    for picture in pictures:
        data = (ROOT / picture).read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000, picture
