"""Claude Code's and Codex's own memory: imported read-only with the source recorded,
re-imported idempotently; packets leave out what CLAUDE.md, AGENTS.md or MEMORY.md already
say; doctor and status report it."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib

import pytest

from test_hooks import context_of, hook, payload, remember
from waymark.cli import main
from waymark.data import native
from waymark.projects.native import claude_slug


@pytest.fixture
def clients_home(tmp_path, monkeypatch):
    claude = tmp_path / "claude-config"
    codex = tmp_path / "codex-home"
    claude.mkdir()
    codex.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    return claude, codex


def claude_memory(claude, repo) -> os.PathLike[str]:
    folder = claude / "projects" / claude_slug(str(repo)) / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text(
        "# Memory index\n"
        "- [Testing](feedback_testing.md) - how tests are run\n"
        "- The staging database is refreshed every Monday night\n",
        encoding="utf-8",
    )
    (folder / "feedback_testing.md").write_text(
        "---\nname: Testing\ndescription: how tests are run\ntype: feedback\n---\n"
        "Run the integration tests against a real database, never mocks.\n",
        encoding="utf-8",
    )
    return folder


def snapshot(folder) -> dict[str, str]:
    return {
        p: hashlib.sha256(pathlib.Path(folder, p).read_bytes()).hexdigest()
        for p in sorted(os.listdir(folder))
    }


def test_claude_memory_imports_read_only_once_and_again_only_what_changed(
    conn, repo, clients_home, monkeypatch, capsys
):
    folder = claude_memory(clients_home[0], repo)
    before = snapshot(folder)
    monkeypatch.chdir(repo)
    assert main(["import", "--from", "claude-memory", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert (first["created"], first["folder"]) == (2, str(folder))
    rows = conn.execute(
        "SELECT type, title, content, source_ref, tags FROM memories ORDER BY key"
    ).fetchall()
    assert rows[0][0] == "note" and "refreshed every Monday" in rows[0][2]
    assert rows[1][:2] == ("preference", "Testing")
    assert rows[1][3] == str(folder / "feedback_testing.md")
    assert all("claude-memory" in r[4] for r in rows)
    assert main(["import", "--from", "claude-memory", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert (again["created"], again["unchanged"]) == (0, 2)
    (folder / "feedback_testing.md").write_text(
        "---\nname: Testing\ntype: feedback\n---\nUse the real database; mocks hid a bug.\n"
    )
    assert main(["import", "--from", "claude-memory", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["superseded"] == 1
    assert snapshot(folder) != before  # only because the test edited it...
    assert set(snapshot(folder)) == set(before)  # ...Waymark wrote nothing there
    assert main(["status", "--json"]) == 0
    imported = json.loads(capsys.readouterr().out)["imported"]
    assert imported["claude-memory"] == {"memories": 2, "folder": str(folder)}


def test_codex_memories_import_by_section(conn, repo, clients_home, monkeypatch, capsys):
    folder = clients_home[1] / "memories"
    (folder / "rollout_summaries").mkdir(parents=True)
    (folder / "memory_summary.md").write_text(
        "## User preferences\n- Prefers small PRs\n\n## General Tips\n- Run make lint first\n"
    )
    (folder / "MEMORY.md").write_text("# Task group: billing\nrefunds live in billing/refund.py\n")
    (folder / "rollout_summaries" / "x.md").write_text("evidence, not imported")
    monkeypatch.chdir(repo)
    assert main(["import", "--from", "codex-memories", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["created"] == 3
    titles = {r[0] for r in conn.execute("SELECT title FROM memories")}
    assert titles == {"User preferences", "General Tips", "Task group: billing"}
    assert main(["import", "--from", "codex-memories", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unchanged"] == 3


def test_a_rule_claude_md_already_states_is_left_out_of_the_packet(
    conn, enabled, repo, clients_home
):
    said = remember(conn, enabled, "Always run make lint before committing", type="convention",
                    pinned=True)  # fmt: skip
    kept = remember(conn, enabled, "Money is integer cents", type="convention", pinned=True)
    (repo / "CLAUDE.md").write_text("# Rules\n\n- Always run `make lint` before committing.\n")
    text = context_of(hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo))))
    assert kept.id in text and said.id not in text
    assert "1 more already in CLAUDE.md, AGENTS.md or MEMORY.md" in text


def test_a_fact_in_claude_codes_memory_index_is_not_repeated_at_the_prompt(
    conn, enabled, repo, clients_home
):
    claude_memory(clients_home[0], repo)
    fact = remember(conn, enabled, "The staging database is refreshed every Monday night",
                    type="fact", scope="file", target="src/pkg/core.py")  # fmt: skip
    ask = payload("claude-code", "UserPromptSubmit", cwd=str(repo),
                  prompt="why is src/pkg/core.py failing")  # fmt: skip
    done = hook("UserPromptSubmit", ask)
    assert fact.id.encode() not in done.stdout


def test_doctor_says_whether_each_clients_memory_is_on(repo, clients_home, monkeypatch):
    claude, codex = clients_home
    claude_memory(claude, repo)
    (codex / "config.toml").write_text("[features]\nmemories = true\n")
    from waymark.health.doctor import native_memory

    found = {f["check"]: f for f in native_memory(str(repo))}
    assert found["claude-code native memory"]["detail"].startswith("on; 2 file(s)")
    assert "--from claude-memory" in found["claude-code native memory"]["fix"]
    assert found["codex native memory"]["detail"].startswith("on")
    (claude / "settings.json").write_text(json.dumps({"autoMemoryEnabled": False}))
    (codex / "config.toml").write_text("[features]\nmemories = false\n")
    found = {f["check"]: f for f in native_memory(str(repo))}
    assert found["claude-code native memory"]["detail"].startswith("off")
    assert found["codex native memory"]["detail"].startswith("off")
    assert native.native_state(None)["claude-code"]["folder"] is None
