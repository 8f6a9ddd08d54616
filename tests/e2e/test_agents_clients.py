"""Agents at once in real Claude Code and Codex sessions (scripted stub model): two sessions
in two worktrees of one repository race for one task, and a subagent's decision reaches its
lead."""

from __future__ import annotations

import json
import threading
import uuid

import pytest

from waymark.handoff import checkpoints, tasks

from .conftest import enabled_project, git_project, tool_texts, two_worktrees
from .test_pre_tool_use_clients import bodies, edit

PERSON = checkpoints.Origin(actor="user", client="cli")


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_two_sessions_in_two_worktrees_race_for_one_task(clients, client, monkeypatch, tmp_path):
    one, two = two_worktrees(tmp_path)
    conn, project = enabled_project(clients, monkeypatch, one)
    tried = []
    for attempt in range(3):  # a race that did not happen (see `race`) is run again, twice
        task = checkpoints.create(conn, project, {"objective": f"Port the importer {attempt}"},
                                  PERSON, open_task=True)  # fmt: skip
        said, missed = race(clients, client, task.id, (one, two), tmp_path / f"ready{attempt}")
        tried.append({"missed the barrier": missed, "said": said})
        if not missed:
            break
    assert not missed, json.dumps(tried, indent=1)[:4000]
    refused = {n for n, texts in said.items() if texts and "is held by" in texts[0]}
    won = {n for n, texts in said.items() if texts and '"saved_revision_id"' in texts[0]}
    # Each session's server knew its own session (by its worktree): one claim won, and the
    # other session was told who holds the task and since when; never both.
    assert len(won) == 1 and len(refused) == 1, json.dumps(tried, indent=1)[:4000]
    claims = [c[0] for c in conn.execute(
        "SELECT session_id FROM events WHERE op = 'task.claimed' AND detail LIKE ?",
        (f"%{task.id}%",)).fetchall()]  # fmt: skip
    assert len(claims) == 1
    assert claims[0] in said[next(iter(refused))][0]  # the loser was told the winner's session
    released = [r for r in checkpoints.revisions(conn, task.id) if r.operation == "release"]
    assert [r.session_id for r in released] == claims  # only the holder handed it on
    assert released[0].body["next_action"] == "run tests/test_zebra.py"
    assert tasks.claim_view(conn, task.id)["state"] == "open"  # handed on, with its revision


def race(clients, client, task_id, trees, ready):
    """Two sessions at once, one per worktree, each: meet the other at a barrier (a shell
    turn), claim the task, hold it 3 s, release it. ({session: its checkpoint tool results},
    the sessions that never met the other at the barrier: their scripted turns went
    elsewhere, so nothing raced)."""
    ready.mkdir()

    def script(name):
        barrier = (f"touch {ready}/{name}; for i in $(seq 300); do [ -e {ready}/one ] && "
                   f"[ -e {ready}/two ] && exit 0; sleep 0.1; done; touch {ready}/{name}.missed")  # fmt: skip
        return [
            {"shell": barrier},
            {"tool": "mcp__waymark__checkpoint",
             "input": {"operation": "claim", "checkpoint_id": task_id}},
            {"shell": "sleep 3"},
            {"tool": "mcp__waymark__checkpoint",
             "input": {"operation": "release", "checkpoint_id": task_id,
                       "next_action": "run tests/test_zebra.py"}},
            {"text": "Done."},
        ]  # fmt: skip

    results: dict[str, object] = {}

    def session(name, tree):
        try:
            results[name] = clients.run(client, script(name), run_dir=tree.parent,
                                        hooks=clients.hooks(client))  # fmt: skip
        except BaseException as exc:  # reported below, with the other session's
            results[name] = exc

    racers = [threading.Thread(target=session, args=(n, t))
              for n, t in zip(("one", "two"), trees, strict=True)]  # fmt: skip
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(300)
    assert all(not isinstance(r, BaseException) for r in results.values()), results
    said = {name: [t for t in tool_texts(result) if "checkpoint" in t or "held by" in t]
            for name, result in results.items()}  # fmt: skip
    missed = sorted(n for n in ("one", "two") if not (ready / n).exists()
                    or (ready / f"{n}.missed").exists())  # fmt: skip
    return said, missed


