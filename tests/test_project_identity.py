"""A project is its repository, wherever the folder goes: moved or renamed repositories keep
their memories, a later `.waymark.toml` keeps them too, clones are offered (never guessed),
and commands that only read never create a project."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import git_env
from waymark.base import launch

PY = sys.executable


def cli(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "waymark", *args], cwd=cwd, capture_output=True, text=True)


def ok(*args: str, cwd) -> dict:
    done = cli(*args, "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


def projects(cwd) -> list[dict]:
    return ok("project", "list", cwd=cwd)["projects"]


def run_hook(module: str, cwd, payload: dict) -> subprocess.CompletedProcess:
    done = subprocess.run(
        launch.argv(PY, module, "claude-code"),
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=cwd,
    )
    assert done.returncode == 0
    return done


def session_start(cwd, session: str) -> str:
    payload = {
        "session_id": session,
        "cwd": str(cwd),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    done = run_hook("session_start", cwd, payload)
    if not done.stdout:
        return ""
    return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def new_repo(path, tmp_path):
    env = git_env(tmp_path)
    subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "init", "-q", str(path)], check=True, env=env
    )
    (path / "app.py").write_text("print('hi')\n")
    subprocess.run(["git", "-C", str(path), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(path), "commit", "-qm", "init"], check=True, env=env)
    return path


@pytest.fixture
def old(tmp_path):
    return new_repo(tmp_path / "old-name", tmp_path)


def test_a_moved_repository_keeps_its_memories_and_the_next_packet_says_so_once(old, tmp_path):
    ok("remember", "--type", "convention", "--pinned", "--content", "Tabs, not spaces", cwd=old)
    ok("enable", cwd=old)
    before = projects(tmp_path)
    moved = tmp_path / "elsewhere" / "new-name"
    moved.parent.mkdir()
    shutil.move(str(old), str(moved))

    first = session_start(moved, "after-move-1")
    assert "moved from" in first and str(moved) in first and "Tabs, not spaces" in first
    second = session_start(moved, "after-move-2")
    assert "moved from" not in second and "Tabs, not spaces" in second
    listed = ok("list", cwd=moved)["results"]
    assert [m["content"] for m in listed] == ["Tabs, not spaces"]
    after = projects(tmp_path)
    assert [p["id"] for p in after] == [p["id"] for p in before]  # the same project
    assert after[0]["root"] == str(moved.resolve())


def test_a_renamed_plain_folder_keeps_its_memories(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    ok("remember", "--content", "kept across a rename", cwd=folder)
    renamed = tmp_path / "notes-renamed"
    folder.rename(renamed)
    assert [m["content"] for m in ok("list", cwd=renamed)["results"]] == ["kept across a rename"]


def test_a_waymark_toml_added_later_keeps_the_memories(old, tmp_path):
    ok("remember", "--content", "recorded before the name", cwd=old)
    (old / ".waymark.toml").write_text('name = "shop"\n')
    assert ok("project", cwd=old)["name"] == "shop"
    assert [m["content"] for m in ok("list", cwd=old)["results"]] == ["recorded before the name"]
    assert [(p["kind"], p["name"]) for p in projects(tmp_path)] == [("named", "shop")]
    ok("enable", cwd=old)
    assert "now named 'shop'" in session_start(old, "named-2")


def test_a_clone_is_offered_never_guessed_and_rebind_brings_the_memories(old, tmp_path):
    ok("remember", "--content", "from the first clone", cwd=old)
    clone = tmp_path / "second-clone"
    subprocess.run(["git", "clone", "-q", str(old), str(clone)], check=True, env=git_env(tmp_path))
    original = projects(tmp_path)[0]

    status = cli("status", cwd=clone)
    assert status.returncode == 0
    assert "not a Waymark project yet" in status.stdout
    assert f"waymark project rebind --to {original['id']}" in status.stdout
    doctor = json.loads(cli("doctor", "--json", cwd=clone).stdout)  # unhealthy: no clients
    found = {f["check"]: f for f in doctor["findings"]}
    assert found["project"]["status"] == "warn"
    assert f"rebind --to {original['id']}" in found["project"]["fix"]
    assert len(projects(tmp_path)) == 1  # reading created nothing

    done = ok("project", "rebind", "--to", original["id"][:8].lower(), cwd=clone)
    assert done["changed"] and done["previous_root"] == str(old.resolve())
    assert [m["content"] for m in ok("list", cwd=clone)["results"]] == ["from the first clone"]


def test_rebind_refuses_to_drop_a_project_that_holds_memories(old, tmp_path):
    other = new_repo(tmp_path / "other", tmp_path)
    ok("remember", "--content", "a", cwd=old)
    ok("remember", "--content", "b", cwd=other)
    target = ok("project", cwd=old)["id"]
    refused = cli("project", "rebind", "--to", target, "--json", cwd=other)
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["code"] == "conflict"
    assert [m["content"] for m in ok("list", cwd=other)["results"]] == ["b"]


def test_remove_asks_for_yes_backs_up_and_deletes_everything_of_the_project(
    old, tmp_path, waymark_home
):
    other = new_repo(tmp_path / "other", tmp_path)
    ok("remember", "--content", "to be removed", cwd=old)
    ok("checkpoint", "create", "--objective", "o", "--next-action", "n", cwd=old)
    ok("remember", "--content", "stays", cwd=other)
    target = ok("project", cwd=old)["id"]
    refused = cli("project", "remove", target, "--json", cwd=tmp_path)
    assert refused.returncode == 1 and "--yes" in json.loads(refused.stdout)["message"]
    assert len(projects(tmp_path)) == 2
    done = ok("project", "remove", target, "--yes", cwd=tmp_path)
    assert os.path.exists(done["backup"])
    assert done["deleted"]["memories"] == 1 and done["deleted"]["checkpoints"] == 1
    assert [p["root"] for p in projects(tmp_path)] == [str(other.resolve())]
    assert [m["content"] for m in ok("list", cwd=other)["results"]] == ["stays"]


def test_two_candidates_are_never_guessed(old, tmp_path):
    env = git_env(tmp_path)
    twin, third = tmp_path / "twin", tmp_path / "third"
    for clone in (twin, third):
        subprocess.run(["git", "clone", "-q", str(old), str(clone)], check=True, env=env)
    ok("remember", "--content", "first", cwd=old)
    ok("remember", "--content", "second", cwd=twin)
    before = projects(tmp_path)
    shutil.rmtree(old)
    shutil.rmtree(twin)
    # Both gone projects share the third clone's first commit: which one is it? Not guessed.
    assert ok("list", cwd=third)["results"] == []
    assert [(p["id"], p["root"]) for p in projects(tmp_path)] == [
        (p["id"], p["root"]) for p in before
    ]


def test_read_commands_never_create_a_project(old, tmp_path, waymark_home):
    ok("remember", "--content", "somewhere else", cwd=tmp_path / "old-name")
    fresh = new_repo(tmp_path / "fresh", tmp_path)
    before = projects(tmp_path)
    for args in (
        ("status",),
        ("project",),
        ("list",),
        ("recall", "anything"),
        ("checkpoint",),
        ("export", "--out", "-"),
        ("list", "--project", "no-such-name"),
        ("status", "--project", "typo"),
        ("recall", "x", "--project", "typo"),
    ):
        cli(*args, cwd=fresh)
    assert projects(tmp_path) == before
    mistyped = cli("list", "--project", "no-such-name", "--json", cwd=fresh)
    assert mistyped.returncode == 1 and json.loads(mistyped.stdout)["code"] == "not_found"


def test_a_named_git_repository_still_captures_and_guards(old):
    (old / ".waymark.toml").write_text(
        'name = "shop"\n[guard]\nask_commands = ["terraform apply*"]\n', encoding="utf-8"
    )
    ok("remember", "--type", "convention", "--pinned", "--content", "Tabs, not spaces", cwd=old)
    status = ok("status", cwd=old)
    assert status["capture"]["mode"] == "on", status["capture"]
    assert "Tabs, not spaces" in session_start(old, "named-capture")
    payload = {
        "session_id": "named-capture",
        "cwd": str(old),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "terraform apply -auto-approve"},
    }
    done = run_hook("pre_tool_use", old, payload)
    decision = json.loads(done.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "ask"


def test_a_named_projects_directory_stays_its_alias_without_the_file(old, tmp_path):
    (old / ".waymark.toml").write_text('name = "shop"\n', encoding="utf-8")
    ok("remember", "--content", "recorded under the name", cwd=old)
    (old / ".waymark.toml").unlink()  # a branch without the file, or the file removed
    found = ok("project", cwd=old)
    assert found["name"] == "shop" and 'add `name = "shop"`' in found["how"]
    assert [m["content"] for m in ok("list", cwd=old)["results"]] == ["recorded under the name"]
    ok("remember", "--content", "written after the file went", cwd=old)
    assert [(p["kind"], p["name"], p["memories"]) for p in projects(tmp_path)] == [
        ("named", "shop", 2)
    ]
    assert ok("status", cwd=old)["capture"]["mode"] == "on"


def test_a_clone_without_the_file_is_told_where_the_memories_are(old, tmp_path):
    (old / ".waymark.toml").write_text('name = "shop"\n', encoding="utf-8")
    ok("remember", "--content", "recorded under the name", cwd=old)
    clone = tmp_path / "clone-without-file"
    subprocess.run(["git", "clone", "-q", str(old), str(clone)], check=True, env=git_env(tmp_path))
    status = cli("status", cwd=clone)
    assert status.returncode == 0
    assert "this repository's memories are under 'shop' (1 memory)" in status.stdout
    assert 'add `name = "shop"` to .waymark.toml' in status.stdout


def test_a_named_project_can_be_renamed_and_its_old_name_still_finds_it(old, tmp_path):
    (old / ".waymark.toml").write_text('name = "shop"\n', encoding="utf-8")
    ok("remember", "--content", "kept across the rename", cwd=old)
    done = ok("project", "rename", "shop", "store", cwd=old)
    assert done["changed"] and done["previous"] == "shop"
    assert [(p["kind"], p["name"]) for p in projects(tmp_path)] == [("named", "store")]
    # The file still says "shop": the old name is an alias, nothing splits.
    assert [m["content"] for m in ok("list", cwd=old)["results"]] == ["kept across the rename"]
    (old / ".waymark.toml").write_text('name = "store"\n', encoding="utf-8")
    assert ok("project", cwd=old)["name"] == "store"
    taken = cli("project", "rename", "store", "bad name!", "--json", cwd=old)
    assert taken.returncode == 1 and json.loads(taken.stdout)["code"] == "invalid_argument"


def test_renaming_onto_a_name_with_memories_is_refused(old, tmp_path):
    other = new_repo(tmp_path / "other", tmp_path)
    (other / ".waymark.toml").write_text('name = "taken"\n', encoding="utf-8")
    ok("remember", "--content", "the other's", cwd=other)
    ok("remember", "--content", "mine", cwd=old)
    refused = cli("project", "rename", ".", "taken", "--json", cwd=old)
    assert refused.returncode == 1 and json.loads(refused.stdout)["code"] == "conflict"


def test_two_unrelated_repositories_named_alike_are_told_they_share_memories(old, tmp_path):
    """A second repository (other first commits) whose .waymark.toml takes a name already in
    use shares that project's memories: the next session is told, once, with what to do; a
    clone of the first is not an accident and says nothing."""
    (old / ".waymark.toml").write_text('name = "app"\n', encoding="utf-8")
    ok("enable", cwd=old)
    ok("remember", "--content", "the first app's memory", cwd=old)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(old), str(clone)], check=True, env=git_env(tmp_path))
    ok("list", cwd=clone)
    assert "not a clone" not in session_start(clone, "c0")
    other = tmp_path / "other-app"  # another history: not the same first commit
    env = git_env(tmp_path)
    subprocess.run(["git", "init", "-q", str(other)], check=True, env=env)
    (other / "main.go").write_text("package main\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(other), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(other), "commit", "-qm", "go"], check=True, env=env)
    (other / ".waymark.toml").write_text('name = "app"\n', encoding="utf-8")
    ok("list", cwd=other)
    said = session_start(other, "o1")
    assert "is another repository (not a clone" in said and str(other) in said
    assert "give one of them another name" in said
    assert "not a clone" not in session_start(other, "o2")  # said once
    events = ok("log", "--op", "project.name_shared", cwd=other)["events"]
    assert [e["detail"]["root"] for e in events] == [str(other)]


def test_an_empty_folder_outside_git_is_not_listed_unless_asked(old, tmp_path):
    """A plain folder where a command once ran (so a project row exists) holds nothing: the
    list leaves it out and says so; `--all` shows it; one that holds a memory is listed."""
    from conftest import call_tool

    plain = tmp_path / "downloads"
    plain.mkdir()
    assert not call_tool(plain, "status", {}).is_error  # a client's agent asked here
    ok("remember", "--content", "a real project's memory", cwd=old)
    listed = ok("project", "list", cwd=tmp_path)
    assert [p["root"] for p in listed["projects"]] == [str(old)]
    assert listed["hidden_empty_folders"] == 1
    assert (
        "1 empty folder outside git not shown: --all" in cli("project", "list", cwd=tmp_path).stdout
    )
    everything = ok("project", "list", "--all", cwd=tmp_path)["projects"]
    assert sorted(p["root"] for p in everything) == sorted([str(old), str(plain)])
    ok("remember", "--content", "notes kept in a plain folder", cwd=plain)
    assert len(ok("project", "list", cwd=tmp_path)["projects"]) == 2  # it holds one now
