"""Checkpoints through the library: operations, conflicts, budget, lessons, evidence."""

from __future__ import annotations

import os

import pytest

from waymark.errors import Conflict, InvalidArgument, InvalidScope, NotFound, TargetNotFound
from waymark.handoff import checkpoints as cp

FULL = {
    "objective": "Add retry to the payment client",
    "progress": "wrote the backoff helper",
    "decisions": [{"decision": "exponential backoff", "why": "the provider rate-limits"}],
    "failed_approaches": {"approach": "fixed 1 s sleep", "why_failed": "still hit 429s"},
    "blockers": [],
    "tests": [{"command": "pytest tests/test_pay.py", "result": "pass"}, "ruff check"],
    "evidence": [{"path": "README.md", "note": "documents the flag"}],
    "next_action": "wire the helper into PaymentClient.charge",
    "relevant_files": ["src/pkg/core.py"],
    "lessons": [
        {
            "trigger": "tests passed locally",
            "mistaken_assumption": "CI has the key",
            "correction": "CI lacks STRIPE_KEY",
            "prevention": "check CI secrets first",
        }
    ],
}


def test_create_stores_every_field_and_a_first_revision(conn, project):
    c = cp.create(conn, project, FULL, cp.Origin(client="codex", session_id="s1"))
    body = c.revision.body
    assert c.status == "active" and c.revision.seq == 1 and c.revision.operation == "create"
    assert body["progress"] == ["wrote the backoff helper"]  # a string became a list of one
    assert body["failed_approaches"] == [
        {"approach": "fixed 1 s sleep", "why_failed": "still hit 429s"}
    ]
    assert body["tests"][1] == {"command": "ruff check", "result": "not_run"}
    assert body["evidence"][0]["path"] == "README.md" and len(body["evidence"][0]["sha256"]) == 64
    assert body["relevant_files"] == ["src/pkg/core.py"]
    assert c.revision.session_id == "s1" and c.revision.client == "codex"
    assert "Next action: wire the helper" in c.render()
    assert cp.active(conn, project).id == c.id


def test_revise_carries_unset_fields_and_keeps_old_revisions(conn, project):
    c = cp.create(conn, project, FULL)
    r2 = cp.revise(conn, project, c.id, c.revision.id, {"next_action": "run the e2e suite"})
    assert r2.revision.seq == 2 and r2.revision.body["objective"] == FULL["objective"]
    assert r2.revision.body["next_action"] == "run the e2e suite"
    history = cp.revisions(conn, c.id)
    assert [r.seq for r in history] == [1, 2]
    assert history[0].body["next_action"] == FULL["next_action"]  # immutable


def test_a_stale_expected_revision_is_a_conflict_naming_the_current_one(conn, project):
    c = cp.create(conn, project, FULL)
    r2 = cp.revise(conn, project, c.id, c.revision.id, {"progress": ["more"]})
    with pytest.raises(Conflict) as err:
        cp.revise(conn, project, c.id, c.revision.id, {"progress": ["other"]})
    assert err.value.details["current_revision_id"] == r2.revision.id
    assert r2.revision.id in err.value.message
    with pytest.raises(InvalidArgument):
        cp.revise(conn, project, c.id, "", {"progress": ["x"]})


def test_complete_and_abandon_end_the_checkpoint(conn, project):
    c = cp.create(conn, project, FULL)
    done = cp.revise(conn, project, c.id, c.revision.id, {}, operation="complete")
    assert done.status == "completed" and cp.active(conn, project) is None
    with pytest.raises(Conflict):
        cp.revise(conn, project, c.id, done.revision.id, {"progress": ["x"]})
    other = cp.create(conn, project, {"objective": "spike"})
    gone = cp.revise(conn, project, other.id, other.revision.id, {}, operation="abandon")
    assert gone.status == "abandoned"


def test_record_lesson_appends_without_restating(conn, project):
    c = cp.create(conn, project, FULL)
    r = cp.revise(
        conn,
        project,
        c.id,
        c.revision.id,
        {"lessons": "pin the SDK version"},
        operation="record_lesson",
    )
    assert [x["correction"] for x in r.revision.body["lessons"]] == [
        "CI lacks STRIPE_KEY",
        "pin the SDK version",
    ]
    assert r.revision.body["next_action"] == FULL["next_action"]
    with pytest.raises(InvalidArgument):
        cp.revise(
            conn,
            project,
            c.id,
            r.revision.id,
            {"lessons": "x", "progress": "y"},
            operation="record_lesson",
        )


def test_lessons_left_out_come_back_as_historical_until_the_end(conn, project):
    c = cp.create(conn, project, FULL)
    r = cp.revise(conn, project, c.id, c.revision.id, {"lessons": ["new lesson"]})
    got = cp.lessons(conn, r)
    assert [(x["correction"], x["historical"]) for x in got] == [
        ("new lesson", False),
        ("CI lacks STRIPE_KEY", True),
    ]
    done = cp.revise(conn, project, c.id, r.revision.id, {}, operation="complete")
    assert [x["correction"] for x in cp.lessons(conn, done)] == ["new lesson"]


def test_over_budget_is_refused_with_the_measured_size_and_nothing_saved(conn, project):
    big = {"objective": "x", "progress": ["step " + "detail " * 60 for _ in range(8)]}
    with pytest.raises(InvalidArgument) as err:
        cp.create(conn, project, big)
    assert err.value.details["tokens"] > 600 and err.value.details["budget"] == 600
    assert conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0] == 0
    assert cp.create(conn, project, big, budget=5000).revision.tokens > 600


