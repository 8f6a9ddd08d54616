"""Skills learned from work: numbered steps in a checkpoint or memory, and a command sequence
that made a failing check pass, become skill candidates (never active without review);
approved, PreToolUse names the skill in one line when its trigger matches. Hooks as real
processes, the CLI as a user runs it."""

from __future__ import annotations

import json

from test_hooks import hook, payload
from waymark.cli import main
from waymark.curation import skills
from waymark.handoff import checkpoints
from waymark.memories import store
from waymark.memories.draft import make_draft

STEPS = """How we cut a release:
1. Bump the version in `pyproject.toml`
2. Run `make changelog`
3. Run `pytest -q` until it passes
4. Tag with `git tag vX.Y` and push
"""


def cli(capsys, *args: str) -> dict:
    capsys.readouterr()
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_numbered_steps_are_found_and_short_lists_are_not():
    assert skills.steps_in(STEPS) == [
        "Bump the version in `pyproject.toml`", "Run `make changelog`",
        "Run `pytest -q` until it passes", "Tag with `git tag vX.Y` and push",
    ]  # fmt: skip
    assert skills.steps_in("Step 1: build\nStep 2: test\nStep 3: ship") == ["build", "test", "ship"]
    assert skills.steps_in("1. one\n2. two") == []  # two steps are no procedure
    trigger = skills.trigger_of(skills.steps_in(STEPS))
    assert trigger == {"commands": ["make changelog", "pytest", "git tag"],
                       "paths": ["pyproject.toml"]}  # fmt: skip
    assert skills.validation_of(skills.steps_in(STEPS)) == "`pytest -q` passes"


def test_a_memorys_steps_become_a_candidate_then_a_skill_named_before_its_command(
    conn, enabled, repo, capsys, monkeypatch
):
    monkeypatch.chdir(repo)
    store.remember(conn, enabled, make_draft(enabled, type="note", content=STEPS))
    found = cli(capsys, "skills", "extract")["candidates"]
    assert len(found) == 1 and found[0]["source"].startswith("memory ")
    assert cli(capsys, "skills", "extract")["candidates"] == found  # waits, never twice
    assert cli(capsys, "skills")["skills"] == []  # not active without review
    cli(capsys, "review", found[0]["id"], "--approve")
    (skill,) = cli(capsys, "skills")["skills"]
    assert skill["title"].startswith("Skill: ") and "Check: `pytest -q` passes" in skill["content"]
    assert {"make changelog", "pytest", "pyproject.toml"} <= set(skill["trigger"])
    pre = payload("claude-code", "PreToolUse-bash", cwd=str(repo), session_id="k1")
    pre["tool_input"] = {"command": "make changelog VERSION=1.2"}
    done = hook("PreToolUse", pre)
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "## A skill for this" in text and f"id {skill['id']}" in text
    assert hook("PreToolUse", pre).stdout == b""  # once a session
    other = payload("claude-code", "PreToolUse-bash", cwd=str(repo), session_id="k2")
    other["tool_input"] = {"command": "make lint"}
    assert b"A skill for this" not in hook("PreToolUse", other).stdout


def test_a_fix_sequence_and_a_checkpoints_steps_are_proposed(conn, enabled, repo, capsys,
                                                            monkeypatch):  # fmt: skip
    monkeypatch.chdir(repo)
    checkpoints.create(conn, enabled, {"objective": "Migrate the billing tables",
                                       "next_action": STEPS})  # fmt: skip

    def bash(command: str, error: str | None = None) -> None:
        if error:
            data = payload("claude-code", "PostToolUseFailure", cwd=str(repo), session_id="f1")
            data.update(tool_input={"command": command}, error=f"Exit code 1\n{error}")
            assert hook("PostToolUseFailure", data).returncode == 0
            return
        data = payload("claude-code", "PostToolUse-bash", cwd=str(repo), session_id="f1")
        data["tool_input"] = {"command": command}
        assert hook("PostToolUse", data).returncode == 0

    bash("pytest tests/test_db.py", "E   sqlite3.OperationalError: no such table: invoices")
    bash("alembic upgrade head")
    bash("pytest tests/test_db.py")
    end = payload("claude-code", "SessionEnd", cwd=str(repo), session_id="f1")
    assert hook("SessionEnd", end).returncode == 0  # SessionEnd proposes them
    waiting = [c for c in cli(capsys, "candidates")["results"] if c["kind"] == "skill"]
    by_title = {c["fields"]["title"]: c for c in waiting}
    fix = by_title["Skill: make `pytest` pass"]
    assert "1. run `alembic upgrade head`. 2. rerun `pytest tests/test_db.py`." in (
        fix["fields"]["content"])  # fmt: skip
    assert (
        "the error `pytest: OperationalError: no such table: invoices`" in fix["fields"]["content"]
    )
    assert "Skill: Migrate the billing tables" in by_title
