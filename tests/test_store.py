"""Memory records through the library: every operation and its errors, on a real file."""

from __future__ import annotations

import hashlib
import os
import pathlib

import pytest

from waymark.errors import (
    Conflict,
    InvalidArgument,
    InvalidScope,
    InvalidType,
    NotFound,
    TargetNotFound,
)
from waymark.memories import store
from waymark.memories.draft import TYPES, make_draft
from waymark.projects.resolve import resolve
from waymark.storage import connection as db


def remember(conn, project, **fields):
    fields.setdefault("type", "note")
    return store.remember(conn, project, make_draft(project, **fields))


def test_remember_stores_every_field_and_reopens_from_disk(conn, project):
    saved = remember(
        conn,
        project,
        type="decision",
        title="Use apsw",
        content="apsw loads sqlite-vec.",
        tags=["db", "DB"],
        priority=3,
        pinned=True,
        evidence=[{"path": "README.md", "note": "why"}],
        valid_until="2030-01-01",
        key="ext-1",
        actor="agent",
        client="codex",
        session_id="s1",
        source_ref="PR 12",
        git_branch="main",
    )
    assert saved.created and saved.redactions == 0
    conn.close()
    fresh = db.connect()
    m = store.get(fresh, saved.memory.id)
    assert (m.type, m.title, m.content) == ("decision", "Use apsw", "apsw loads sqlite-vec.")
    assert m.tags == ["db", "DB"]  # exact and case-sensitive
    assert m.priority == 3 and m.pinned is True and m.status == "active"
    readme = (pathlib.Path(project.files) / "README.md").read_bytes()
    assert m.evidence == [
        {
            "path": "README.md",
            "note": "why",
            "size": len(readme),
            "sha256": hashlib.sha256(readme).hexdigest(),
        }
    ]  # hashed by Waymark
    assert m.valid_until == "2030-01-01T23:59:59.999Z"
    assert (m.key, m.actor, m.client, m.session_id, m.source_ref, m.git_branch) == (
        "ext-1",
        "agent",
        "codex",
        "s1",
        "PR 12",
        "main",
    )
    assert m.project_id == project.id and m.scope_type == "project" and m.scope_target is None
    assert len(m.content_hash) == 64 and m.event_time == m.created_at
    events = fresh.execute("SELECT op, memory_id FROM events").fetchall()
    assert ("remember", m.id) in events


def test_unknown_type_is_rejected_with_the_valid_list(project):
    with pytest.raises(InvalidType) as err:
        make_draft(project, type="idea", content="x")
    assert err.value.details["valid"] == list(TYPES)
    assert "decision" in err.value.message


def test_exact_active_duplicate_returns_the_existing_record(conn, project):
    first = remember(conn, project, type="fact", content="The  API uses\nJSON.")
    again = remember(conn, project, type="fact", content="the api uses json.")
    assert not again.created and again.memory.id == first.memory.id
    other_type = remember(conn, project, type="note", content="the api uses json.")
    assert other_type.created


def test_near_duplicate_is_stored_and_reported_as_similar(conn, project):
    first = remember(conn, project, content="Run the test suite with pytest -q before every commit")
    near = remember(conn, project, content="Run the test suite with pytest -q before each commit")
    assert near.created
    assert near.similar == [first.memory.id]
    unrelated = remember(conn, project, content="Deploys go through the staging cluster first")
    assert unrelated.similar == []


def test_private_spans_and_secrets_never_reach_the_database(conn, project, waymark_home):
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    saved = remember(
        conn,
        project,
        content=f"token {secret} here <private>my diary</private> done",
        title="about password=hunter22",
        tags=["t"],
    )
    assert saved.redactions >= 3
    assert secret not in saved.memory.content and "my diary" not in saved.memory.content
    assert "hunter22" not in saved.memory.title
    conn.close()
    for name in os.listdir(waymark_home):
        with open(waymark_home / name, "rb") as f:
            blob = f.read()
        assert secret.encode() not in blob and b"my diary" not in blob and b"hunter22" not in blob


