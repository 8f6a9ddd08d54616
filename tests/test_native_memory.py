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
from waymark.data import client_memory
from waymark.projects.client_files import claude_slug


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


def imports(*args: str, capsys) -> dict:
    assert main(["import", "--from", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_claude_memory_is_proposed_read_only_and_again_only_what_changed(
    conn, repo, clients_home, monkeypatch, capsys
):
    folder = claude_memory(clients_home[0], repo)
    before = snapshot(folder)
    monkeypatch.chdir(repo)
    first = imports("claude-memory", capsys=capsys)
    assert (first["proposed"], first["folder"]) == (2, str(folder))
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0  # none active yet
    assert imports("claude-memory", capsys=capsys)["waiting"] == 2  # not proposed twice
    done = imports("claude-memory", "--approve", capsys=capsys)
    assert (done["proposed"], done["approved"]) == (0, 2)
    rows = conn.execute(
        "SELECT type, title, content, source_ref, tags FROM memories ORDER BY key"
    ).fetchall()
    assert rows[0][0] == "note" and "refreshed every Monday" in rows[0][2]
    assert rows[1][:2] == ("preference", "Testing")
    assert rows[1][3] == str(folder / "feedback_testing.md")
    assert all("claude-memory" in r[4] for r in rows)
    again = imports("claude-memory", capsys=capsys)
    assert (again["proposed"], again["unchanged"]) == (0, 2)
    (folder / "feedback_testing.md").write_text(
        "---\nname: Testing\ntype: feedback\n---\nUse the real database; mocks hid a bug.\n"
    )
    changed = imports("claude-memory", capsys=capsys)
    assert (changed["proposed"], changed["unchanged"]) == (1, 1)
    (folder / "feedback_testing.md").write_text(
        "---\nname: Testing\ntype: feedback\n---\nUse the real database: mocks hid two bugs.\n"
    )
    assert imports("claude-memory", capsys=capsys)["withdrawn"] == 1  # the older text is gone
    assert main(["candidates", "--kind", "import", "--json"]) == 0
    (waiting,) = json.loads(capsys.readouterr().out)["results"]
    assert waiting["action"] == "supersede" and "two bugs" in waiting["fields"]["content"]
    assert main(["review", waiting["id"], "--approve", "--json"]) == 0
    approved = json.loads(capsys.readouterr().out)
    old = conn.execute("SELECT status FROM memories WHERE id = ?", (waiting["sources"][0],))
    assert old.fetchone()[0] == "superseded"
    assert "two bugs" in approved["memory"]["content"]
    assert snapshot(folder) != before  # only because the test edited it...
    assert set(snapshot(folder)) == set(before)  # ...Waymark wrote nothing there
    assert main(["status", "--json"]) == 0
    imported = json.loads(capsys.readouterr().out)["imported"]
    assert imported["claude-memory"] == {"memories": 2, "folder": str(folder)}


def test_a_rejected_import_is_not_proposed_again_until_its_source_changes(
    conn, repo, clients_home, monkeypatch, capsys
):
    folder = claude_memory(clients_home[0], repo)
    monkeypatch.chdir(repo)
    imports("claude-memory", capsys=capsys)
    assert main(["candidates", "--json"]) == 0
    for c in json.loads(capsys.readouterr().out)["results"]:
        assert main(["review", c["id"], "--reject", "--reason", "not for Waymark"]) == 0
    capsys.readouterr()
    again = imports("claude-memory", capsys=capsys)
    assert (again["proposed"], again["rejected_before"]) == (0, 2)
    (folder / "feedback_testing.md").write_text("---\nname: Testing\n---\nNew advice.\n")
    assert imports("claude-memory", capsys=capsys)["proposed"] == 1


def test_an_index_line_is_never_a_memory_and_a_removed_source_proposes_its_archive(
    conn, repo, clients_home, monkeypatch, capsys
):
    folder = claude_memory(clients_home[0], repo)
    monkeypatch.chdir(repo)
    assert imports("claude-memory", "--approve", capsys=capsys)["approved"] == 2
    (folder / "feedback_testing.md").unlink()  # the topic file is deleted; its line stays
    again = imports("claude-memory", capsys=capsys)
    assert (again["proposed"], again["source_gone"]) == (0, 1)  # no candidate of the line
    assert main(["candidates", "--kind", "import", "--json"]) == 0
    (waiting,) = json.loads(capsys.readouterr().out)["results"]
    assert waiting["action"] == "archive" and "its source is gone" in waiting["reason"]
    (gone,) = waiting["sources"]
    assert conn.execute("SELECT title FROM memories WHERE id = ?", (gone,)).fetchone()[0] == (
        "Testing"
    )
    assert imports("claude-memory", capsys=capsys)["source_gone"] == 1  # one candidate, still
    assert main(["candidates", "--kind", "import", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["results"]) == 1
    assert main(["review", waiting["id"], "--approve", "--json"]) == 0
    capsys.readouterr()
    status = conn.execute("SELECT status FROM memories WHERE id = ?", (gone,)).fetchone()[0]
    assert status == "archived"


def test_codex_memories_import_by_section(conn, repo, clients_home, monkeypatch, capsys):
    folder = clients_home[1] / "memories"
    (folder / "rollout_summaries").mkdir(parents=True)
    (folder / "memory_summary.md").write_text(
        "## User preferences\n- Prefers small PRs\n\n## General Tips\n- Run make lint first\n"
    )
    (folder / "MEMORY.md").write_text("# Task group: billing\nrefunds live in billing/refund.py\n")
    (folder / "rollout_summaries" / "x.md").write_text("evidence, not imported")
    monkeypatch.chdir(repo)
    assert imports("codex-memories", "--approve", capsys=capsys)["approved"] == 3
    titles = {r[0] for r in conn.execute("SELECT title FROM memories")}
    assert titles == {"User preferences", "General Tips", "Task group: billing"}
    assert imports("codex-memories", capsys=capsys)["unchanged"] == 3


def test_a_rule_claude_md_already_states_is_left_out_of_the_packet(
    conn, enabled, repo, clients_home
):
    said = remember(conn, enabled, "Always run make lint before committing", type="convention",
                    pinned=True)  # fmt: skip
    kept = remember(conn, enabled, "Money is integer cents", type="convention", pinned=True)
    (repo / "CLAUDE.md").write_text("# Rules\n\n- Always run `make lint` before committing.\n")
    text = context_of(hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo))))
    assert kept.id in text and said.id not in text
    assert "1 more already in CLAUDE.md or MEMORY.md" in text


def test_a_rule_only_one_clients_file_states_is_left_out_only_for_that_client(
    conn, enabled, repo, clients_home
):
    in_claude = remember(conn, enabled, "Always run make lint before committing",
                         type="convention", pinned=True)  # fmt: skip
    in_agents = remember(conn, enabled, "Never push straight to the main branch",
                         type="convention", pinned=True)  # fmt: skip
    (repo / "CLAUDE.md").write_text("- Always run `make lint` before committing.\n")
    (repo / "AGENTS.md").write_text("- Never push straight to the main branch.\n")
    claude = context_of(hook("SessionStart", payload("claude-code", "SessionStart",
                                                     cwd=str(repo), session_id="c1")))  # fmt: skip
    codex = context_of(hook("SessionStart", payload("codex", "SessionStart", cwd=str(repo),
                                                    session_id="x1"), "codex"))  # fmt: skip
    assert in_claude.id not in claude and in_agents.id in claude
    assert in_agents.id not in codex and in_claude.id in codex
    assert "1 more already in AGENTS.md" in codex


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
    assert client_memory.native_state(None)["claude-code"]["folder"] is None
