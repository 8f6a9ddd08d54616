"""Outcomes from git: a decision, lesson or checkpoint linked to its session's commits;
reverted (`git revert`, or the same lines restored) demotes and flags it, a change that held
for later commits boosts it; visible in `recall --explain`, reversible by hand, audited.

A real git repository, the session heads recorded by the hooks as real processes, the CLI as
a user runs it."""

from __future__ import annotations

import io
import json
import subprocess

import pytest

from conftest import git_env
from test_hooks import hook, payload
from waymark.cli import main
from waymark.handoff import checkpoints
from waymark.memories import store
from waymark.memories.draft import make_draft

DECISION = "Invoices are charged through the idempotent charge_once() path in billing"


@pytest.fixture
def git(repo, tmp_path):
    env = git_env(tmp_path)

    def run(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(repo), *args], env=env, check=True,
                              capture_output=True, text=True)  # fmt: skip
        return done.stdout.strip()

    return run


def commit(git, repo, path: str, text: str, message: str) -> str:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    git("add", "-A")
    git("commit", "-qm", message)
    return git("rev-parse", "HEAD")


def session(repo, name: str, work) -> None:
    """One session as the hooks see it: SessionStart records HEAD, `work` happens, SessionEnd
    records HEAD again."""
    start = payload("claude-code", "SessionStart", cwd=str(repo), session_id=name)
    assert hook("SessionStart", start).returncode == 0
    work()
    end = payload("claude-code", "SessionEnd", cwd=str(repo), session_id=name)
    assert hook("SessionEnd", end).returncode == 0


def cli(capsys, *args: str) -> dict:
    capsys.readouterr()
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def remember(conn, project, session_id: str, type_: str, content: str, target: str):
    draft = make_draft(project, type=type_, content=content, scope="file", target=target,
                       session_id=session_id, check_evidence=False)  # fmt: skip
    return store.remember(conn, project, draft).memory


@pytest.fixture
def worked(conn, enabled, repo, git, monkeypatch):
    """A decision whose change is later reverted, a lesson whose change holds."""
    monkeypatch.chdir(repo)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    commit(git, repo, "src/billing.py", "def charge():\n    return 1\n", "billing")
    commit(git, repo, "src/api.py", "def get():\n    return 1\n", "api")
    made = {}

    def decide():
        made["decision"] = remember(conn, enabled, "s1", "decision", DECISION, "src/billing.py")
        made["change"] = commit(git, repo, "src/billing.py",
                                "def charge_once():\n    return 1\n", "charge once")  # fmt: skip

    def learn():
        made["lesson"] = remember(conn, enabled, "s2", "lesson",
                                  "api.get must return an int, callers add it", "src/api.py")  # fmt: skip
        commit(git, repo, "src/api.py", "def get() -> int:\n    return 1\n", "typed get")

    session(repo, "s1", decide)
    session(repo, "s2", learn)
    for n in range(3):
        commit(git, repo, "src/api.py", f"def get() -> int:\n    return {n + 2}\n", f"api {n}")
    git("revert", "--no-edit", made["change"])
    made["revert"] = git("rev-parse", "HEAD")
    return made