def test_a_subagents_decision_reaches_its_lead_in_claude_code(clients, monkeypatch, tmp_path):
    """The lead gives a subtask to its next general-purpose subagent; the subagent is told it
    and saves a decision to it; the lead's next request carries that decision."""
    repo = git_project(tmp_path / "run" / "project", {"src/app.py": "def main():\n    return 1\n"})
    conn, project = enabled_project(clients, monkeypatch, repo)
    decision = "Reject empty input before the lexer runs"
    # Claude Code runs the Agent tool in the background, and turns go to requests in arrival
    # order: the lead starts it together with a pause, so its next request comes after the
    # subagent's two. A run where they came in another order anyway (a slow machine) is run
    # again, with a new lead session and task, at most twice.
    tried = []
    for attempt in range(3):
        lead = str(uuid.uuid4())
        origin = checkpoints.Origin(actor="agent", client="claude-code", session_id=lead)
        parent = checkpoints.create(conn, project, {"objective": f"Harden the parser {attempt}"},
                                    PERSON, open_task=True)  # fmt: skip
        tasks.claim(conn, project, parent.id, origin)  # the lead's (an earlier one's lapsed)
        sub = tasks.split(conn, project, parent.id, [{"objective": "Review the error paths"}],
                          origin)[0]  # fmt: skip
        given = tasks.assign(conn, project, sub.id, "subagent:general-purpose", sub.revision.id,
                             {}, origin)  # fmt: skip
        script = [
            {"calls": [{"tool": "Agent", "input": {"description": "review",
                                                   "prompt": "Review the error paths.",
                                                   "subagent_type": "general-purpose"}},
                       {"shell": "sleep 5"}]},
            {"tool": "mcp__waymark__checkpoint",
             "input": {"operation": "revise", "checkpoint_id": sub.id,
                       "expected_revision_id": given.revision.id,
                       "decisions": [{"decision": decision, "why": "it crashed on EOF"}]}},
            {"text": "Sub done."},
            {"shell": "true"},
            {"text": "Done."},
        ]  # fmt: skip
        result = clients.run("claude", script, run_dir=tmp_path / "run",
                             hooks=clients.hooks("claude"), extra_args=["--session-id", lead])  # fmt: skip
        bodies = [json.dumps(r["body"]) for r in result.main_requests]
        tried.append(result.summary())
        # the request answered with the revise was the subagent's (it was told its task)
        if len(bodies) > 1 and "Your task, from your lead" in bodies[1]:
            break
    assert "Your task, from your lead" in bodies[1] and sub.id in bodies[1], tried
    heard = [b for b in bodies if "From your subagents" in b]
    assert heard and decision in heard[-1], json.dumps(tried, indent=1)
    waiting = conn.execute("SELECT count(*) FROM task_reports WHERE session_id = ? AND"
                           " shown_at IS NULL", (lead,)).fetchall()  # fmt: skip
    assert waiting == [(0,)]  # told once
    assert tasks.claim_view(conn, sub.id)["session"] == lead  # the lead's again


