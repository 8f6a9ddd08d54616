"""Agents at once: tasks that a session claims, leases, handing on, subtasks and the
definition of done, on a real store (and real processes racing for one task)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from waymark.errors import Conflict, InvalidArgument
from waymark.handoff import checkpoints, ledger, tasks

A = checkpoints.Origin(actor="agent", client="claude-code", session_id="session-a")
B = checkpoints.Origin(actor="agent", client="codex", session_id="session-b")
C = checkpoints.Origin(actor="agent", client="claude-code", session_id="session-c")
PERSON = checkpoints.Origin(actor="user", client="cli")


def new(conn, project, objective, origin=A, **kw):
    return checkpoints.create(conn, project, {"objective": objective}, origin, **kw)


def revise(conn, project, task, origin, **fields):
    current = checkpoints.get(conn, project, task.id)
    return checkpoints.revise(conn, project, task.id, current.revision.id, fields, origin)


def test_a_session_holds_what_it_creates_and_another_is_told_who_and_since(conn, project):
    task = new(conn, project, "Ship the importer")
    claim = tasks.claim_view(conn, task.id)
    assert claim["state"] == "held" and claim["session"] == "session-a"
    assert claim["client"] == "claude-code" and claim["base_commit"] and claim["branch"] == "main"
    with pytest.raises(Conflict) as taken:
        revise(conn, project, task, B, progress=["took it over"])
    assert taken.value.details["holder"] == "session-a"
    assert taken.value.details["since"] == claim["since"]
    assert "held by claude-code session session-" in str(taken.value)
    with pytest.raises(Conflict):
        tasks.claim(conn, project, task.id, B)
    # B works on a task of its own beside A's; A creating a second one of its own is refused
    other = new(conn, project, "Fix the flaky login test", B)
    assert tasks.claim_view(conn, other.id)["session"] == "session-b"
    with pytest.raises(Conflict, match="is active"):
        new(conn, project, "A second task of A's")
    # each session is shown its own task; without a session, the newest
    assert checkpoints.active(conn, project, "session-a").id == task.id
    assert checkpoints.active(conn, project, "session-b").id == other.id
    assert checkpoints.active(conn, project).id == other.id


def test_one_agent_alone_works_as_before(conn, project):
    """No session (a person at the command line): one active checkpoint, no claims."""
    task = new(conn, project, "Add retry to payments", PERSON)
    assert tasks.claim_view(conn, task.id)["state"] == "open"
    with pytest.raises(Conflict, match="is active"):
        new(conn, project, "Another", PERSON)
    # the next agent session picks it up by saving to it, and holds it from then on
    assert checkpoints.active(conn, project, "session-a").id == task.id
    saved = revise(conn, project, task, A, next_action="wire backoff into charge()")
    assert tasks.claim_view(conn, saved.id)["session"] == "session-a"


def test_a_lapsed_lease_or_an_ended_session_frees_the_task_with_its_checkpoint(conn, project):
    task = revise(conn, project, new(conn, project, "Port the parser"), A, progress=["lexer"])
    ledger.end_session(conn, project, "session-a", "prompt_input_exit", None)
    view = tasks.claim_view(conn, task.id)
    assert view["state"] == "lapsed" and view["session"] == "session-a"  # who had it stays
    assert checkpoints.active(conn, project, "session-b").id == task.id
    taken = tasks.claim(conn, project, task.id, B)
    assert taken.revision.id == task.revision.id  # its checkpoint intact
    assert taken.revision.body["progress"] == ["lexer"]
    assert tasks.claim_view(conn, task.id)["session"] == "session-b"
    # a lease that ran out with nobody saying so: the same
    conn.execute("UPDATE checkpoints SET lease_until = '2000-01-01T00:00:00.000Z'")
    ledger.renew_claims(conn, "session-b")  # a lapsed lease is not renewed behind a claim
    assert tasks.claim_view(conn, task.id)["state"] == "lapsed"
    tasks.claim(conn, project, task.id, C)
    assert tasks.claim_view(conn, task.id)["session"] == "session-c"


def test_signs_of_work_renew_a_lease_running_out(conn, project, repo):
    task = new(conn, project, "Profile the hot path")
    fresh = tasks.claim_view(conn, task.id)["lease_until"]
    ledger.renew_claims(conn, "session-a")  # most of the lease is left: nothing written
    assert tasks.claim_view(conn, task.id)["lease_until"] == fresh
    soon = _soon()
    conn.execute("UPDATE checkpoints SET lease_until = ?", (soon,))
    ledger.renew_claims(conn, "session-a")  # a prompt
    assert tasks.claim_view(conn, task.id)["lease_until"] >= fresh > soon
    conn.execute("UPDATE checkpoints SET lease_until = ?", (soon,))
    ledger.record_tool(conn, project, "session-a", "claude-code", command="ls", failed=False,
                       tool_name="Bash", cwd=str(repo))  # a tool call  # fmt: skip
    assert tasks.claim_view(conn, task.id)["lease_until"] >= fresh > soon


def _soon() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() + 30))


def test_release_and_assign_hand_on_with_a_revision(conn, project):
    task = new(conn, project, "Move the queue to Redis")
    released = tasks.release(conn, project, task.id, task.revision.id,
                             {"next_action": "benchmark the consumer"}, A)  # fmt: skip
    assert released.revision.operation == "release"
    assert tasks.claim_view(conn, task.id)["state"] == "open"
    # the next session's task starts from that revision
    picked = checkpoints.active(conn, project, "session-b")
    assert picked.revision.id == released.revision.id
    assert picked.revision.body["next_action"] == "benchmark the consumer"
    with pytest.raises(Conflict, match="nothing to release"):
        tasks.release(conn, project, task.id, released.revision.id, {}, B)
    given = tasks.assign(conn, project, task.id, "session-c", released.revision.id,
                         {"progress": ["consumer measured"]}, A)  # fmt: skip
    assert given.revision.operation == "assign"
    assert tasks.claim_view(conn, task.id)["session"] == "session-c"
    with pytest.raises(Conflict):  # a third session cannot save it, nor take it by assigning
        revise(conn, project, task, B, progress=["mine now"])
    with pytest.raises(Conflict):
        tasks.assign(conn, project, task.id, "session-b", given.revision.id, {}, B)
    revise(conn, project, task, C, progress=["consumer measured", "producer next"])


def test_subtasks_are_open_and_the_task_completes_after_them(conn, project):
    task = new(conn, project, "Release 2.0")
    parts = tasks.split(conn, project, task.id,
                        [{"objective": "Write the changelog"}, {"objective": "Tag it"}], A)  # fmt: skip
    assert [tasks.claim_view(conn, p.id) for p in parts] == [
        {"state": "open", "parent": task.id},
        {"state": "open", "parent": task.id},
    ]
    tasks.claim(conn, project, parts[0].id, B)
    with pytest.raises(Conflict, match="subtask"):
        checkpoints.revise(conn, project, task.id, task.revision.id, {}, A, operation="complete")
    state = tasks.done_state(conn, project, task)
    assert [s["status"] for s in state["subtasks"]] == ["active", "active"] and not state["met"]
    for part, who in ((parts[0], B), (parts[1], C)):
        current = checkpoints.get(conn, project, part.id)
        checkpoints.revise(conn, project, part.id, current.revision.id, {}, who,
                           operation="complete")  # fmt: skip
    done = checkpoints.revise(conn, project, task.id, task.revision.id, {}, A,
                              operation="complete")  # fmt: skip
    assert done.status == "completed" and tasks.claim_view(conn, task.id)["state"] == "open"


def test_the_definition_of_done_follows_the_holders_runs_and_edits(conn, project, repo):
    task = checkpoints.create(conn, project, {
        "objective": "Add retries", "done_when": ["pytest -q", {"file": "src/pkg/core.py"},
                                                  {"behaviour": "a failed charge is retried"},
                                                  {"file": "docs/retries.md"}],
    }, A)  # fmt: skip
    assert "`pytest -q` passes" in task.render()
    state = tasks.done_state(conn, project, task)
    assert [i["state"] for i in state["items"]] == ["not_run", "present", "to_confirm", "missing"]
    record = {"cwd": str(repo)}
    ledger.record_tool(conn, project, "session-a", "claude-code", paths=[str(repo / "src/pkg/core.py")],
                       tool_name="Edit", **record)  # fmt: skip
    ledger.record_tool(conn, project, "session-a", "claude-code", command="pytest  -q",
                       failed=True, exit_code=1, tool_name="Bash", **record)  # fmt: skip
    assert tasks.done_state(conn, project, task)["items"][0]["state"] == "failed"
    ledger.record_tool(conn, project, "session-a", "claude-code", command="pytest -q",
                       failed=False, exit_code=0, tool_name="Bash", **record)  # fmt: skip
    assert tasks.done_state(conn, project, task)["items"][0]["state"] == "passed"
    time.sleep(0.01)
    ledger.record_tool(conn, project, "session-a", "claude-code", paths=[str(repo / "src/pkg/core.py")],
                       tool_name="Edit", **record)  # fmt: skip
    state = tasks.done_state(conn, project, task)
    assert state["items"][0]["state"] == "stale" and tasks.unmet_commands(state) == ["pytest -q"]
    # another session's passing run is not the holder's check
    ledger.record_tool(conn, project, "session-b", "codex", command="pytest -q", failed=False,
                       exit_code=0, tool_name="Bash", **record)  # fmt: skip
    assert tasks.done_state(conn, project, task)["items"][0]["state"] == "stale"


def test_a_done_item_needs_something_to_check(conn, project):
    with pytest.raises(InvalidArgument, match="one of command, file, behaviour"):
        checkpoints.create(conn, project, {"objective": "x", "done_when": [{"command": ""}]}, A)


RACER = """
import json, os, sys, time
from waymark.errors import Conflict
from waymark.handoff import checkpoints, tasks
from waymark.projects.resolve import resolve
from waymark.storage import connection as db
conn = db.connect()
project = resolve(conn, sys.argv[1])
origin = checkpoints.Origin(actor="agent", client="codex", session_id=sys.argv[2])
while not os.path.exists(sys.argv[4]):
    time.sleep(0.001)
