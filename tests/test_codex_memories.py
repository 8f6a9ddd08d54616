"""Codex's own memories get Waymark's rules and decisions through its extension folder
(`$CODEX_HOME/memories/extensions/waymark/`): opt-in, only where Codex's memories are on,
kept current at each session's end (hooks as real processes), and what Codex's summary
carries is not repeated in a Codex packet."""

from __future__ import annotations

import io
import json

import pytest

from test_hooks import context_of, hook, payload, remember
from waymark.cli import main
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.packets import codex_memories


@pytest.fixture
def codex(tmp_path, monkeypatch, repo):
    """A CODEX_HOME with memories on, the commands run in the project."""
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text('model = "o3"\n\n[features]\nmemories = true\n')
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.chdir(repo)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    return home


def end_session(repo, session: str, client: str = "codex") -> None:
    hook("SessionStart", payload(client, "SessionStart", cwd=str(repo), session_id=session), client)
    done = hook("SessionEnd", payload(client, "SessionEnd", cwd=str(repo), session_id=session),
                client)  # fmt: skip
    assert done.returncode == 0


def run(capsys, *argv: str) -> tuple[int, dict]:
    capsys.readouterr()  # what earlier commands said
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_off_by_default_and_refused_until_both_are_on(conn, enabled, repo, codex, capsys):
    remember(conn, enabled, "Money is integer cents", type="convention", pinned=True)
    end_session(repo, "c1")
    assert not (codex / "memories").exists()  # nothing written unless asked for
    code, said = run(capsys, "export", "--to", "codex-memories")
    assert code != 0 and "codex.memories_extension true" in said["message"]
    assert main(["config", "codex.memories_extension", "true"]) == 0
    (codex / "config.toml").write_text('model = "o3"\n')  # Codex's memories off
    capsys.readouterr()
    code, said = run(capsys, "export", "--to", "codex-memories")
    assert code != 0 and "[features] memories = true" in said["message"]
    assert not (codex / "memories").exists()


def test_each_sessions_end_keeps_the_projects_rules_and_decisions_current(
    conn, enabled, repo, codex, capsys
):
    rule = remember(conn, enabled, "Money is integer cents, never floats", type="convention",
                    pinned=True)  # fmt: skip
    old = remember(conn, enabled, "We chose Postgres for the store", type="decision")
    assert main(["config", "codex.memories_extension", "true"]) == 0
    end_session(repo, "c1")
    folder = codex / "memories" / "extensions" / "waymark"
    assert (folder / "instructions.md").read_text() == codex_memories.INSTRUCTIONS
    (resource,) = (folder / "resources").iterdir()
    text = resource.read_text()
    assert f"cwd: {repo}" in text
    assert f"Money is integer cents, never floats (waymark:{rule.id})" in text
    assert f"We chose Postgres for the store (waymark:{old.id})" in text
    assert resource.name.endswith(".md") and not resource.name[:4].isdigit()  # never pruned
    assert oct(resource.stat().st_mode)[-3:] == "600"
    written = resource.stat().st_mtime_ns
    end_session(repo, "c2")  # nothing changed: nothing written
    assert resource.stat().st_mtime_ns == written
    new = store.supersede(conn, enabled, old.id, make_draft(
        enabled, type="decision", content="We chose SQLite for the store")).memory  # fmt: skip
    end_session(repo, "c3", client="claude-code")  # any client's session end
    text = resource.read_text()
    assert f"(waymark:{new.id})" in text and old.id not in text
    code, said = run(capsys, "export", "--to", "codex-memories")
    assert code == 0 and said["unchanged"] == 1 and said["written"] == []
    assert main(["config", "codex.memories_extension", "false"]) == 0
    end_session(repo, "c4")
    assert not folder.exists() and (codex / "memories").exists()


def test_what_codexs_summary_carries_a_codex_packet_does_not_repeat(conn, enabled, repo, codex):
    carried = remember(conn, enabled, "We chose SQLite over Postgres for the store",
                       type="decision")  # fmt: skip
    fresh = remember(conn, enabled, "We render charts on the server as SVG", type="decision")
    summary = codex / "memories" / "memory_summary.md"
    summary.parent.mkdir(parents=True)
    summary.write_text(f"v1\n\n- The store is SQLite, not Postgres (waymark:{carried.id})\n")
    start = payload("codex", "SessionStart", cwd=str(repo), session_id="d1")
    said = context_of(hook("SessionStart", start, "codex"))
    assert fresh.id in said and carried.id not in said
    claude = payload("claude-code", "SessionStart", cwd=str(repo), session_id="d2")
    said = context_of(hook("SessionStart", claude))
    assert fresh.id in said and carried.id in said  # Claude Code never reads Codex's memories


def test_all_projects_at_once(conn, enabled, repo, codex, capsys, tmp_path):
    from waymark.projects.resolve import resolve

    other_root = tmp_path / "other"
    other_root.mkdir()
    other = resolve(conn, str(other_root))
    remember(conn, enabled, "Money is integer cents", type="convention", pinned=True)
    remember(conn, other, "We deploy on Fridays only after noon", type="decision")
    assert main(["config", "codex.memories_extension", "true"]) == 0
    capsys.readouterr()
    code, said = run(capsys, "export", "--to", "codex-memories", "--all")
    assert code == 0 and len(said["written"]) == 2
    names = sorted(p.name for p in (codex / "memories/extensions/waymark/resources").iterdir())
    assert len(names) == 2 and any(n.startswith("other-") for n in names)
