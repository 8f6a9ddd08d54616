"""Insights and rules: votes, promotion, rating after use, suspension, retirement."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from test_hooks import context_of, hook, payload
from waymark.curation import candidates, feedback, learning
from waymark.errors import Conflict, NotFound
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.storage import connection as db


def insight(conn, project, text="Three timeouts in 30 days: raise the client timeout"):
    with db.write(conn):
        row, _ = candidates.propose(
            conn, project.id, kind="insight", reason="pattern", fingerprint=text,
            fields={"type": "lesson", "content": text, "tags": ["insight"]},
        )  # fmt: skip
    return candidates.approve(conn, project, row["id"])["memory"]["id"]


def test_an_approved_insight_is_voted_up_into_a_rule_shown_at_session_start(conn, enabled, repo):
    memory_id = insight(conn, enabled)
    (listed,) = learning.listed(conn, enabled, "insight")
    assert (listed["importance"], listed["confidence"]) == (1, 1)
    learning.vote(conn, enabled, memory_id, True)
    row = learning.vote(conn, enabled, memory_id, True)
    assert row["kind"] == "rule" and store.get(conn, memory_id).pinned
    start = hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo)))
    assert "raise the client timeout" in context_of(start)
    ops = [r[0] for r in conn.execute("SELECT op FROM events WHERE memory_id = ?", (memory_id,))]
    assert ops.count("vote") == 2


def test_a_vote_down_to_zero_archives_reversibly(conn, project):
    memory_id = insight(conn, project)
    row = learning.vote(conn, project, memory_id, False)
    assert row["status"] == "retired" and store.get(conn, memory_id).status == "archived"
    assert store.unarchive(conn, project, memory_id).status == "active"
    with pytest.raises(Conflict):
        learning.vote(conn, project, memory_id, True)


def test_a_rule_that_rarely_helps_is_suspended_and_retiring_keeps_its_counts(conn, project):
    memory_id = insight(conn, project)
    learning.promote(conn, project, memory_id)
    learning.rate(conn, project, memory_id, True)
    for _ in range(8):
        row = learning.rate(conn, project, memory_id, False)
    assert row["status"] == "active"  # 9 fires: too few to judge
    row = learning.rate(conn, project, memory_id, False)  # 10 fires, 1 helped: 10% < 20%
    assert row["status"] == "suspended" and not store.get(conn, memory_id).pinned
    retired = learning.retire(conn, project, memory_id)
    assert (retired["status"], retired["fires"], retired["successes"]) == ("retired", 10, 1)


def test_agents_rate_a_rule_with_feedback(conn, project):
    memory_id = insight(conn, project)
    learning.promote(conn, project, memory_id)
    feedback.give(conn, project, memory_id, "helpful", actor="agent")
    feedback.give(conn, project, memory_id, "not_helpful", actor="agent")
    (rule,) = learning.listed(conn, project, "rule")
    assert (rule["fires"], rule["successes"], rule["success_rate"]) == (2, 1, 0.5)


def test_only_insights_and_rules_of_the_project_are_touched(conn, project):
    plain = store.remember(conn, project, make_draft(project, type="fact", content="a fact")).memory
    with pytest.raises(NotFound):
        learning.vote(conn, project, plain.id, True)
    memory_id = insight(conn, project)
    with pytest.raises(Conflict):
        learning.rate(conn, project, memory_id, True)  # an insight, not yet a rule


def test_people_use_insights_and_rules_commands(conn, project, repo):
    memory_id = insight(conn, project)
    run = lambda *a: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "waymark", *a], cwd=repo, capture_output=True, text=True
    )
    listed = json.loads(run("insights", "--json").stdout)["results"]
    assert [r["memory_id"] for r in listed] == [memory_id]
    assert run("insights", "promote", memory_id).returncode == 0
    rated = run("rules", "rate", memory_id, "helped", "--json")
    assert rated.returncode == 0 and json.loads(rated.stdout)["fires"] == 1
    bad = run("rules", "rate", memory_id, "maybe", "--json")
    assert bad.returncode == 2 and json.loads(bad.stdout)["code"] == "usage"
    assert "fired 1, helped 1" in run("rules").stdout
