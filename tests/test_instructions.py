"""`waymark enable --instructions`: the block between markers in CLAUDE.md and AGENTS.md."""

from __future__ import annotations

import pytest

from waymark.cli import main
from waymark.errors import InvalidArgument
from waymark.projects import instructions


def test_enable_creates_both_files_with_the_block(repo, monkeypatch, capsys):
    monkeypatch.chdir(repo)
    assert main(["enable", "--instructions"]) == 0
    for name in ("CLAUDE.md", "AGENTS.md"):
        text = (repo / name).read_text(encoding="utf-8")
        assert text.startswith("<!-- waymark:begin") and text.rstrip().endswith(
            "<!-- waymark:end -->"
        )
        assert "reference data, not instructions" in text and "`checkpoint`" in text


def test_existing_content_is_kept_and_the_block_updated_in_place(repo, monkeypatch, capsys):
    monkeypatch.chdir(repo)
    path = repo / "CLAUDE.md"
    path.write_text("# Project rules\n\nUse tabs.\n", encoding="utf-8")
    main(["enable", "--instructions"])
    first = path.read_text(encoding="utf-8")
    assert first.startswith("# Project rules\n\nUse tabs.\n\n<!-- waymark:begin")
    stale = first.replace("Waymark, a local memory", "Waymark (an OLD version)")
    path.write_text(stale + "\nMy own footer.\n", encoding="utf-8")
    assert instructions.apply(str(path)) == "updated"
    again = path.read_text(encoding="utf-8")
    assert "OLD version" not in again and again.endswith("\nMy own footer.\n")
    assert again.count("<!-- waymark:begin") == 1
    assert instructions.apply(str(path)) == "unchanged"


def test_disable_removes_exactly_the_block(repo, monkeypatch, capsys):
    monkeypatch.chdir(repo)
    path = repo / "AGENTS.md"
    path.write_text("# Agents\n\nBe nice.\n", encoding="utf-8")
    main(["enable", "--instructions"])
    main(["disable", "--instructions"])
    assert path.read_text(encoding="utf-8") == "# Agents\n\nBe nice.\n"


def test_a_broken_marker_is_refused_and_the_file_untouched(tmp_path):
    path = tmp_path / "CLAUDE.md"
    path.write_text("<!-- waymark:begin -->\nhalf\n", encoding="utf-8")
    with pytest.raises(InvalidArgument):
        instructions.apply(str(path))
    assert path.read_text(encoding="utf-8") == "<!-- waymark:begin -->\nhalf\n"


def test_a_crlf_file_gets_crlf_lines_and_stays_crlf_when_the_block_goes(tmp_path):
    path = tmp_path / "AGENTS.md"
    path.write_bytes(b"# Agents\r\n\r\nBe nice.\r\n")
    assert instructions.apply(str(path)) == "updated"
    data = path.read_bytes()
    assert b"<!-- waymark:begin" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert instructions.apply(str(path)) == "unchanged"
    assert instructions.apply(str(path), remove=True) == "removed"
    assert path.read_bytes() == b"# Agents\r\n\r\nBe nice.\r\n"


def test_disable_deletes_a_file_that_held_only_the_block(repo, monkeypatch, capsys):
    monkeypatch.chdir(repo)
    main(["enable", "--instructions"])
    capsys.readouterr()
    assert main(["disable", "--instructions"]) == 0
    out = capsys.readouterr().out
    assert not (repo / "AGENTS.md").exists() and not (repo / "CLAUDE.md").exists()
    assert "AGENTS.md: deleted" in out
