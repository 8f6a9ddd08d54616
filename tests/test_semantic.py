"""The semantic tier's plumbing: the server's overlapped path and the warm request's options."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_real_model
from test_vectors import FakeEmbedder, remember
from waymark.recall import embed, semantic, vectors
from waymark.recall import ranked as recall


class FailingEmbedder(FakeEmbedder):
    def embed_query(self, text: str) -> np.ndarray:
        raise RuntimeError("the model fell over")


@pytest.fixture
def indexed(conn, project):
    embedder = FakeEmbedder(dim=32)
    for text in ("deploy the billing worker", "rotate the signing keys", "flaky upload test"):
        remember(conn, project, text)
    vectors.index_missing(conn, embedder, project.id)
    return embedder


def test_overlapped_finds_what_embedding_then_searching_finds(conn, project, indexed):
    for query in ("billing deploy", "signing keys rotation", "upload"):
        collect = semantic.overlapped(conn, project.id, query, indexed)
        sequential = vectors.search(
            conn, project.id, indexed.embed_query(query), semantic.CANDIDATES, indexed.model
        )
        assert collect() == sequential and sequential


def test_overlapped_sees_a_memory_written_just_before_it_was_asked(conn, project, indexed):
    fresh = remember(conn, project, "cache invalidation on deploy")
    vectors.index_missing(conn, indexed, project.id)
    rowid = conn.execute("SELECT rowid FROM memories WHERE id = ?", (fresh.id,)).fetchone()[0]
    found = semantic.overlapped(conn, project.id, "cache invalidation on deploy", indexed)()
    assert found[0][0] == rowid and found[0][1] == pytest.approx(1.0, abs=1e-5)


def test_overlapped_with_a_failing_model_leaves_recall_lexical(conn, project, indexed):
    collect = semantic.overlapped(conn, project.id, "billing", FailingEmbedder(dim=32))
    assert collect() == []
    hits = recall.recall(
        conn, project, "billing", semantic=semantic.overlapped(
            conn, project.id, "billing", FailingEmbedder(dim=32)))  # fmt: skip
    assert hits and all("semantic" not in h.explain["tiers"] for h in hits)


def test_prepare_refuses_a_k_below_one(conn, project, indexed):
    with pytest.raises(Exception, match="k must be at least 1"):
        vectors.index_for(conn).prepare(project.id, 0, indexed.model, indexed.dim)


@pytest.mark.parametrize("bad", [0, 7, "64", 12.5, True])
def test_answer_refuses_a_bad_max_tokens(conn, project, bad):
    reply = semantic.answer(
        conn, {"op": "semantic", "project_id": project.id, "queries": ["x"], "max_tokens": bad}
    )
    assert reply == {"ok": False, "error": "max_tokens must be an integer of at least 8"}


def test_answer_with_max_tokens_embeds_only_the_opening_of_a_long_prompt(conn, project):
    embedder = embed.open_embedder(allow_download=True)  # WAYMARK_EMBED_MODEL_DIR, or fetched
    remember(conn, project, "deploy the billing worker to staging")
    vectors.index_missing(conn, embedder, project.id)
    prompt = "deploy the billing worker " + "and then a long pasted log line " * 40
    ask = {"op": "semantic", "project_id": project.id, "queries": [prompt], "k": 5}
    whole = semantic.answer(conn, ask)
    opening = semantic.answer(conn, dict(ask, max_tokens=8))
    assert whole["ok"] and opening["ok"]
    assert opening["hits"][0][0][1] > whole["hits"][0][0][1] + 0.2


def test_answer_finds_the_project_by_cwd_only_where_capture_is_on(conn, project, repo, tmp_path):
    from waymark import settings
    from waymark.projects import capture

    settings.set_value(conn, "capture.all_git_repos", False)  # capture per project
    embedder = embed.open_embedder(allow_download=True)
    remember(conn, project, "deploy the billing worker to staging")
    vectors.index_missing(conn, embedder, project.id)
    ask = {"op": "semantic", "cwd": str(repo / "src"), "queries": ["billing deploy"], "k": 3}

    off = semantic.answer(conn, ask)
    assert off["ok"] is False and "capture is off" in off["error"]

    capture.set_enabled(conn, project, True)
    on = semantic.answer(conn, ask)
    assert (
        on["ok"]
        and on["hits"][0][0][0]
        == conn.execute(
            "SELECT rowid FROM memories WHERE content LIKE 'deploy the billing%'"
        ).fetchone()[0]
    )

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    projects = conn.execute("SELECT count(*) FROM projects").fetchone()[0]
    refused = semantic.answer(conn, dict(ask, cwd=str(elsewhere)))
    assert refused["ok"] is False and "no Waymark project" in refused["error"]
    assert conn.execute("SELECT count(*) FROM projects").fetchone()[0] == projects  # nothing bound


@needs_real_model
def test_cli_hybrid_recall_shows_only_what_clears_the_hooks_relevance_floor(conn, project, repo):
    import json
    import subprocess
    import sys

    remember(conn, project, "Deploy the billing worker to staging before production")
    for text in (
        "Lunch orders go in the kitchen channel",
        "The office plants need water",
        "Team photos are in the shared drive",
        "Parking permits renew in March",
    ):
        remember(conn, project, text)
    conn.close()
    run = [sys.executable, "-m", "waymark"]
    assert subprocess.run([*run, "index"], cwd=repo, capture_output=True).returncode == 0
    done = subprocess.run(
        [*run, "recall", "how do we deploy the billing worker", "--json"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    answer = json.loads(done.stdout)
    assert answer.get("semantic") is True, answer
    assert [r["memory"]["content"] for r in answer["results"]] == [
        "Deploy the billing worker to staging before production"
    ]
    assert answer["below_relevance_floor"] >= 1
