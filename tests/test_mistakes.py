"""The error log and its patterns: categories by rules, insights proposed for review."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from test_hooks import hook, payload
from test_pre_tool_use import fail
from waymark.curation import candidates, mistakes
from waymark.memories import store
from waymark.memories.draft import make_draft


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("curl api | Exit code 28\nOperation timed out after 30000 ms", "timeout"),
        ("gh api repos | HTTP 403: rate limit exceeded", "api"),
        ("pytest | ModuleNotFoundError: No module named 'yaml'", "config"),
        ("python x.py | TypeError: unsupported operand", "code"),
        ("pytest | AssertionError: expected 3", "logic"),
        ("We assumed the cache was per user; it turned out global", "wrong_assumption"),
        ("Nobody told us the staging DB is shared: not documented", "missing_context"),
        ("ls", None),
    ],
)
def test_rules_categorise_what_the_agent_did_not(text, category):
    assert mistakes.categorise(text) == category


def test_the_log_holds_failures_and_lessons_with_their_categories(conn, enabled, repo):
    fail(repo, "pytest -x", "s1", "Exit code 1\nE   AssertionError: 2 != 3")
    for _ in range(3):
        fail(repo, "make deploy", "s2", "Exit code 2\nmake: *** [deploy] Error 2")
    store.remember(conn, enabled, make_draft(
        enabled, type="lesson", content="Check the queue name first", tags=["category:config"]))  # fmt: skip
    entries = mistakes.log(conn, enabled)
    kinds = [(e["kind"], e["category"], e["how"]) for e in entries]
    assert ("lesson", "config", "given") in kinds
    assert ("failure", "logic", "rules") in kinds
    loops = [e for e in entries if e["category"] == "loop"]
    assert len(loops) == 1 and loops[0]["how"] == "failed 3 times this session"


def end(repo, session):
    return hook(
        "SessionEnd", payload("claude-code", "SessionEnd", cwd=str(repo), session_id=session)
    )


def test_three_of_a_kind_in_a_month_propose_an_insight_never_a_rule(conn, enabled, repo):
    for i in range(3):
        fail(repo, f"curl https://api.example.com/{i}", f"s{i}", "Exit code 28\ntimed out")
    assert candidates.pending(conn, enabled, kind="insight") == []  # looked for at the end
    assert end(repo, "s2").returncode == 0
    (insight,) = candidates.pending(conn, enabled, kind="insight")
    assert insight["fields"]["title"] == "3 timeout mistakes in 30 days"
    assert "category:timeout" in insight["fields"]["tags"]
    assert {"command": "curl https://api.example.com/2 (exit 28)"} in insight["evidence"]
    fail(repo, "curl https://api.example.com/9", "s9", "Exit code 28\ntimed out")
    end(repo, "s9")
    (again,) = candidates.pending(conn, enabled, kind="insight")  # refreshed, not repeated
    assert again["id"] == insight["id"] and again["fields"]["title"].startswith("4 timeout")
    done = candidates.approve(conn, enabled, insight["id"])
    assert done["memory"]["type"] == "lesson" and "insight" in done["memory"]["tags"]


def test_people_read_the_log_with_the_cli(conn, enabled, repo):
    fail(repo, "pytest -x", "s1", "Exit code 1\nE   TypeError: bad")
    out = subprocess.run(
        [sys.executable, "-m", "waymark", "errors", "--json"], cwd=repo, capture_output=True,
        text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["counts"] == {"code": 1}
    assert data["entries"][0]["text"] == "pytest -x (exit 1)"