def test_supersede_replaces_an_active_record_and_links_both_ways(conn, project):
    old = remember(conn, project, type="decision", content="Use sqlite3").memory
    new = store.supersede(
        conn, project, old.id, make_draft(project, type="decision", content="Use apsw")
    ).memory
    assert new.supersedes == old.id
    reread = store.get(conn, old.id)
    assert reread.status == "superseded" and reread.superseded_by == new.id
    assert [m.id for m in store.history(conn, old.id)] == [old.id, new.id]
    assert [m.id for m in store.history(conn, new.id)] == [old.id, new.id]


def test_superseding_a_superseded_record_is_a_conflict_naming_the_winner(conn, project):
    old = remember(conn, project, content="v1").memory
    winner = store.supersede(conn, project, old.id, make_draft(project, type="note", content="v2"))
    with pytest.raises(Conflict) as err:
        store.supersede(conn, project, old.id, make_draft(project, type="note", content="v3"))
    assert err.value.code == "conflict"
    assert err.value.details["current"] == winner.memory.id


def test_supersede_of_another_projects_record_is_not_found(conn, project):
    other = resolve(conn, "other-project")
    mine = remember(conn, project, content="mine").memory
    with pytest.raises(NotFound):
        store.supersede(conn, other, mine.id, make_draft(other, type="note", content="theirs"))


def test_history_of_a_three_step_chain_from_the_middle(conn, project):
    a = remember(conn, project, content="a").memory
    b = store.supersede(conn, project, a.id, make_draft(project, type="note", content="b")).memory
    c = store.supersede(conn, project, b.id, make_draft(project, type="note", content="c")).memory
    assert [m.id for m in store.history(conn, b.id)] == [a.id, b.id, c.id]


def test_archive_retires_an_active_record_once(conn, project):
    m = remember(conn, project, content="old habit").memory
    assert store.archive(conn, project, m.id, reason="stale").status == "archived"
    with pytest.raises(Conflict):
        store.archive(conn, project, m.id)


def test_erase_keeps_only_a_tombstone(conn, project, waymark_home):
    m = remember(
        conn,
        project,
        content="customer Zyxwv Quorble called",
        tags=["crm"],
        evidence=[{"url": "https://crm.example/zyxwv"}],
    ).memory
    erased = store.erase(conn, project, m.id, reason="personal data")
    assert (erased.status, erased.title, erased.content, erased.tags, erased.evidence) == (
        "erased",
        "",
        "",
        [],
        [],
    )
    assert erased.erased_reason == "personal data" and erased.id == m.id
    assert (
        conn.execute(
            "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'quorble'"
        ).fetchone()[0]
        == 0
    )
    with pytest.raises(Conflict):
        store.erase(conn, project, m.id, reason="again")
    conn.close()
    for name in os.listdir(waymark_home):
        with open(waymark_home / name, "rb") as f:
            assert b"Quorble" not in f.read()


def test_erase_needs_a_reason(conn, project):
    m = remember(conn, project, content="x").memory
    with pytest.raises(InvalidArgument):
        store.erase(conn, project, m.id, reason=" ")


def test_show_of_an_unknown_id_is_not_found(conn):
    with pytest.raises(NotFound):
        store.get(conn, "01NOPE")


def test_a_taken_key_is_a_conflict(conn, project):
    remember(conn, project, content="one", key="k")
    with pytest.raises(Conflict):
        remember(conn, project, content="two", key="k")


def test_file_directory_and_symbol_scopes_store_root_relative_posix_targets(conn, project, repo):
    f = remember(conn, project, content="f", scope="file", target="src/pkg/core.py").memory
    d = remember(conn, project, content="d", scope="directory", target=str(repo / "src")).memory
    r = remember(conn, project, content="r", scope="directory", target=".").memory
    s = remember(conn, project, content="s", scope="symbol", target="src/pkg/core.py::run").memory
    sub = remember(
        conn,
        project,
        content="sub",
        scope="file",
        target="core.py",
        base_dir=str(repo / "src" / "pkg"),
    ).memory
    assert (f.scope_target, d.scope_target, r.scope_target, s.scope_target, sub.scope_target) == (
        "src/pkg/core.py",
        "src",
        ".",
        "src/pkg/core.py::run",
        "src/pkg/core.py",
    )


