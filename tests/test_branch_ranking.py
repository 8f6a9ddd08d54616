"""Ranking prefers the branch checked out now: its decisions (a bounded multiplier) and an
active checkpoint saved on it."""

from __future__ import annotations

import subprocess

from conftest import git_env
from test_hooks import context_of, hook, payload
from waymark.handoff import checkpoints
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.recall import ranked


def decide(conn, project, text, branch):
    draft = make_draft(project, type="decision", content=text, git_branch=branch)
    return store.remember(conn, project, draft).memory


def test_a_decision_of_the_current_branch_ranks_above_its_twin_elsewhere(conn, project):
    on_main = decide(conn, project, "cache invoices in redis for one hour", "main")
    on_feat = decide(conn, project, "cache invoices in redis for ten minutes", "feat/ttl")
    for branch, first in (("feat/ttl", on_feat), ("main", on_main)):
        hits = ranked.recall(conn, project, "cache invoices redis", current_branch=branch)
        assert hits[0].memory.id == first.id
        assert hits[0].explain["multipliers"]["branch"] == 1.15
        assert hits[1].explain["multipliers"]["branch"] == 1.0
    plain = ranked.recall(conn, project, "cache invoices redis")
    assert {h.explain["multipliers"]["branch"] for h in plain} == {1.0}  # no branch, no change


def test_only_decisions_are_preferred_by_branch(conn, project):
    note = store.remember(
        conn, project, make_draft(project, type="note", content="redis ttl", git_branch="b")
    ).memory
    hits = ranked.recall(conn, project, "redis ttl", current_branch="b")
    assert hits[0].memory.id == note.id and hits[0].explain["multipliers"]["branch"] == 1.0


def test_a_finished_tasks_lessons_from_the_branch_checked_out_come_first(
    conn, enabled, repo, tmp_path
):
    for i, branch in enumerate(("feat", "main", "main", "main", "main")):  # feat: the oldest
        made = checkpoints.create(
            conn, enabled, {"objective": f"task {i}", "lessons": [f"lesson from {branch} {i}"]},
            checkpoints.Origin(actor="agent", git_branch=branch),
        )  # fmt: skip
        checkpoints.revise(
            conn, enabled, made.id, made.revision.id, {}, operation="complete",
            origin=checkpoints.Origin(actor="agent", git_branch=branch),
        )  # fmt: skip
    subprocess.run(
        ["git", "-C", str(repo), "checkout", "-q", "-b", "feat"], check=True, env=git_env(tmp_path)
    )
    text = context_of(hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo))))
    lessons = section_lines(text, "Lessons")
    assert "lesson from feat" in lessons[0]  # first, though the oldest
    assert len(lessons) == 4  # still at most four


def section_lines(text: str, title: str) -> list[str]:
    body = text.split(f"## {title}\n", 1)[1]
    return body.split("\n\n", 1)[0].splitlines()