try:
    tasks.claim(conn, project, sys.argv[3], origin)
    print(json.dumps({"won": True}))
except Conflict as exc:
    print(json.dumps({"won": False, "holder": exc.details["holder"]}))
"""


def test_of_racing_processes_exactly_one_claims_and_the_others_learn_who(conn, project, repo,
                                                                       tmp_path):  # fmt: skip
    task = new(conn, project, "The one task", PERSON)
    go = tmp_path / "go"
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(repo), f"racer-{i}", task.id, str(go)],
            stdout=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )  # fmt: skip
        for i in range(4)
    ]
    time.sleep(0.5)  # every racer opened the store and waits
    go.write_text("")
    told = [json.loads(r.communicate(timeout=60)[0]) for r in racers]
    winners = [i for i, t in enumerate(told) if t["won"]]
    assert len(winners) == 1, told
    holder = tasks.claim_view(conn, task.id)["session"]
    assert holder == f"racer-{winners[0]}"
    assert all(t["holder"] == holder for t in told if not t["won"])


def waymark(repo, *argv):
    done = subprocess.run([sys.executable, "-m", "waymark", *argv, "--json"], cwd=repo,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    return done.returncode, json.loads(done.stdout) if done.stdout else None, done.stderr


def test_the_board_and_claims_from_the_command_line(enabled, repo):
    code, lead, _ = waymark(repo, "checkpoint", "create", "--objective", "Release 2.0",
                            "--session", "S-lead", "--done-cmd", "pytest -q",
                            "--done-file", "CHANGELOG.md")  # fmt: skip
    assert code == 0
    code, login, _ = waymark(repo, "checkpoint", "create", "--objective", "Fix flaky login",
                             "--open")  # fmt: skip
    assert code == 0
    code, board, _ = waymark(repo, "task")
    assert [(t["objective"], t["claim"]["state"]) for t in board["tasks"]] == [
        ("Fix flaky login", "open"),
        ("Release 2.0", "held"),
    ]
    assert board["tasks"][1]["claim"]["session"] == "S-lead"
    assert [i["state"] for i in board["tasks"][1]["done"]["items"]] == ["not_run", "missing"]
    assert waymark(repo, "task", "claim", login["id"][:12], "--session", "S-two")[0] == 0
    code, refused, _ = waymark(repo, "task", "claim", login["id"], "--session", "S-three")
    assert code == 1 and refused["code"] == "conflict"
    assert refused["details"]["holder"] == "S-two"
    code, said, _ = waymark(repo, "task", "claim", login["id"])  # no session: whose claim?
    assert code == 1 and said["code"] == "invalid_argument" and "--session" in said["message"]
    code, parts, _ = waymark(repo, "task", "split", lead["id"], "--objective", "Write the changelog",
                             "--objective", "Tag it", "--session", "S-lead")  # fmt: skip
    assert [p["revision"]["body"]["objective"] for p in parts["subtasks"]] == [
        "Write the changelog",
        "Tag it",
    ]
    code, released, _ = waymark(repo, "task", "release", login["id"], "--session", "S-two",
                                "--next-action", "rerun the login test 20 times")  # fmt: skip
    assert code == 0 and released["claim"]["state"] == "open"
    assert released["revision"]["operation"] == "release"
    code, given, _ = waymark(repo, "task", "assign", login["id"], "--to", "S-four")
    assert code == 0 and given["claim"]["session"] == "S-four"
    code, done, _ = waymark(repo, "task", "done", lead["id"])
    assert done["met"] is False and len(done["subtasks"]) == 2
    text = subprocess.run([sys.executable, "-m", "waymark", "task"], cwd=repo,
                          capture_output=True, text=True, timeout=60).stdout  # fmt: skip
    assert "held by session S-four, given by user since" in text and "(subtask of " in text
    assert "Release 2.0; done 0/2" in text


def worktree(repo, name):
    from conftest import git_env

    tree = repo.parent / name
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", "-b", name, str(tree)],
                   check=True, env=git_env(repo.parent))  # fmt: skip
    return tree


def test_agents_in_two_worktrees_claim_through_their_mcp_servers(enabled, repo):
    """Each worktree's session starts (a real SessionStart hook), each MCP server knows its
    own session by its working tree, and their saves claim as those sessions."""
    from conftest import call_tool
    from test_hooks import hook, payload

    trees = {"one": worktree(repo, "one"), "two": worktree(repo, "two")}
    for name, tree in trees.items():
        started = hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(tree),
                                               session_id=f"session-{name}"))  # fmt: skip
        assert started.returncode == 0, started.stderr

    def call(name, args):
        result = call_tool(trees[name], "checkpoint", args)
        text = result.content[0].text  # the SDK prefixes "Error executing tool NAME: "
        return result.is_error, (json.loads(text[text.index("{") :]) if result.is_error
                                 else result.structured_content)  # fmt: skip

    failed, made = call("one", {"operation": "create", "objective": "Move the queue",
                                "done_when": ["pytest -q", {"file": "docs/queue.md"}]})  # fmt: skip
    assert not failed
    task = made["checkpoint"]
    assert task["revision"]["body"]["done_when"] == [{"command": "pytest -q"},
                                                     {"file": "docs/queue.md"}]  # fmt: skip
    view = tasks.claim_view(_conn(), task["id"])
    assert view["session"] == "session-one" and view["branch"] == "one"
    assert view["worktree"] == str(trees["one"])
    assert view["client"] == "claude-code"  # the session's client, not the door (mcp)
    # two's recall shows it no active checkpoint of its own: one's task is one's
    recalled = call_tool(trees["two"], "recall", {"query": "queue"}).structured_content
    assert recalled.get("checkpoint") is None
    mine = call_tool(trees["one"], "recall", {"query": "queue"}).structured_content
    assert mine["checkpoint"]["id"] == task["id"]
    failed, refused = call("two", {"operation": "revise", "checkpoint_id": task["id"],
                                   "expected_revision_id": task["revision"]["id"],
                                   "progress": ["took it"]})  # fmt: skip
    assert failed and refused["error"]["code"] == "conflict"
    assert refused["error"]["details"]["holder"] == "session-one"
    # two makes a subtask of it, open for the taking, and claims it
    failed, sub = call("two", {"operation": "subtask", "checkpoint_id": task["id"],
                               "objective": "Write docs/queue.md"})  # fmt: skip
    assert not failed
    assert tasks.claim_view(_conn(), sub["checkpoint"]["id"])["state"] == "open"
    failed, _ = call("two", {"operation": "claim", "checkpoint_id": sub["checkpoint"]["id"]})
    assert not failed
    assert tasks.claim_view(_conn(), sub["checkpoint"]["id"])["session"] == "session-two"
    failed, released = call("two", {"operation": "release",
                                    "checkpoint_id": sub["checkpoint"]["id"],
                                    "expected_revision_id": sub["saved_revision_id"],
                                    "next_action": "write the consumer section"})  # fmt: skip
    assert not failed and released["checkpoint"]["revision"]["operation"] == "release"
    failed, given = call("one", {"operation": "assign", "checkpoint_id": sub["checkpoint"]["id"],
                                 "expected_revision_id": released["saved_revision_id"],
                                 "to": "session-two"})  # fmt: skip
    assert not failed
    assert tasks.claim_view(_conn(), sub["checkpoint"]["id"])["session"] == "session-two"


def _conn():
    from waymark.storage import connection as db

    return db.connect()


def test_what_each_agent_is_told_through_its_hooks(enabled, repo):
    """Two sessions in two worktrees, every step a real hook process: the second is told
    what the first holds and is changing, is warned before editing the same file (never
    blocked), the first's Stop names its unmet definition of done, and when the first
    session ends its task is open for the next."""
    from test_hooks import context_of, hook, payload
    from test_pre_tool_use import before_edit, context, edited, passed

    one, two = worktree(repo, "one"), worktree(repo, "two")

    def start(tree, session):
        return hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(tree),
                                            session_id=session))  # fmt: skip

    alone = start(one, "session-one")
    assert alone.returncode == 0
    assert "Agents at work" not in alone.stdout.decode()  # one agent alone: as before
    conn = _conn()
    project = __import__("waymark.projects.resolve", fromlist=["resolve"]).resolve(conn, str(one))
    origin = checkpoints.Origin(actor="agent", client="claude-code", session_id="session-one")
    task = checkpoints.create(conn, project, {"objective": "Rewrite the core loop",
                                              "done_when": ["pytest -q"]}, origin)  # fmt: skip
    checkpoints.create(conn, project, {"objective": "Document the API"}, PERSON, open_task=True)
    assert edited(one, "src/pkg/core.py", "session-one").returncode == 0

    told = context_of(start(two, "session-two"))
    assert "## Agents at work" in told
    assert f'claude-code session session- holds {task.id} "Rewrite the core loop" on one' in told
    assert "changing src/pkg/core.py" in told
    # the open task is shown as the one to take up, and says it is nobody's yet
    assert "Objective: Document the API" in told.split("## Agents at work")[0]
    assert "the active checkpoint above is open: claim it" in told

    warned = context(before_edit(two, "src/pkg/core.py", session="session-two"))
    assert "Another agent is on this" in warned
    assert "src/pkg/core.py is being changed by claude-code session session-" in warned
    assert f"which holds task {task.id}" in warned and "on branch one" in warned
    assert (
        "permissionDecision"
        not in before_edit(two, "src/pkg/core.py", session="session-three").stdout.decode()
    )

    stop = hook("Stop", payload("claude-code", "Stop", cwd=str(one), session_id="session-one"))
    reason = json.loads(stop.stdout)["reason"]
    assert "definition of done is not met: `pytest -q`" in reason
    passed(one, "pytest -q", "session-one")
    assert tasks.done_state(conn, project, task)["items"][0]["state"] == "passed"

    ended = hook("SessionEnd", payload("claude-code", "SessionEnd", cwd=str(one),
                                       session_id="session-one"))  # fmt: skip
    assert ended.returncode == 0
    assert tasks.claim_view(conn, task.id)["state"] == "lapsed"
    later = context_of(start(two, "session-four"))
    assert f'open for the taking: {task.id} "Rewrite the core loop"' in later


def test_a_subagents_decisions_reach_its_lead(enabled, repo):
    """The lead gives a subtask to its next `reviewer` subagent (through its MCP server); the
    subagent's SubagentStart takes it and is told it; what it saves reaches the lead when it
    stops, once, in the Agent tool's result."""
    from conftest import call_tool
    from test_hooks import context_of, hook, payload

    lead = "lead-session"
    started = hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo),
                                           session_id=lead))  # fmt: skip
    assert started.returncode == 0

    def call(args):
        result = call_tool(repo, "checkpoint", args)
        assert not result.is_error, result.content
        return result.structured_content

    task = call({"operation": "create", "objective": "Harden the parser"})["checkpoint"]
    sub = call({"operation": "subtask", "checkpoint_id": task["id"], "to": "subagent:reviewer",
                "objective": "Review the error paths", "done_when": ["pytest -q"]})  # fmt: skip
    sub_id = sub["checkpoint"]["id"]
    assert tasks.claim_view(_conn(), sub_id)["agent"] == "type:reviewer"

    def subagent(event, **extra):
        data = payload("claude-code", event, cwd=str(repo), session_id=lead,
                       agent_id="agent-7", agent_type="reviewer", **extra)  # fmt: skip
        return hook(event, data)

    told = context_of(subagent("SubagentStart"))
    assert "## Your task, from your lead" in told and "Objective: Review the error paths" in told
    assert f'checkpoint_id "{sub_id}"' in told and "Done when: `pytest -q` passes" in told
    assert tasks.claim_view(_conn(), sub_id)["agent"] == "agent-7"
    # the subagent saves what it decided (its tools are its lead session's)
    current = tasks.claim_view(_conn(), sub_id)
    saved = call({"operation": "revise", "checkpoint_id": sub_id,
                  "expected_revision_id": sub["saved_revision_id"],
                  "decisions": [{"decision": "Reject empty input early", "why": "it crashed"}],
                  "lessons": [{"correction": "the lexer, not the parser, owns EOF"}]})  # fmt: skip
    assert saved["checkpoint"]["revision"]["body"]["decisions"][0]["decision"]
    assert current["session"] == lead
    # and an event it records on the task (no revision needed) goes with the report
    call({"operation": "record_event", "kind": "decision", "summary": "Keep the old lexer",
          "source_key": "lexer-kept", "checkpoint_id": sub_id})  # fmt: skip
    assert subagent("SubagentStop").returncode == 0
    assert tasks.claim_view(_conn(), sub_id).get("agent") is None  # the lead's again

    def agent_returned():
        data = payload("claude-code", "PostToolUse-write", cwd=str(repo), session_id=lead)
        data.update(tool_name="Agent", tool_input={"prompt": "review"},
                    tool_response={"content": [{"type": "text", "text": "done"}]})  # fmt: skip
        return hook("PostToolUse", data)

    heard = context_of(agent_returned())
    assert "## From your subagents" in heard
    assert f"reviewer subagent on task {sub_id}" in heard
    assert "decided: Reject empty input early (why: it crashed)" in heard
    assert "lesson: the lexer, not the parser, owns EOF" in heard
    assert "decided: Keep the old lexer" in heard
    assert agent_returned().stdout == b""  # told once


def test_the_holder_releases_without_naming_the_revision(conn, project):
    task = new(conn, project, "Move the queue")
    released = tasks.release(conn, project, task.id, "", {"next_action": "measure it"}, A)
    assert released.revision.operation == "release"
    taken = tasks.claim(conn, project, task.id, B)
    with pytest.raises(InvalidArgument, match="expected_revision_id is required"):
        tasks.release(conn, project, taken.id, "", {}, A)  # not A's: the revision is needed