def test_a_reverted_decision_is_flagged_and_demoted_and_a_held_lesson_boosted(
    conn, enabled, worked, capsys
):
    before = cli(capsys, "recall", "charge_once billing invoices", "--explain", "--lexical")
    (hit,) = [r for r in before["results"] if r["memory"]["id"] == worked["decision"].id]
    assert hit["explain"]["multipliers"]["outcome"] == 1.0 and "outcome" not in hit

    done = cli(capsys, "outcomes", "--refresh")
    by = {o["item_id"]: o for o in done["outcomes"]}
    d, lesson = by[worked["decision"].id], by[worked["lesson"].id]
    assert (d["state"], d["reverted_by"], d["commits"]) == (
        "reverted", worked["revert"], [worked["change"]])  # fmt: skip
    assert (lesson["state"], lesson["later"]) == ("held", 3)
    assert done["refreshed"]["changed"] == 2

    after = cli(capsys, "recall", "charge_once billing invoices", "--explain", "--lexical")
    (hit2,) = [r for r in after["results"] if r["memory"]["id"] == worked["decision"].id]
    assert hit2["explain"]["multipliers"]["outcome"] == 0.5
    assert hit2["outcome"] == {"state": "reverted", "by": worked["revert"], "later": 0}
    assert hit2["score"] == pytest.approx(hit["score"] * 0.5, rel=0.02)
    held = cli(capsys, "recall", "api.get return int callers", "--explain", "--lexical")
    (hit3,) = [r for r in held["results"] if r["memory"]["id"] == worked["lesson"].id]
    assert hit3["explain"]["multipliers"]["outcome"] == 1.1
    capsys.readouterr()
    assert main(["recall", "charge_once billing invoices", "--lexical"]) == 0
    assert f"[REVERTED by {worked['revert'][:10]}]" in capsys.readouterr().out
    shown = cli(capsys, "show", worked["decision"].id)
    assert shown["outcome"]["state"] == "reverted"
    # Audited: who (git), what, which commit.
    ops = [(e["op"], e["memory_id"]) for e in cli(capsys, "log", "--op", "outcome.")["events"]]
    assert ("outcome.reverted", worked["decision"].id) in ops
    assert ("outcome.held", worked["lesson"].id) in ops
    # A second refresh changes nothing and logs nothing.
    assert cli(capsys, "outcomes", "--refresh")["refreshed"]["changed"] == 0


def test_the_prompt_packet_shows_a_reverted_decision_with_its_flag(conn, enabled, repo, worked,
                                                                   capsys):  # fmt: skip
    cli(capsys, "outcomes", "--refresh")
    prompt = payload("claude-code", "UserPromptSubmit", cwd=str(repo), session_id="s9",
                     prompt="how are invoices charged in src/billing.py now?")  # fmt: skip
    done = hook("UserPromptSubmit", prompt)
    assert done.returncode == 0, done.stderr
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    line = next(x for x in text.splitlines() if worked["decision"].id in x)
    assert line.startswith("- [decision · REVERTED · src/billing.py")


def test_an_outcome_is_reversible_by_hand_and_git_leaves_it_so_until_auto(
    conn, enabled, worked, capsys
):
    cli(capsys, "outcomes", "--refresh")
    d = worked["decision"].id
    row = cli(capsys, "outcome", d[:12], "--set", "linked", "--reason", "the revert was undone")
    assert (row["state"], row["set_by"]) == ("linked", "person")
    cli(capsys, "outcomes", "--refresh")
    assert {o["item_id"]: o for o in cli(capsys, "outcomes")["outcomes"]}[d]["state"] == "linked"
    hit = cli(capsys, "recall", "charge_once billing invoices", "--explain", "--lexical")
    (r,) = [x for x in hit["results"] if x["memory"]["id"] == d]
    assert r["explain"]["multipliers"]["outcome"] == 1.0
    cli(capsys, "outcome", d, "--auto")
    cli(capsys, "outcomes", "--refresh")
    assert {o["item_id"]: o for o in cli(capsys, "outcomes")["outcomes"]}[d]["state"] == "reverted"
    events = cli(capsys, "log", "--op", "outcome.")["events"]
    ops = [e["op"] for e in events if e["memory_id"] == d]
    assert ops.count("outcome.reverted") == 2 and "outcome.set" in ops and "outcome.auto" in ops
    capsys.readouterr()
    assert main(["outcome", d, "--set", "broken"]) == 2  # a usage error, nothing changed


def test_the_same_lines_restored_by_hand_count_as_reverted(conn, enabled, repo, git, capsys,
                                                          monkeypatch):  # fmt: skip
    monkeypatch.chdir(repo)
    commit(git, repo, "src/tax.py", "RATE = 20\nNAME = 'vat'\n", "tax")
    made = {}

    def work():
        made["m"] = remember(conn, enabled, "t1", "decision", "VAT rate is 21 from now on",
                             "src/tax.py")  # fmt: skip
        commit(git, repo, "src/tax.py", "RATE = 21\nNAME = 'vat'\n", "rate 21")

    session(repo, "t1", work)
    commit(git, repo, "src/tax.py", "RATE = 21\nNAME = 'value added tax'\n", "rename")
    commit(git, repo, "src/tax.py", "RATE = 20\nNAME = 'value added tax'\n", "back to 20")
    out = cli(capsys, "outcomes", "--refresh")["outcomes"]
    (o,) = [x for x in out if x["item_id"] == made["m"].id]
    assert (o["state"], o["reverted_by"]) == ("reverted", "restored")


