"""A lease lapsing after a real client's session is killed (scripted stub model): the task a
dead agent held is anyone's again, with its checkpoint intact. The session is started and
killed before the first real-client test (`conftest.killed_first`), so its minute-long lease
runs out while the others run."""

from __future__ import annotations

import json
import time
from datetime import datetime

from waymark.handoff import tasks

from .conftest import enabled_project, tool_texts


def test_a_killed_sessions_lease_lapses_and_another_agent_takes_its_task(killed_first, monkeypatch):
    """Claude Code claimed a task, saved where it got to, and was killed mid-turn: no
    SessionEnd, no handoff. Right after, the task was still its (a live lease); once the lease
    has passed, a Codex session in the other worktree starts from the dead session's
    checkpoint and takes the task. (A session refused while a lease lives:
    test_agents_clients.py's race.)"""
    dead = killed_first
    assert dead is not None and dead.returncode != 0  # killed: it never ended its session
    held = dead.claim
    assert held["state"] == "held" and held["client"] == "claude-code", held
    clients, task_id = dead.clients, dead.task_id
    conn, _ = enabled_project(clients, monkeypatch, dead.one)
    ended = conn.execute("SELECT ended_at FROM sessions WHERE id = ?",
                         (held["session"],)).fetchall()  # fmt: skip
    assert ended == [(None,)]  # no SessionEnd came
    assert tasks.claim_view(conn, task_id)["session"] == held["session"]  # nobody else took it

    until = datetime.fromisoformat(held["lease_until"].replace("Z", "+00:00")).timestamp()
    time.sleep(max(0.0, until - time.time() + 1))
    assert tasks.claim_view(conn, task_id)["state"] == "lapsed"
    claim = [{"tool": "mcp__waymark__checkpoint",
              "input": {"operation": "claim", "checkpoint_id": task_id}}, {"text": "Done."}]  # fmt: skip
    took = clients.run("codex", claim, run_dir=dead.two.parent, hooks=clients.hooks("codex"))
    assert dead.step in json.dumps(took.main_requests[0]["body"])  # its packet: the dead one's
    won = [t for t in tool_texts(took) if '"saved_revision_id"' in t]
    assert won and dead.step in won[0], tool_texts(took)  # the checkpoint, intact
    after = tasks.claim_view(conn, task_id)  # the Codex session's (its end lapsed it again)
    assert after["session"] != held["session"] and after["client"] == "codex", after
