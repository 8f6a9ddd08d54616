"""The error log and its patterns: categories by rules, insights proposed for review."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from test_hooks import hook, payload
from test_pre_tool_use import edited, fail, passed
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
    assert insight["fields"]["title"] == "`curl`: timed out"
    assert "failed 3 times in 30 days with: timed out" in insight["fields"]["content"]
    assert "category:timeout" in insight["fields"]["tags"]
    assert {"command": "curl https://api.example.com/2 (exit 28)"} in insight["evidence"]
    fail(repo, "curl https://api.example.com/9", "s9", "Exit code 28\ntimed out")
    end(repo, "s9")
    (again,) = candidates.pending(conn, enabled, kind="insight")  # refreshed, not repeated
    assert again["id"] == insight["id"] and "failed 4 times" in again["fields"]["content"]
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


MISSING = "Traceback (most recent call last):\n  File \"{path}\", line {n}, in <module>\nE   ModuleNotFoundError: No module named 'requests_mock'"


def test_identical_failures_become_one_insight_naming_the_error_once_and_its_fix(
    conn, enabled, repo
):
    for i in range(4):
        error = MISSING.format(path=f"/tmp/run{i}/tests/test_api.py", n=10 + i)
        fail(repo, f"pytest -x tests/test_api.py::test_{i}", f"s{i}", error)
    for i in range(3):  # another cause in the same category: a separate insight
        fail(repo, "npx tsc --noEmit", f"t{i}", "Exit code 127\nsh: 1: tsc: not found")
    passed(repo, "pip install requests-mock", "s3")
    edited(repo, "requirements.txt", "s3")
    passed(repo, "pytest -x tests/test_api.py::test_3", "s3")
    end(repo, "s3")
    found = {c["fields"]["title"]: c for c in candidates.pending(conn, enabled, kind="insight")}
    assert set(found) == {
        "`pytest`: ModuleNotFoundError: No module named 'requests_mock'",
        "`npx tsc`: sh: 1: tsc: not found",
    }
    content = found["`pytest`: ModuleNotFoundError: No module named 'requests_mock'"]["fields"][
        "content"
    ]
    assert content.count("No module named 'requests_mock'") == 1  # the error, once
    assert "failed 4 times in 30 days" in content
    # the fix with its argument, as the failure hint and the learned skill say it
    assert (
        "What fixed it: editing requirements.txt, running `pip install requests-mock`." in content
    )
    tsc = found["`npx tsc`: sh: 1: tsc: not found"]["fields"]["content"]
    assert "Not fixed yet" in tsc


def test_an_approved_insight_is_never_counted_as_a_new_mistake(conn, enabled, repo):
    for i in range(3):
        fail(repo, "npx tsc", f"t{i}", "Exit code 127\nsh: 1: tsc: not found")
    end(repo, "t2")
    (insight,) = candidates.pending(conn, enabled, kind="insight")
    candidates.approve(conn, enabled, insight["id"])
    kinds = [e["kind"] for e in mistakes.log(conn, enabled)]
    assert kinds == ["failure"] * 3


@pytest.mark.parametrize(
    ("command", "tail", "expected"),
    [
        ("pytest -x a.py", "E   ModuleNotFoundError: No module named 'x'",
         "pytest: ModuleNotFoundError: No module named 'x'"),
        ("/usr/bin/python3 /srv/app/run.py --port 8080",
         "  File \"/srv/app/run.py\", line 3\nKeyError: 'user 1234'",
         "python3: KeyError: 'user <n>'"),
        ("git push origin main", "error: failed to push some refs to /srv/repo.git",
         "git push: error: failed to push some refs to <path>"),
        ("make", "make: *** [Makefile:12: build] Error 2\n", "make: make: *** [Makefile:<n>: build] Error <n>"),
        ("cargo build", "", "cargo build"),
    ],
)  # fmt: skip
def test_a_signature_keeps_the_program_and_the_error_shape_without_paths_and_numbers(
    command, tail, expected
):
    from waymark.curation import signature

    assert signature.of(command, tail) == expected