def test_a_checkpoint_citing_files_is_followed_too(conn, enabled, repo, git, capsys,
                                                   monkeypatch):  # fmt: skip
    monkeypatch.chdir(repo)
    commit(git, repo, "src/queue.py", "JOBS = []\n", "queue")
    made = {}

    def work():
        saved = checkpoints.create(conn, enabled, {
            "objective": "Move jobs to a real queue", "relevant_files": ["src/queue.py"],
            "next_action": "wire the worker"}, checkpoints.Origin("agent", "claude-code", "q1"))  # fmt: skip
        made["id"] = saved.id
        commit(git, repo, "src/queue.py", "JOBS = Queue()\n", "queue it")

    session(repo, "q1", work)
    for n in range(3):
        commit(git, repo, "src/queue.py", f"JOBS = Queue({n})\n", f"size {n}")
    out = cli(capsys, "outcomes", "--refresh")["outcomes"]
    (o,) = [x for x in out if x["item_id"] == made["id"]]
    assert (o["kind"], o["state"], o["later"]) == ("checkpoint", "held", 3)


def test_nothing_is_linked_without_a_change_in_git(conn, enabled, repo, capsys, monkeypatch):
    monkeypatch.chdir(repo)
    remember(conn, enabled, "n1", "decision", "Nothing committed after this", "README.md")
    assert cli(capsys, "outcomes", "--refresh")["outcomes"] == []


def test_a_decision_recorded_with_the_cli_during_a_session_follows_its_commit(
    conn, enabled, repo, git, capsys, monkeypatch
):
    """`waymark remember` in a terminal beside the agent has no session of its own: it is
    the session open at that moment whose change it follows, and its revert flags it."""
    monkeypatch.chdir(repo)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    commit(git, repo, "src/billing.py", "def charge():\n    return 1\n", "billing")
    made = {}

    def decide():
        made["decision"] = cli(capsys, "remember", "--type", "decision", "--content", DECISION,
                               "--scope", "file", "--target", "src/billing.py")["memory"]  # fmt: skip
        made["change"] = commit(git, repo, "src/billing.py",
                                "def charge_once():\n    return 1\n", "charge once")  # fmt: skip

    session(repo, "c1", decide)
    assert made["decision"]["session_id"] is None  # the CLI knows no session
    git("revert", "--no-edit", made["change"])
    done = cli(capsys, "outcomes", "--refresh")
    (found,) = [o for o in done["outcomes"] if o["item_id"] == made["decision"]["id"]]
    assert found["state"] == "reverted" and found["commits"] == [made["change"]]


def test_evidence_may_cite_a_commit_from_the_cli_and_the_mcp_tool(
    conn, enabled, repo, git, capsys, monkeypatch
):
    """Evidence `{"commit": sha}` (or `commit:SHA`) is taken by both faces, its change is
    followed without any session, and a malformed id is a clear error."""
    from conftest import call_tool

    monkeypatch.chdir(repo)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    change = commit(git, repo, "src/api.py", "def get():\n    return 1\n", "api")
    by_cli = cli(capsys, "remember", "--type", "decision", "--content", "get() returns one",
                 "--evidence", f"commit:{change[:12]}")["memory"]  # fmt: skip
    assert by_cli["evidence"] == [{"commit": change[:12]}]
    by_mcp = call_tool(repo, "remember", {"type": "decision", "content": "api is one file",
                                          "evidence": [{"commit": change}]})  # fmt: skip
    assert not by_mcp.is_error, by_mcp.content
    assert by_mcp.structured_content["memory"]["evidence"] == [{"commit": change}]
    bad = call_tool(repo, "remember", {"type": "decision", "content": "x",
                                       "evidence": [{"commit": "not-a-sha"}]})  # fmt: skip
    assert bad.is_error and "not a commit id" in bad.content[0].text
    git("revert", "--no-edit", change)
    done = cli(capsys, "outcomes", "--refresh")
    states = {o["item_id"]: o["state"] for o in done["outcomes"]}
    assert (
        states[by_cli["id"]] == "reverted"
        and states[by_mcp.structured_content["memory"]["id"]] == "reverted"
    )
