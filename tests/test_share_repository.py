"""Memory in the repository: `waymark share export` writes one deterministic file per shared
memory into `.waymark/memories/`; `waymark share import` on another machine applies what a
pull brought (new, superseded, archived), conflicts as candidates; a memory the redactor
flags blocks the export whole. Two data homes (two machines) over one real git repository,
the CLI as a user runs it."""

from __future__ import annotations

import json

import pytest

from waymark.cli import main
from waymark.storage import connection as db


def cli(capsys, *args: str, code: int = 0) -> dict:
    capsys.readouterr()
    assert main([*args, "--json"]) == code
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def shared(repo, monkeypatch):
    monkeypatch.chdir(repo)
    (repo / ".waymark.toml").write_text("[repository]\nshare = true\n")
    return repo


def machine(monkeypatch, tmp_path, name: str) -> None:
    monkeypatch.setenv("WAYMARK_HOME", str(tmp_path / name))


def files_of(repo) -> dict[str, str]:
    folder = repo / ".waymark" / "memories"
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.json"))}


def test_export_then_import_on_another_machine_carries_new_superseded_and_archived(
    shared, capsys, monkeypatch, tmp_path
):
    machine(monkeypatch, tmp_path, "a")
    keep = cli(capsys, "remember", "--type", "decision", "--content", "Queues are Celery")
    gone = cli(capsys, "remember", "--type", "fact", "--content", "Staging is on host s1")
    mine = cli(capsys, "remember", "--content", "my own shortcut", "--personal")
    done = cli(capsys, "share", "export")
    assert (done["written"], done["personal"]) == (2, 1)
    written = files_of(shared)
    assert set(written) == {f"{keep['memory']['id']}.json", f"{gone['memory']['id']}.json"}
    assert f"{mine['memory']['id']}.json" not in written  # personal: never leaves
    one = json.loads(written[f"{keep['memory']['id']}.json"])
    assert list(one) == sorted(one) and "session_id" not in one and "project_id" not in one
    assert cli(capsys, "share", "export")["written"] == 0  # the same bytes: nothing to write
    assert files_of(shared) == written

    machine(monkeypatch, tmp_path, "b")
    got = cli(capsys, "share", "import")
    assert (got["read"], got["applied"]) == (2, 2)
    shown = cli(capsys, "show", keep["memory"]["id"])
    assert shown["content"] == "Queues are Celery" and shown["status"] == "active"
    assert cli(capsys, "share", "import")["applied"] == 0  # a second pull: nothing new

    machine(monkeypatch, tmp_path, "a")
    new = cli(capsys, "supersede", keep["memory"]["id"], "--content", "Queues are RQ now")
    cli(capsys, "archive", gone["memory"]["id"], "--reason", "host retired")
    assert cli(capsys, "share", "export")["written"] == 3  # the new one and two changed
    machine(monkeypatch, tmp_path, "b")
    got = cli(capsys, "share", "import")
    assert (got["applied"], got["unchanged"]) == (2, 1)  # the new one took the old one's place
    assert cli(capsys, "show", keep["memory"]["id"])["status"] == "superseded"
    assert cli(capsys, "show", new["memory"]["id"])["content"] == "Queues are RQ now"
    assert cli(capsys, "show", gone["memory"]["id"])["status"] == "archived"


def test_two_revisions_of_one_memory_meet_as_a_conflict_for_review(
    shared, capsys, monkeypatch, tmp_path
):
    machine(monkeypatch, tmp_path, "a")
    base = cli(capsys, "remember", "--type", "decision", "--content", "Deploys on Fridays")
    cli(capsys, "share", "export")
    machine(monkeypatch, tmp_path, "b")
    cli(capsys, "share", "import")
    machine(monkeypatch, tmp_path, "a")
    cli(capsys, "supersede", base["memory"]["id"], "--content", "Deploys on Tuesdays")
    cli(capsys, "share", "export")
    machine(monkeypatch, tmp_path, "b")
    cli(capsys, "supersede", base["memory"]["id"], "--content", "Deploys on Thursdays")
    got = cli(capsys, "share", "import")
    assert got["conflict"] + got["overtaken"] == 1 and got["conflicted"]
    waiting = cli(capsys, "candidates", "--kind", "conflict")["results"]
    assert len(waiting) == 1 and "Deploys on" in waiting[0]["fields"]["content"]


