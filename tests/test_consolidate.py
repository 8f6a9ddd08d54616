"""Consolidation: groups of near-duplicates and contradictions, proposed, never merged."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from waymark.curation import candidates, consolidate
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.recall import vectors
from waymark.recall.embed import ENGLISH
from waymark.storage.memories import rowids_of
from waymark.storage.vectors import put_vector


def saved(conn, project, content, **kw):
    kw.setdefault("type", "fact")
    for item in kw.get("evidence", []):  # evidence names a file of the project
        path = os.path.join(project.files, item["path"])
        if not os.path.exists(path):
            with open(path, "w", encoding="utf-8") as f:
                f.write("on: push\n")
    return store.remember(conn, project, make_draft(project, content=content, **kw)).memory


def test_near_duplicates_of_one_type_and_scope_form_a_group(conn, project):
    a = saved(conn, project, "CI runs the test suite on Python 3.11 for every push", tags=["ci"])
    b = saved(conn, project, "CI runs the test suite on Python 3.11 for every push to main",
              evidence=[{"path": "ci.yml"}])  # fmt: skip
    c = saved(conn, project, "The CI test suite runs on Python 3.11, for every push")
    saved(conn, project, "CI runs the test suite on Python 3.11 for every push", type="warning")
    saved(conn, project, "Deploys need the VPN and a second reviewer")
    (group,) = consolidate.find(conn, project)
    assert group["kind"] == "duplicates"
    assert group["members"] == [a.id, b.id, c.id]  # oldest first; the warning is another type
    assert all(w.startswith("words agree") for w in group["why"])


def test_a_proposal_names_every_source_and_nothing_merges_until_approved(conn, project):
    a = saved(conn, project, "CI runs the test suite on Python 3.11 for every push", tags=["ci"])
    b = saved(conn, project, "CI runs the test suite on Python 3.11 for every push to main",
              evidence=[{"path": "ci.yml"}], priority=2)  # fmt: skip
    (group,) = consolidate.propose(conn, project)
    assert group["new"]
    assert store.get(conn, a.id).status == store.get(conn, b.id).status == "active"
    again = consolidate.propose(conn, project)
    assert again[0]["candidate"] == group["candidate"] and not again[0]["new"]
    (waiting,) = candidates.pending(conn, project, kind="consolidation")
    assert waiting["sources"] == [a.id, b.id] and waiting["action"] == "supersede"
    assert waiting["fields"]["content"].endswith("to main")  # the most complete text
    assert waiting["fields"]["tags"] == ["ci"] and waiting["fields"]["priority"] == 2
    done = candidates.approve(conn, project, group["candidate"])
    merged = done["memory"]
    assert [e["path"] for e in merged["evidence"]] == ["ci.yml"]
    assert store.get(conn, a.id).superseded_by == merged["id"]
    assert store.get(conn, b.id).superseded_by == merged["id"]
    assert consolidate.find(conn, project) == []


def test_same_title_with_different_text_is_a_possible_contradiction(conn, project):
    old = saved(conn, project, "The API listens on port 8080 behind nginx", title="API port")
    new = saved(conn, project, "Since the move to Kubernetes the ingress terminates TLS on 443",
                title="API port")  # fmt: skip
    (group,) = consolidate.find(conn, project)
    assert group["kind"] == "contradiction" and group["members"] == [old.id, new.id]
    (proposed,) = consolidate.propose(conn, project)
    waiting = candidates.get(conn, project, proposed["candidate"])
    assert waiting["fields"]["content"] == new.content and waiting["sources"] == [old.id, new.id]


def test_vectors_that_agree_group_memories_whose_words_do_not(conn, project):
    a = saved(conn, project, "Staging resets every Monday night")
    b = saved(conn, project, "Each week, early Tuesday, the pre-production database is wiped")
    same = vectors.pack([1.0] + [0.0] * 383)  # one direction: cosine 1
    for rowid in rowids_of(conn, [a.id, b.id]).values():
        put_vector(conn, rowid, ENGLISH.id, ENGLISH.dim, "test", same)
    (group,) = consolidate.find(conn, project)
    assert group["members"] == [a.id, b.id]
    assert group["why"] == ["meaning agrees (cosine 1.00)"]


def test_the_cli_dry_run_proposes_nothing(conn, project, repo):
    saved(conn, project, "CI runs the test suite on Python 3.11 for every push")
    saved(conn, project, "CI runs the test suite on Python 3.11 for every push to main")
    run = lambda *a: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "waymark", "consolidate", *a], cwd=repo, capture_output=True,
        text=True,
    )  # fmt: skip
    dry = run("--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert len(json.loads(dry.stdout)["groups"]) == 1
    assert candidates.pending(conn, project) == []
    assert "nothing was merged" in run().stdout
    assert len(candidates.pending(conn, project, kind="consolidation")) == 1


def test_a_correction_of_a_number_is_a_contradiction_the_newer_text_wins(conn, project):
    old = saved(conn, project, "The dev server listens on port 8080 behind the local proxy")
    new = saved(conn, project, "The dev server listens on port 9090 behind the local proxy")
    (group,) = consolidate.find(conn, project)
    assert group["kind"] == "contradiction" and group["members"] == [old.id, new.id]
    assert "8080 -> 9090" in group["why"][0]
    (proposed,) = consolidate.propose(conn, project)
    (waiting,) = candidates.pending(conn, project, kind="consolidation")
    assert waiting["fields"]["content"] == new.content  # the correction, not the older text
    assert f"the newer text wins ({new.id})" in waiting["reason"]
    done = candidates.approve(conn, project, proposed["candidate"])
    assert "9090" in done["memory"]["content"]


def test_a_version_or_a_named_choice_is_a_correction_an_addition_is_not():
    assert consolidate.corrected("pin numpy to 1.26 in ci", "pin numpy to 2.1 in ci") == (
        "1.26 -> 2.1"
    )
    assert consolidate.corrected("indent with tabs in go files", "indent with spaces in go files")
    assert consolidate.corrected("ci runs ruff", "ci runs ruff and mypy on every push") is None
    assert consolidate.corrected("ci runs the suite", "ci runs the suite") is None


def test_people_see_which_text_wins(conn, project, repo):
    saved(conn, project, "The dev server listens on port 8080 behind the local proxy")
    saved(conn, project, "The dev server listens on port 9090 behind the local proxy")
    consolidate.propose(conn, project)
    out = subprocess.run(
        [sys.executable, "-m", "waymark", "candidates", "--project", str(repo)],
        capture_output=True, text=True, cwd=repo,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "keeps: The dev server listens on port 9090" in out.stdout
