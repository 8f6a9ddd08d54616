"""Feedback on recall: bounded, scoped to the query it was given on, stale/wrong reviewed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import call_tool
from waymark.curation import candidates, feedback
from waymark.errors import InvalidArgument, NotFound
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.projects.resolve import resolve
from waymark.recall import ranked
from waymark.recall.knobs import DEFAULT


def saved(conn, project, content, **kw):
    kw.setdefault("type", "fact")
    return store.remember(conn, project, make_draft(project, content=content, **kw)).memory


def order(conn, project, query):
    return [h.memory.id for h in ranked.recall(conn, project, query)]


@pytest.fixture
def two(conn, project):
    a = saved(conn, project, "The deploy script lives in ops/deploy.sh and needs VPN access")
    b = saved(conn, project, "The deploy pipeline runs from CI on every tag push")
    return a, b


def test_helpful_moves_a_memory_up_for_that_query_within_its_bound(conn, project, two):
    a, b = two
    query = "how does the deploy run"
    first = ranked.recall(conn, project, query)
    low, was = first[-1].memory.id, first[-1].score
    for _ in range(10):
        feedback.give(conn, project, low, "helpful", query=query)
    hits = ranked.recall(conn, project, query)
    mine = next(h for h in hits if h.memory.id == low)
    factor = mine.explain["multipliers"]["feedback"]
    assert 1.0 < factor <= 1.0 + DEFAULT.feedback_boost
    assert mine.score == pytest.approx(was * factor)
    # A different question is ranked exactly as before: the verdicts were not about it.
    other = "where is the VPN needed"
    before = {h.memory.id: h.score for h in ranked.recall(conn, project, other)}
    for h in ranked.recall(conn, project, other):
        assert h.explain["multipliers"]["feedback"] == 1.0
        assert h.score == pytest.approx(before[h.memory.id])


def test_not_helpful_moves_it_down_and_a_rephrasing_counts_too(conn, project, two):
    query = "how does the deploy run"
    top = order(conn, project, query)[0]
    feedback.give(conn, project, top, "not_helpful", query=query)
    feedback.give(conn, project, top, "not_helpful", query=query)
    hit = next(h for h in ranked.recall(conn, project, "how does deploy run") if h.memory.id == top)
    assert 1.0 - DEFAULT.feedback_boost <= hit.explain["multipliers"]["feedback"] < 1.0


def test_a_verdict_without_its_query_is_recorded_but_moves_nothing(conn, project, two):
    a, _ = two
    done = feedback.give(conn, project, a.id, "helpful")
    assert done["counts"]["helpful"] == 1 and not done["ranks"]
    for h in ranked.recall(conn, project, "deploy"):
        assert h.explain["multipliers"]["feedback"] == 1.0


def test_stale_or_wrong_proposes_the_archive_for_review_never_archives(conn, project, two):
    a, _ = two
    done = feedback.give(conn, project, a.id, "stale", note="moved to ops/ship.sh")
    assert store.get(conn, a.id).status == "active"
    (waiting,) = candidates.pending(conn, project)
    assert waiting["id"] == done["candidate"]
    assert (waiting["kind"], waiting["action"], waiting["sources"]) == (
        "feedback",
        "archive",
        [a.id],
    )
    assert waiting["reason"] == "marked stale by user: moved to ops/ship.sh"
    again = feedback.give(conn, project, a.id, "wrong")
    assert again["candidate"] == done["candidate"]  # one proposal per memory
    candidates.approve(conn, project, done["candidate"])
    assert store.get(conn, a.id).status == "archived"


def test_bad_verdicts_and_other_projects_memories_are_refused(conn, project, two, tmp_path):
    a, _ = two
    with pytest.raises(InvalidArgument):
        feedback.give(conn, project, a.id, "great")
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(NotFound):
        feedback.give(conn, resolve(conn, str(other)), a.id, "helpful")


def test_a_secret_in_the_query_never_reaches_the_file(conn, project, two, waymark_home):
    a, _ = two
    secret = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
    feedback.give(conn, project, a.id, "helpful", query=f"deploy with token {secret}")
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    for path in waymark_home.glob("waymark.db*"):
        assert secret.lower().encode() not in path.read_bytes().lower()


def test_agents_give_feedback_through_status_on_what_they_recalled(conn, project, repo, two):
    query = "how does the deploy run"
    recalled = call_tool(repo, "recall", {"query": query}).structured_content["results"]
    last = recalled[-1]["id"]
    # One server per call in tests: the recall's query is not known to the next call's
    # server, so the verdict is recorded without moving ranking; a live server knows it.
    done = call_tool(repo, "status", {"review": {last: "helpful"}})
    assert not done.is_error, done.content
    rows = conn.execute("SELECT verdict, actor FROM memory_feedback").fetchall()
    assert rows == [("helpful", "agent")]
    bad = call_tool(repo, "status", {"review": {last: "approve"}})
    assert bad.is_error and "not a candidate" in bad.content[0].text


def test_the_server_remembers_which_recall_a_verdict_is_about(conn, project, repo, two):
    import asyncio

    from mcp import Client

    from waymark.server.app import build_server
    from waymark.server.state import State

    query = "how does the deploy run"
    server, state = build_server(State(cwd=str(repo)))

    async def go():
        async with Client(server) as client:
            found = await client.call_tool("recall", {"query": query})
            last = found.structured_content["results"][-1]["id"]
            await client.call_tool("status", {"review": {last: "helpful"}})
            return last

    try:
        last = asyncio.run(go())
    finally:
        state.close()
    terms = conn.execute("SELECT terms FROM memory_feedback").fetchone()[0]
    assert set(json.loads(terms)) >= {"deploy", "run"}
    hit = next(h for h in ranked.recall(conn, project, query) if h.memory.id == last)
    assert hit.explain["multipliers"]["feedback"] > 1.0


def test_people_give_feedback_with_the_cli(conn, project, repo, two):
    a, _ = two
    done = subprocess.run(
        [sys.executable, "-m", "waymark", "feedback", a.id, "not_helpful", "--json"],
        cwd=repo, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["counts"]["not_helpful"] == 1
    text = subprocess.run(
        [sys.executable, "-m", "waymark", "feedback", a.id, "helpful"],
        cwd=repo, capture_output=True, text=True,
    ).stdout  # fmt: skip
    assert "give --query for it to move ranking" in text


def test_the_clis_feedback_query_moves_ranking_for_that_query(conn, project, two, repo, capsys):
    from waymark.cli import main

    query = "how does the deploy run"
    low = order(conn, project, query)[-1]
    for _ in range(3):
        assert main(["feedback", low, "helpful", "--query", query, "--project", str(repo),
                     "--json"]) == 0  # fmt: skip
        done = json.loads(capsys.readouterr().out)
        assert done["ranks"] is True
    mine = next(h for h in ranked.recall(conn, project, query) if h.memory.id == low)
    assert 1.0 < mine.explain["multipliers"]["feedback"] <= 1.0 + DEFAULT.feedback_boost
