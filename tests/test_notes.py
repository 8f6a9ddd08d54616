"""The repository's notes as knowledge: sections split by heading, indexed with path,
heading path, lines and SHA-256, recalled cited `path#heading (lines)`, RECHECK when the file
changed, never copied into memories; the CLI as a user runs it, in a real git repository."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import git_env
from waymark.cli import main
from waymark.knowledge import notes

ADR = """# ADR 3: Background jobs

## Context
Webhook retries piled up in the web workers.

## Decision
All background work goes through Celery queues, never threads in web workers.

```
# not a heading: inside a fence
```

## Consequences
Workers scale apart from the web tier.
"""


@pytest.fixture
def docs(repo, tmp_path, monkeypatch):
    monkeypatch.chdir(repo)
    (repo / "docs" / "adr").mkdir(parents=True)
    (repo / "docs" / "adr" / "0003-jobs.md").write_text(ADR, encoding="utf-8")
    (repo / "CONTRIBUTING.md").write_text("# Contributing\n\nRun `make lint` first.\n")
    (repo / "CLAUDE.md").write_text("# Claude\n\nThe client loads this itself.\n")
    (repo / "src" / "notes.md").write_text("# Not configured\n\nOutside the globs.\n")
    env = git_env(tmp_path)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "docs"], check=True, env=env)
    return repo


def cli(capsys, *args: str) -> dict:
    capsys.readouterr()
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_sections_by_heading_with_paths_lines_and_hashes():
    sections = notes.split(ADR)
    assert [(h, a, b) for h, a, b, _ in sections] == [
        ("ADR 3: Background jobs > Context", 3, 5),
        ("ADR 3: Background jobs > Decision", 6, 12),
        ("ADR 3: Background jobs > Consequences", 13, 14),
    ]
    assert "not a heading" in sections[1][3]  # a fenced `#` line stays in its section


def test_refresh_indexes_the_configured_files_and_recall_cites_a_section(
    conn, enabled, docs, capsys
):
    done = cli(capsys, "notes", "refresh")
    assert (done["files"], done["added"]) == (2, 2)  # the ADR and CONTRIBUTING, not CLAUDE.md
    listed = {f["path"] for f in cli(capsys, "notes", "list")["files"]}
    assert listed == {"docs/adr/0003-jobs.md", "CONTRIBUTING.md"}
    found = cli(capsys, "recall", "should background work use celery queues or threads",
                "--lexical")["notes"]  # fmt: skip
    assert (
        found[0]["cite"] == "docs/adr/0003-jobs.md#ADR 3: Background jobs > Decision (lines 6-12)"
    )
    assert found[0]["state"] == "FRESH" and "Celery" in found[0]["snippet"]
    # Never copied into memories.
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
    capsys.readouterr()
    assert main(["recall", "celery queues background", "--lexical"]) == 0
    assert "note: docs/adr/0003-jobs.md#ADR 3: Background jobs > Decision (lines 6-12)" in (
        capsys.readouterr().out)  # fmt: skip


def test_a_changed_file_is_recheck_until_refreshed_and_a_second_refresh_reads_nothing(
    conn, enabled, docs, capsys
):
    cli(capsys, "notes", "refresh")
    again = cli(capsys, "notes", "refresh")
    assert (again["added"], again["changed"], again["unchanged"]) == (0, 0, 2)
    path = docs / "docs" / "adr" / "0003-jobs.md"
    path.write_text(ADR.replace("Celery queues", "RQ queues"), encoding="utf-8")
    (hit,) = [n for n in cli(capsys, "recall", "celery queues", "--lexical")["notes"]
              if "Decision" in n["cite"]]  # fmt: skip
    assert hit["state"] == "RECHECK"
    shown = cli(capsys, "notes", "show", "docs/adr/0003-jobs.md#Decision")["sections"]
    assert shown[0]["state"] == "RECHECK" and "RQ queues" in shown[0]["text"]  # the file now
    done = cli(capsys, "notes", "refresh")
    assert done["changed"] == 1
    assert cli(capsys, "recall", "celery", "--lexical")["notes"] == []
    path.unlink()
    assert cli(capsys, "notes", "refresh")["removed"] == 1


def test_knowledge_paths_in_the_project_config_choose_the_files(conn, enabled, docs, capsys):
    (docs / ".waymark.toml").write_text('[knowledge]\npaths = ["src/**/*.md"]\n')
    done = cli(capsys, "notes", "refresh")
    assert {f["path"] for f in cli(capsys, "notes", "list")["files"]} == {"src/notes.md"}
    assert done["removed"] == 0 and done["files"] == 1
    (docs / ".waymark.toml").write_text("[knowledge]\npaths = 3\n")
    capsys.readouterr()
    assert main(["notes", "refresh"]) != 0
    assert "[knowledge] paths must be a list of globs" in capsys.readouterr().err


def test_a_secret_in_a_note_is_redacted_in_the_index(conn, enabled, docs, capsys, tmp_path):
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    (docs / "docs" / "setup.md").write_text(f"# Setup\n\nexport GITHUB_TOKEN={token}\n")
    env = git_env(tmp_path)
    subprocess.run(["git", "-C", str(docs), "add", "-A"], check=True, env=env)
    cli(capsys, "notes", "refresh")
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    from waymark import home

    for path in __import__("pathlib").Path(home.data_home()).glob("waymark.db*"):
        assert token.encode() not in path.read_bytes()


SKILL = """---
name: deploy
description: Deploy the app to staging - build, migrate the database, smoke-test the API
---