def test_a_subagents_decision_reaches_its_lead_in_codex(clients, monkeypatch, tmp_path):
    """Codex: the lead takes a subtask and gives it to its next subagent through Waymark's
    MCP server (`assign` to `subagent:default`), then spawns one; the subagent records a
    decision on the task it was told; the lead's next request carries that decision."""
    repo = git_project(tmp_path / "run" / "project", {"src/app.py": "def main():\n    return 1\n"})
    conn, project = enabled_project(clients, monkeypatch, repo)
    decision = "Reject empty input before the lexer runs"
    # Codex runs a spawned agent beside its lead, and turns go to requests in arrival order:
    # the lead spawns it together with a pause, so its next request comes after the
    # subagent's two. A run where they came in another order anyway (a slow machine) is run
    # again, with a new task, at most twice.
    tried = []
    for attempt in range(3):
        parent = checkpoints.create(conn, project, {"objective": f"Harden the parser {attempt}"},
                                    PERSON, open_task=True)  # fmt: skip
        sub = tasks.split(conn, project, parent.id, [{"objective": "Review the error paths"}],
                          PERSON)[0]  # fmt: skip
        script = [
            {"tool": "mcp__waymark__checkpoint",
             "input": {"operation": "claim", "checkpoint_id": sub.id}},
            {"tool": "mcp__waymark__checkpoint",
             "input": {"operation": "assign", "checkpoint_id": sub.id, "to": "subagent:default",
                       "expected_revision_id": sub.revision.id}},
            {"calls": [{"tool": "spawn_agent", "input": {"message": "Review the error paths."}},
                       {"shell": "sleep 5"}]},
            {"tool": "mcp__waymark__checkpoint",
             "input": {"operation": "record_event", "checkpoint_id": sub.id, "kind": "decision",
                       "summary": decision, "source_key": f"review-{attempt}"}},
            {"text": "Sub done."},
            {"shell": "true"},
            {"text": "Done."},
        ]  # fmt: skip
        result = clients.run("codex", script, run_dir=tmp_path / "run",
                             hooks=clients.hooks("codex"))  # fmt: skip
        bodies = [json.dumps(r["body"]) for r in result.main_requests]
        tried.append(result.summary())
        # the request answered with the record_event was the subagent's (it was told its task)
        if len(bodies) > 3 and "Your task, from your lead" in bodies[3]:
            break
    assert "Your task, from your lead" in bodies[3] and sub.id in bodies[3], tried
    heard = [b for b in bodies if "From your subagents" in b]
    assert heard and decision in heard[-1], json.dumps(tried, indent=1)
    lead = tasks.claim_view(conn, sub.id)["session"]
    waiting = conn.execute("SELECT count(*) FROM task_reports WHERE session_id = ? AND"
                           " shown_at IS NULL", (lead,)).fetchall()  # fmt: skip
    assert waiting == [(0,)]  # told once


@pytest.mark.parametrize("holder, editor", [("claude", "codex"), ("codex", "claude")])
def test_an_agent_about_to_edit_a_file_another_agents_task_is_changing_is_warned(
    clients, holder, editor, monkeypatch, tmp_path
):
    """Two sessions at once in two worktrees: one holds a task and adds a file; the other,
    about to add the same file in its worktree, is told who is changing it, for which task,
    on which branch, and its edit goes through (a warning, never a block)."""
    one, two = two_worktrees(tmp_path)
    conn, project = enabled_project(clients, monkeypatch, one)
    task = checkpoints.create(conn, project, {"objective": "Write the importer"}, PERSON,
                              open_task=True)  # fmt: skip
    ready = tmp_path / "ready"
    ready.mkdir()
    wait = "for i in $(seq 600); do [ -e {0} ] && exit 0; sleep 0.1; done; exit 1"
    scripts = {
        "one": [
            {"tool": "mcp__waymark__checkpoint",
             "input": {"operation": "claim", "checkpoint_id": task.id}},
            edit(holder, "src/importer.py", 1),
            {"shell": f"touch {ready}/edited; " + wait.format(f"{ready}/done")},
            {"text": "Done."},
        ],
        "two": [
            {"shell": wait.format(f"{ready}/edited")},
            edit(editor, "src/importer.py", 1),
            {"shell": f"touch {ready}/done"},
            {"text": "Done."},
        ],
    }  # fmt: skip
    results: dict[str, object] = {}

    def session(name, client, tree):
        try:
            results[name] = clients.run(client, scripts[name], run_dir=tree.parent,
                                        hooks=clients.hooks(client))  # fmt: skip
        except BaseException as exc:  # reported below
            results[name] = exc

    both = [threading.Thread(target=session, args=("one", holder, one)),
            threading.Thread(target=session, args=("two", editor, two))]  # fmt: skip
    for thread in both:
        thread.start()
    for thread in both:
        thread.join(300)
    assert all(not isinstance(r, BaseException) for r in results.values()), results
    held = tasks.claim_view(conn, task.id)
    assert held["branch"] and held["session"]  # worktree one's branch
    told = bodies(results["two"])
    warned = [b for b in told if "is being changed by" in b]
    assert warned and task.id in warned[0] and held["session"][:8] in warned[0], told
    assert f"on branch {held['branch']}" in warned[0]
    assert "is being changed by" not in told[1]  # before its edit, nothing
    assert (two / "src" / "importer.py").read_text() == "x = 1\n"  # never a block
    assert not any("is being changed by" in b for b in bodies(results["one"]))
