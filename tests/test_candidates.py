"""The review queue: candidates proposed, listed, approved or rejected, never recalled."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import call_tool
from test_hooks import context_of, hook, payload
from test_pre_tool_use import edited, fail, passed
from waymark.curation import candidates
from waymark.errors import Conflict, InvalidArgument, NotFound
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.projects.resolve import resolve
from waymark.recall import ranked
from waymark.storage import connection as db

SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def propose(conn, project, fingerprint="f1", **kw):
    kw.setdefault("fields", {"type": "lesson", "content": "Run the migrations before the tests"})
    kw.setdefault("reason", "seen twice")
    kw.setdefault("kind", "failure_fix")
    with db.write(conn):
        return candidates.propose(conn, project.id, fingerprint=fingerprint, **kw)


def cli(*args, cwd):
    done = subprocess.run(
        [sys.executable, "-m", "waymark", *args], cwd=cwd, capture_output=True, text=True
    )
    return done


def test_a_candidate_waits_unrecalled_and_approving_makes_one_memory_with_its_evidence(
    conn, project
):
    row, new = propose(conn, project, evidence=[{"command": "make migrate"}])
    assert new and row["status"] == "pending" and row["id"].startswith("cand_")
    assert ranked.recall(conn, project, "migrations before the tests") == []
    done = candidates.approve(conn, project, row["id"][:9], note="yes")
    memory = done["memory"]
    assert done["created"] and memory["type"] == "lesson"
    assert memory["evidence"] == [{"command": "make migrate"}]
    assert memory["source_ref"] == f"candidate:{row['id']}"
    assert done["candidate"]["status"] == "approved"
    assert done["candidate"]["memory_id"] == memory["id"]
    again = candidates.approve(conn, project, row["id"])
    assert again["memory"]["id"] == memory["id"] and not again["created"]
    hits = ranked.recall(conn, project, "migrations before the tests")
    assert [h.memory.id for h in hits] == [memory["id"]]
    with pytest.raises(Conflict):
        candidates.reject(conn, project, row["id"])


def test_the_same_inference_is_one_candidate_and_a_rejected_one_is_not_proposed_again(
    conn, project
):
    first, _ = propose(conn, project, reason="seen twice")
    second, new = propose(conn, project, reason="seen three times")
    assert not new and second["id"] == first["id"] and second["reason"] == "seen three times"
    assert len(candidates.pending(conn, project)) == 1
    candidates.reject(conn, project, first["id"], note="not a real pattern")
    third, new = propose(conn, project, reason="seen four times")
    assert not new and third["status"] == "rejected" and third["reason"] == "seen three times"
    assert candidates.pending(conn, project) == []
    (shown,) = candidates.pending(conn, project, statuses=["rejected"])
    assert shown["review_note"] == "not a real pattern"
    assert candidates.counts(conn, project.id) == {"pending": 0, "approved": 0, "rejected": 1}


def test_an_exact_active_duplicate_is_reused(conn, project):
    draft = make_draft(project, type="lesson", content="Run the migrations before the tests")
    existing = store.remember(conn, project, draft).memory
    row, _ = propose(conn, project)
    done = candidates.approve(conn, project, row["id"])
    assert done["memory"]["id"] == existing.id and not done["created"]


def test_a_merge_supersedes_every_source_or_nothing(conn, project):
    a = store.remember(
        conn, project, make_draft(project, type="fact", content="CI uses py3.11")
    ).memory
    b = store.remember(
        conn, project, make_draft(project, type="fact", content="CI runs 3.11")
    ).memory
    fields = {"type": "fact", "content": "CI runs Python 3.11"}
    row, _ = propose(conn, project, "merge", kind="consolidation", action="supersede",
                     sources=[a.id, b.id], fields=fields)  # fmt: skip
    done = candidates.approve(conn, project, row["id"])
    assert done["changed"] == [a.id, b.id]
    assert store.get(conn, a.id).superseded_by == done["memory"]["id"]
    assert store.get(conn, b.id).superseded_by == done["memory"]["id"]
    # A merge naming a memory no longer active changes nothing at all.
    c = store.remember(conn, project, make_draft(project, type="fact", content="CI caches")).memory
    store.archive(conn, project, c.id)
    d = store.remember(conn, project, make_draft(project, type="fact", content="CI cache")).memory
    row, _ = propose(conn, project, "merge2", kind="consolidation", action="supersede",
                     sources=[d.id, c.id], fields={"type": "fact", "content": "CI caches pip"})  # fmt: skip
    with pytest.raises(Conflict):
        candidates.approve(conn, project, row["id"])
    assert store.get(conn, d.id).status == "active"
    assert candidates.get(conn, project, row["id"])["status"] == "pending"


def test_an_archive_candidate_archives_what_it_names(conn, project):
    a = store.remember(
        conn, project, make_draft(project, type="fact", content="Old port 8080")
    ).memory
    row, _ = propose(conn, project, "stale", kind="feedback", action="archive", sources=[a.id],
                     fields={}, reason="marked stale")  # fmt: skip
    done = candidates.approve(conn, project, row["id"])
    assert done["memory"] is None and done["changed"] == [a.id]
    assert store.get(conn, a.id).status == "archived"


def test_every_field_of_a_candidate_is_redacted_before_it_is_stored(conn, project):
    row, _ = propose(
        conn,
        project,
        fields={"type": "lesson", "content": f"token {SECRET}", "title": f"t {SECRET}"},
        reason=f"saw {SECRET}",
        evidence=[{"command": f"curl -H 'Authorization: token {SECRET}'"}],
    )
    candidates.reject(conn, project, row["id"], note=f"no {SECRET}")
    raw = conn.execute("SELECT * FROM candidates").fetchall()
    assert SECRET not in repr(raw)
    assert "[REDACTED" in candidates.get(conn, project, row["id"])["fields"]["content"]


def test_bad_proposals_and_other_projects_candidates_are_refused(conn, project, tmp_path):
    with pytest.raises(InvalidArgument):
        propose(conn, project, kind="guess")
    with pytest.raises(InvalidArgument):
        propose(conn, project, fields={"type": "lesson"})  # no content
    with pytest.raises(InvalidArgument):
        propose(conn, project, action="archive", fields={})  # names nothing
    row, _ = propose(conn, project)
    other = tmp_path / "other"
    other.mkdir()
    elsewhere = resolve(conn, str(other))
    with pytest.raises(NotFound):
        candidates.approve(conn, elsewhere, row["id"])
    with pytest.raises(NotFound):
        candidates.approve(conn, project, "cand_ZZZZZZ")


def test_people_review_with_the_cli_and_errors_keep_their_codes(conn, project, repo):
    row, _ = propose(conn, project)
    listed = cli("candidates", "--json", cwd=repo)
    assert listed.returncode == 0, listed.stderr
    (shown,) = json.loads(listed.stdout)["results"]
    assert shown["id"] == row["id"] and shown["title"] == "Run the migrations before the tests"
    assert "Run the migrations" in cli("candidates", cwd=repo).stdout
    done = cli("review", row["id"], "--approve", "--reason", "ok", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    memory_id = json.loads(done.stdout)["memory"]["id"]
    assert store.get(conn, memory_id).content == "Run the migrations before the tests"
    missing = cli("review", "cand_NOPE1234", "--reject", "--json", cwd=repo)
    assert missing.returncode == 1 and json.loads(missing.stdout)["code"] == "not_found"
    refused = cli("review", row["id"], "--reject", "--json", cwd=repo)
    assert refused.returncode == 1 and json.loads(refused.stdout)["code"] == "conflict"
    usage = cli("review", row["id"], "--json", cwd=repo)
    assert usage.returncode == 2 and json.loads(usage.stdout)["code"] == "usage"


def test_a_command_fixed_the_same_way_twice_proposes_a_lesson_never_a_memory(conn, enabled, repo):
    command = "pytest -x tests/test_core.py"
    for session in ("s1", "s2"):
        fail(repo, command, session, "Exit code 1\nE   ImportError: no module named core")
        edited(repo, "src/pkg/core.py", session)
        passed(repo, command, session)
    (lesson,) = candidates.pending(conn, enabled)
    assert lesson["kind"] == "failure_fix" and lesson["fields"]["type"] == "lesson"
    assert (
        command in lesson["fields"]["content"] and "src/pkg/core.py" in lesson["fields"]["content"]
    )
    assert "ImportError" in lesson["fields"]["content"]
    assert {"path": "src/pkg/core.py"} in lesson["evidence"]
    assert ranked.recall(conn, enabled, "ImportError core") == []
    # The SessionStart packet says how many wait, never what they say.
    start = hook(
        "SessionStart", payload("claude-code", "SessionStart", cwd=str(repo), session_id="s3")
    )
    text = context_of(start)
    assert "1 proposed memory waits for review (`waymark candidates`)" in text
    assert "ImportError" not in text


def test_agents_see_candidates_in_status_and_review_them_through_it(conn, project, repo):
    first, _ = propose(conn, project, "a")
    second, _ = propose(
        conn, project, "b", fields={"type": "warning", "content": "Never force-push main"}
    )
    shown = call_tool(repo, "status", {}).structured_content["candidates"]
    assert shown["pending"] == 2
    assert {c["id"] for c in shown["waiting"]} == {first["id"], second["id"]}
    assert {"id", "kind", "action", "title", "reason"} == set(shown["waiting"][0])
    review = {first["id"]: "approve", second["id"]: "reject"}
    after = call_tool(repo, "status", {"review": review}).structured_content
    assert after["candidates"] == {"pending": 0, "approved": 1, "rejected": 1, "waiting": []}
    approved = candidates.get(conn, project, first["id"])
    assert approved["reviewed_by"] == "agent"
    assert store.get(conn, approved["memory_id"]).content == "Run the migrations before the tests"
    bad = call_tool(repo, "status", {"review": {"cand_NOPE1234": "approve"}})
    assert bad.is_error and '"code": "not_found"' in bad.content[0].text
    text = cli("status", cwd=repo).stdout
    assert "candidates  0 waiting for review" in text