def test_evidence_freshness_for_unchanged_changed_deleted_and_unreadable(conn, project, repo):
    for name in ("same.txt", "edit.txt", "gone.txt", "locked.txt"):
        (repo / name).write_text(name, encoding="utf-8")
    c = cp.create(
        conn,
        project,
        {"objective": "o", "evidence": ["same.txt", "edit.txt", "gone.txt", "locked.txt"]},
    )
    fresh = cp.freshness(c, project.files)
    assert fresh["state"] == "FRESH"
    (repo / "edit.txt").write_text("changed", encoding="utf-8")
    os.remove(repo / "gone.txt")
    os.remove(repo / "locked.txt")
    os.mkdir(repo / "locked.txt")  # exists but cannot be read as a file
    states = {e["path"]: e["state"] for e in cp.freshness(c, project.files)["evidence"]}
    assert states == {
        "same.txt": "UNCHANGED",
        "edit.txt": "CHANGED",
        "gone.txt": "MISSING",
        "locked.txt": "UNKNOWN",
    }
    assert cp.freshness(c, project.files)["state"] == "RECHECK_REQUIRED"
    assert (
        cp.revisions(conn, c.id)[0].body["evidence"][1]["sha256"]
        == c.revision.body["evidence"][1]["sha256"]
    )


def test_evidence_over_the_file_budget_is_unknown_never_unchanged(conn, project, repo):
    (repo / "big.bin").write_bytes(b"x" * (2 * 1024 * 1024 + 1))
    c = cp.create(conn, project, {"objective": "o", "evidence": ["big.bin"]})
    assert c.revision.body["evidence"][0]["sha256"] is None
    assert cp.freshness(c, project.files)["evidence"][0]["state"] == "UNKNOWN"


@pytest.mark.parametrize(
    ("path", "error"),
    [("../escape.txt", InvalidScope), (".git/HEAD", InvalidScope), ("missing.txt", TargetNotFound)],
)
def test_bad_evidence_paths_are_refused(conn, project, repo, path, error):
    (repo.parent / "escape.txt").write_text("x", encoding="utf-8")
    with pytest.raises(error):
        cp.create(conn, project, {"objective": "o", "evidence": [path]})


def test_more_than_ten_evidence_links_are_refused(conn, project):
    with pytest.raises(InvalidArgument):
        cp.create(conn, project, {"objective": "o", "evidence": ["README.md"] * 11})


def test_secrets_and_private_spans_are_scrubbed(conn, project):
    c = cp.create(
        conn, project, {"objective": "rotate key AKIAIOSFODNN7EXAMPLE <private>ssh</private>"}
    )
    assert "AKIAIOSFODNN7EXAMPLE" not in c.revision.body["objective"]
    assert "ssh" not in c.revision.body["objective"]


def test_a_save_clears_the_handoff_marker_of_its_session(conn, project):
    conn.execute(
        "INSERT INTO handoff_markers (project_id, session_id, reason, created_at)"
        " VALUES (?, 's0', 'unsaved', 'then')",
        (project.id,),
    )
    c = cp.create(conn, project, {"objective": "o"}, cp.Origin(session_id="s0"))
    row = conn.execute("SELECT cleared_by FROM handoff_markers").fetchone()
    assert row[0] == c.revision.id


def test_record_event_is_idempotent_by_source_key(conn, project):
    first = cp.record_event(
        conn,
        project,
        kind="failure",
        summary="migration 12 failed on prod",
        source_key="ci-run-881",
        evidence_items=["README.md"],
    )
    again = cp.record_event(
        conn,
        project,
        kind="failure",
        summary="migration 12 failed on prod",
        source_key="ci-run-881",
    )
    assert first["created"] and not again["created"]
    assert again["memory"]["id"] == first["memory"]["id"]
    assert first["memory"]["type"] == "incident" and "failure" in first["memory"]["tags"]
    with pytest.raises(InvalidArgument):
        cp.record_event(conn, project, kind="gossip", summary="x", source_key="k")


def test_unknown_checkpoint_and_fields(conn, project):
    with pytest.raises(NotFound):
        cp.get(conn, project, "nope")
    with pytest.raises(InvalidArgument):
        cp.create(conn, project, {"objective": "o", "mood": "happy"})
    with pytest.raises(InvalidArgument):
        cp.create(conn, project, {"progress": "no objective"})
    with pytest.raises(InvalidArgument):
        cp.create(conn, project, {"objective": "o", "tests": [{"command": "x", "result": "meh"}]})


def test_an_event_recorded_again_with_another_summary_is_a_conflict(conn, project):
    first = cp.record_event(
        conn, project, kind="failure", summary="pytest -x failed", source_key="run-7"
    )
    again = cp.record_event(
        conn, project, kind="failure", summary="pytest -x failed", source_key="run-7"
    )
    assert again == {"memory": first["memory"], "created": False}
    with pytest.raises(Conflict, match="another summary") as err:
        cp.record_event(conn, project, kind="failure", summary="it passed", source_key="run-7")
    assert err.value.details["id"] == first["memory"]["id"]


def test_a_checkpoint_is_found_by_a_unique_prefix_of_its_id_in_any_case(conn, project):
    made = cp.create(conn, project, {"objective": "o", "next_action": "n"})
    short = made.id[:12].lower()
    assert cp.get(conn, project, short).id == made.id
    revised = cp.revise(conn, project, short, made.revision.id, {"next_action": "m"})
    assert revised.id == made.id and revised.revision.body["next_action"] == "m"
