"""Atomic multi-operation edits: in order, all or nothing, one revision, retry-safe."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from waymark.errors import Conflict, InvalidArgument
from waymark.memories import edit, store
from waymark.memories.draft import MAX_CONTENT, make_draft

TEXT = "The API listens on port 8080.\nDeploys go through CI.\nCI runs on every push."


def saved(conn, project, content=TEXT, **kw):
    return store.remember(
        conn, project, make_draft(project, type="fact", content=content, **kw)
    ).memory


def events(conn, memory_id):
    return conn.execute(
        "SELECT op FROM events WHERE memory_id = ? ORDER BY seq", (memory_id,)
    ).fetchall()


def test_operations_apply_in_order_as_one_new_revision_with_one_event(conn, project):
    old = saved(conn, project, title="How the API is served")
    done = edit.edit(conn, project, old.id, [
        {"op": "replace", "old": "port 8080", "text": "port 8443"},
        {"op": "remove", "old": "\nCI runs on every push."},
        {"op": "add", "text": "TLS ends at the load balancer."},
        {"op": "replace", "old": "load balancer", "text": "ingress"},  # sees the add above
    ])  # fmt: skip
    new = done["memory"]
    assert done["status"] == "applied" and done["supersedes"] == old.id
    assert new["content"] == (
        "The API listens on port 8443.\nDeploys go through CI.\nTLS ends at the ingress."
    )
    assert new["title"] == "How the API is served" and new["supersedes"] == old.id
    assert store.get(conn, old.id).status == "superseded"
    assert events(conn, new["id"]) == [("edit",)]


@pytest.mark.parametrize(
    ("ops", "reason"),
    [
        ([{"op": "replace", "old": "port 9999", "text": "x"}], "missing"),
        ([{"op": "remove", "old": "CI"}], "ambiguous"),  # twice in the text
        ([{"op": "add", "text": "ok"}, {"op": "remove", "old": "nowhere"}], "missing"),
    ],
)
def test_a_missing_or_ambiguous_old_text_rejects_the_whole_batch(conn, project, ops, reason):
    old = saved(conn, project)
    with pytest.raises(InvalidArgument) as err:
        edit.edit(conn, project, old.id, ops)
    assert err.value.details["reason"] == reason
    assert err.value.details["index"] == len(ops) - 1
    assert store.get(conn, old.id).status == "active"
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 1


def test_an_unsafe_empty_or_oversized_result_is_refused_and_nothing_is_stored(conn, project):
    old = saved(conn, project, content="short")
    secret = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
    cases = [
        [{"op": "add", "text": f"token {secret}"}],
        [{"op": "add", "text": "<private>mine</private>"}],
        [{"op": "remove", "old": "short"}],
        [{"op": "add", "text": "x" * MAX_CONTENT}],
        [{"op": "replace", "old": "short", "text": "short"}],  # no change at all
        [{"op": "insert", "text": "x"}],
        [{"op": "replace", "old": "short"}],
        [],
    ]
    for ops in cases:
        with pytest.raises(InvalidArgument):
            edit.edit(conn, project, old.id, ops)
    assert store.get(conn, old.id).status == "active"
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 1
    assert secret not in repr(conn.execute("SELECT * FROM memories").fetchall())


def test_retrying_the_same_payload_is_reported_already_applied(conn, project):
    old = saved(conn, project)
    ops = [{"op": "add", "text": "Staging uses port 9090."}]
    first = edit.edit(conn, project, old.id, ops)
    again = edit.edit(conn, project, old.id, ops)
    assert again["status"] == "already_applied"
    assert again["memory"]["id"] == first["memory"]["id"]
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 2
    with pytest.raises(Conflict) as err:  # another edit of the old revision
        edit.edit(conn, project, old.id, [{"op": "add", "text": "other"}])
    assert err.value.details["current"] == first["memory"]["id"]
    # The same operations on the new revision are a new edit, not a retry.
    assert edit.edit(conn, project, first["memory"]["id"], ops)["status"] == "applied"


def cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "waymark", *args], cwd=cwd, capture_output=True, text=True
    )


def test_the_cli_keeps_the_order_of_its_flags_and_its_error_codes(conn, project, repo):
    old = saved(conn, project)
    done = cli(
        "edit", old.id[:8], "--add", "Rollbacks: make rollback.", "--replace", "make rollback",
        "just rollback", "--remove", "Deploys go through CI.\n", "--json", cwd=repo,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["memory"]["content"] == (
        "The API listens on port 8080.\nCI runs on every push.\nRollbacks: just rollback."
    )
    bad = cli("edit", out["memory"]["id"], "--remove", "nowhere", "--json", cwd=repo)
    assert bad.returncode == 1 and json.loads(bad.stdout)["code"] == "invalid_argument"
    none = cli("edit", out["memory"]["id"], "--json", cwd=repo)
    assert none.returncode == 2 and json.loads(none.stdout)["code"] == "usage"
    text = cli("edit", old.id, "--add", "x", cwd=repo)
    assert text.returncode == 1 and "[conflict]" in text.stderr


def test_agents_edit_through_remember_and_a_retry_is_already_applied(conn, project, repo):
    from conftest import call_tool

    old = saved(conn, project)
    ops = [{"op": "replace", "old": "port 8080", "text": "port 8443"}]
    first = call_tool(repo, "remember", {"supersedes": old.id, "edit": ops})
    assert not first.is_error, first.content
    out = first.structured_content
    assert out["status"] == "applied" and "port 8443" in out["memory"]["content"]
    assert out["memory"]["actor"] == "agent"
    again = call_tool(repo, "remember", {"supersedes": old.id, "edit": ops}).structured_content
    assert again["status"] == "already_applied" and again["memory"]["id"] == out["memory"]["id"]
    missing = call_tool(repo, "remember", {"supersedes": out["memory"]["id"], "edit": [
        {"op": "remove", "old": "nowhere"}]})  # fmt: skip
    assert missing.is_error and '"code": "invalid_argument"' in missing.content[0].text
    bare = call_tool(repo, "remember", {"content": "no type"})
    assert bare.is_error and "type and content" in bare.content[0].text