@pytest.mark.parametrize(
    ("scope", "target", "error"),
    [
        ("file", "missing.py", TargetNotFound),
        ("directory", "README.md", InvalidScope),  # a file: "use --scope file"
        ("file", "../outside.txt", InvalidScope),
        ("file", ".git/config", InvalidScope),
        ("symbol", "src/pkg/core.py", InvalidScope),
        ("symbol", "nope.py::run", TargetNotFound),
        ("project", "README.md", InvalidScope),
        ("file", None, InvalidScope),
        ("galaxy", None, InvalidScope),
    ],
)
def test_bad_targets_are_refused(project, repo, scope, target, error):
    (repo.parent / "outside.txt").write_text("x", encoding="utf-8")
    with pytest.raises(error):
        make_draft(project, type="note", content="x", scope=scope, target=target)


def test_a_symlink_escaping_the_root_is_refused(project, repo, tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("x", encoding="utf-8")
    os.symlink(outside, repo / "link.txt")
    with pytest.raises(InvalidScope):
        make_draft(project, type="note", content="x", scope="file", target="link.txt")


def test_deleting_the_file_later_keeps_the_memory(conn, project, repo):
    m = remember(conn, project, content="careful", scope="file", target="README.md").memory
    os.remove(repo / "README.md")
    assert store.get(conn, m.id).status == "active"


def test_global_memories_have_no_project(conn, project):
    m = remember(conn, project, content="I prefer tabs", type="preference", scope="global").memory
    assert m.project_id is None and m.scope_type == "global"


@pytest.mark.parametrize(
    "fields",
    [
        {"content": ""},
        {"content": "<private>only private</private>"},
        {"content": "x", "priority": 11},
        {"content": "x", "tags": ["has space"]},
        {"content": "x", "evidence": [{"path": "a", "url": "b"}]},
        {"content": "x", "valid_until": "next tuesday"},
        {"content": "x" * 20_001},
        {"content": "x", "actor": "robot"},
    ],
)
def test_invalid_fields_are_clear_errors(project, fields):
    with pytest.raises(InvalidArgument):
        make_draft(project, type="note", **fields)


def test_named_project_has_no_directory_scopes(conn):
    named = resolve(conn, "bench-notes")
    with pytest.raises(InvalidScope):
        make_draft(named, type="note", content="x", scope="file", target="a.py")


@pytest.mark.parametrize(
    ("path", "error", "says"),
    [
        ("gone.py", TargetNotFound, "does not exist"),
        ("../outside.txt", InvalidScope, "outside the project"),
        ("/etc/hostname", InvalidScope, "outside the project"),
        (".", InvalidArgument, "is a directory"),
        ("src", InvalidArgument, "is a directory"),
    ],
)
def test_a_memorys_evidence_path_is_checked_as_a_checkpoints_is(project, path, error, says):
    with pytest.raises(error, match=says):
        make_draft(project, type="note", content="x", evidence=[{"path": path}])
    from waymark.memories.evidence import hash_links

    with pytest.raises(error, match=says):  # one rule for both
        hash_links(project.files, [{"path": path}])


def test_evidence_from_a_subdirectory_is_found_as_a_target_is(project):
    sub = pathlib.Path(project.files) / "src"
    draft = make_draft(
        project, type="note", content="x", evidence=["pkg/core.py"], base_dir=str(sub)
    )
    assert draft.evidence[0]["path"] == "src/pkg/core.py" and draft.evidence[0]["sha256"]
    draft = make_draft(project, type="note", content="x", evidence=["README.md"], base_dir=str(sub))
    assert draft.evidence[0]["path"] == "README.md"  # from the root when not under the directory


def test_evidence_carried_from_an_earlier_revision_stays_when_its_file_is_gone(conn, project):
    readme = pathlib.Path(project.files) / "README.md"
    saved = remember(conn, project, type="note", content="see the readme", evidence=["README.md"])
    readme.unlink()
    from waymark.memories.draft import revision_of

    again = revision_of(project, saved.memory, content="see the readme, now gone")
    assert again.evidence == [{"path": "README.md"}]  # an edit never fails on old evidence