# Deploy

1. make build
2. make migrate
"""


@pytest.fixture
def procedures(docs, tmp_path):
    (docs / ".claude" / "skills" / "deploy").mkdir(parents=True)
    (docs / ".claude" / "skills" / "deploy" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (docs / ".claude" / "agents").mkdir(parents=True)
    (docs / ".claude" / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: |\n  Reviews a diff for missing tests\n  and unsafe"
        " migrations\n---\nYou review diffs.\n", encoding="utf-8")  # fmt: skip
    (docs / "procedures").mkdir()
    (docs / "procedures" / "release.md").write_text(
        "# Release\n\nTag the version, push the tag, publish the wheel.\n", encoding="utf-8"
    )
    env = git_env(tmp_path)
    subprocess.run(["git", "-C", str(docs), "add", "-A"], check=True, env=env)
    return docs


def test_skills_agents_and_procedures_are_their_own_kind_with_their_trigger(
    conn, enabled, procedures, capsys
):
    cli(capsys, "notes", "refresh")
    kinds = {f["path"]: f["kind"] for f in cli(capsys, "notes", "list")["files"]}
    assert kinds[".claude/skills/deploy/SKILL.md"] == "skill"
    assert kinds[".claude/agents/reviewer.md"] == "agent"
    assert kinds["procedures/release.md"] == "procedure"
    assert kinds["docs/adr/0003-jobs.md"] == "note"
    found = cli(capsys, "recall", "deploy the app to staging", "--lexical")["notes"]
    (skill,) = [n for n in found if n["kind"] == "skill"]
    assert skill["heading"] == "deploy" and skill["cite"] == ".claude/skills/deploy/SKILL.md"
    assert skill["description"].startswith("Deploy the app to staging")
    (agent,) = [n for n in cli(capsys, "recall", "review the diff for unsafe migrations",
                               "--lexical")["notes"] if n["kind"] == "agent"]  # fmt: skip
    assert agent["description"] == "Reviews a diff for missing tests and unsafe migrations"
    release = notes.search(conn, enabled, "publish the wheel", 3, notes.ALL_KINDS)[0]
    assert (release["kind"], release["heading"]) == ("procedure", "release")
    assert release["description"] == "Tag the version, push the tag, publish the wheel."


def test_the_prompt_packet_names_the_procedure_that_applies_in_one_line_once(
    conn, enabled, procedures, capsys
):
    from test_hooks import hook, payload

    cli(capsys, "notes", "refresh")

    def ask(text: str) -> str:
        done = hook("UserPromptSubmit", payload("claude-code", "UserPromptSubmit",
                                                cwd=str(procedures), session_id="p1", prompt=text))  # fmt: skip
        assert done.returncode == 0, done.stderr
        return (
            json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
            if done.stdout
            else ""
        )

    said = ask("Please deploy to staging after the migrate step")
    line = next(x for x in said.splitlines() if x.startswith("- skill"))
    assert line.startswith(
        "- skill `deploy` applies (.claude/skills/deploy/SKILL.md): Deploy the app"
    )
    assert "deploy` applies" not in ask("deploy to staging again please")  # once a session
    assert "applies" not in ask("what a lovely day for lunch")


def test_a_vault_outside_the_repo_is_read_only_and_its_wiki_links_are_relations(
    conn, enabled, docs, capsys, tmp_path
):
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / ".obsidian" / "workspace.md").write_text("# not a note\n\nObsidian's own.\n")
    (vault / "Queues.md").write_text(
        "# Queues\n\nWe settled on Celery; see [[Retry policy]] and [[Workers|the workers]].\n"
    )
    (vault / "Retry policy.md").write_text("# Retry policy\n\nBack off exponentially, cap 1h.\n")
    (vault / "Workers.md").write_text("# Workers\n\nFour per host.\n")
    before = {p.name: p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    added = cli(capsys, "notes", "add", str(vault))
    assert added["folder"] == str(vault.resolve())
    done = cli(capsys, "notes", "refresh")
    assert done["added"] >= 3
    listed = cli(capsys, "notes", "list")
    assert str(vault.resolve()) in listed["folders"]
    assert not any(".obsidian" in f["path"] for f in listed["files"])
    (hit,) = [n for n in cli(capsys, "recall", "celery queues settled", "--lexical")["notes"]
              if n["path"].endswith("Queues.md")]  # fmt: skip
    assert sorted(c.split("#")[0].rsplit("/", 1)[-1] for c in hit["linked"]) == [
        "Retry policy.md", "Workers.md"]  # fmt: skip
    assert {p.name: p.read_bytes() for p in vault.rglob("*") if p.is_file()} == before
    capsys.readouterr()
    assert main(["notes", "add", str(docs / "docs")]) != 0  # inside the repo: its own globs
    assert "inside the repository" in capsys.readouterr().err
    cli(capsys, "notes", "remove", str(vault))
    assert cli(capsys, "notes", "refresh")["removed"] >= 3