def test_a_flagged_memory_blocks_the_export_whole_and_it_needs_the_opt_in(
    shared, capsys, monkeypatch, tmp_path
):
    machine(monkeypatch, tmp_path, "a")
    token = "ghp_" + "Z1y2X3w4V5u6T7s8R9q0P1o2N3m4L5k6J7i8"
    cli(capsys, "remember", "--content", "A plain fact to share")
    flagged = cli(capsys, "remember", "--content", f"the deploy token is {token}")
    said = cli(capsys, "share", "export", code=1)
    assert said["code"] == "secret_refused" and flagged["memory"]["id"] in said["message"]
    assert not (shared / ".waymark" / "memories").exists()  # nothing written
    cli(capsys, "supersede", flagged["memory"]["id"], "--content", "the token is in the vault")
    assert cli(capsys, "share", "export")["written"] == 3  # both, and the edited one's state
    assert token not in "".join(files_of(shared).values())
    (shared / ".waymark.toml").write_text("")
    said = cli(capsys, "share", "export", code=1)
    assert "[repository]" in said["message"] and "share = true" in said["message"]


def test_a_broken_file_applies_nothing_and_says_which(shared, capsys, monkeypatch, tmp_path):
    machine(monkeypatch, tmp_path, "a")
    cli(capsys, "remember", "--content", "One good memory")
    cli(capsys, "share", "export")
    (shared / ".waymark" / "memories" / "broken.json").write_text("{not json")
    machine(monkeypatch, tmp_path, "b")
    said = cli(capsys, "share", "import", code=1)
    assert "broken.json" in said["message"] and "nothing was applied" in said["message"]
    conn = db.connect()
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
    conn.close()


def test_two_clones_exchange_memories_through_a_commit_and_a_merge(tmp_path, capsys, monkeypatch):
    import subprocess

    from conftest import git_env

    env = git_env(tmp_path)

    def git(where, *args: str) -> str:
        done = subprocess.run(["git", "-C", str(where), *args], env=env, check=True,
                              capture_output=True, text=True)  # fmt: skip
        return done.stdout

    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], env=env, check=True)
    seed = tmp_path / "seed"
    subprocess.run(["git", "clone", "-q", str(origin), str(seed)], env=env, check=True)
    (seed / ".waymark.toml").write_text("[repository]\nshare = true\n")
    git(seed, "add", "-A")
    git(seed, "commit", "-qm", "opt in")
    git(seed, "push", "-q", "origin", "HEAD:main")
    one, two = tmp_path / "one", tmp_path / "two"
    for clone in (one, two):
        subprocess.run(["git", "clone", "-q", str(origin), str(clone)], env=env, check=True)

    def at(clone, home: str) -> None:
        monkeypatch.chdir(clone)
        machine(monkeypatch, tmp_path, home)

    at(one, "a")
    base = cli(capsys, "remember", "--type", "decision", "--content", "Releases are cut on Mondays")
    cli(capsys, "share", "export")
    git(one, "add", ".waymark")
    git(one, "commit", "-qm", "share memories")
    git(one, "push", "-q", "origin", "HEAD:main")
    at(two, "b")
    git(two, "pull", "-q", "--no-rebase", "origin", "main")
    assert cli(capsys, "share", "import")["applied"] == 1
    # Both revise the same memory and add one of their own, each on their clone.
    cli(capsys, "supersede", base["memory"]["id"], "--content", "Releases are cut on Tuesdays")
    theirs = cli(capsys, "remember", "--content", "Staging resets nightly at 02:00")
    cli(capsys, "share", "export")
    git(two, "add", ".waymark")
    git(two, "commit", "-qm", "two's memories")
    git(two, "push", "-q", "origin", "HEAD:main")
    at(one, "a")
    cli(capsys, "supersede", base["memory"]["id"], "--content", "Releases are cut on Wednesdays")
    cli(capsys, "share", "export")
    git(one, "add", ".waymark")
    git(one, "commit", "-qm", "one's memories")
    git(one, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")  # a real merge: clean
    assert "Merge" in git(one, "log", "-1", "--format=%s")
    assert not git(one, "diff", "--name-only", "--diff-filter=U")
    got = cli(capsys, "share", "import")
    assert (
        cli(capsys, "show", theirs["memory"]["id"])["content"] == "Staging resets nightly at 02:00"
    )
    assert got["conflict"] + got["overtaken"] == 1  # two revisions of one memory: reviewed
    assert len(cli(capsys, "candidates", "--kind", "conflict")["results"]) == 1
