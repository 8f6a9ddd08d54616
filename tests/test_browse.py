"""The browsing contract of `list`, exactly."""

from __future__ import annotations

import pytest

from waymark.errors import InvalidArgument
from waymark.memories import browse, store
from waymark.memories.draft import make_draft
from waymark.storage import connection as db


def add(conn, project, content, **fields):
    fields.setdefault("type", "note")
    return store.remember(conn, project, make_draft(project, content=content, **fields)).memory


def ids(page):
    return [m.id for m in page.results]


def test_query_is_a_literal_case_insensitive_substring(conn, project):
    pct = add(conn, project, "coverage is 100% here")
    und = add(conn, project, "call snake_case_name")
    bsl = add(conn, project, r"path C:\temp\x")
    add(conn, project, "coverage is 1000 here")
    umlaut = add(conn, project, "Größe matters", tags=["Unicode"])
    assert ids(browse.list_memories(conn, project, query="100%")) == [pct.id]
    assert ids(browse.list_memories(conn, project, query="E_C")) == [und.id]
    assert ids(browse.list_memories(conn, project, query="\\temp\\")) == [bsl.id]
    assert ids(browse.list_memories(conn, project, query="GRÖSSE")) == [umlaut.id]
    assert ids(browse.list_memories(conn, project, query="unicode")) == [umlaut.id]  # tags too


def test_types_match_any_and_tags_require_all(conn, project):
    a = add(conn, project, "a", type="decision", tags=["x", "y"])
    b = add(conn, project, "b", type="fact", tags=["x"])
    add(conn, project, "c", type="note", tags=["X", "y"])
    assert set(ids(browse.list_memories(conn, project, types=["decision", "fact"]))) == {a.id, b.id}
    assert ids(browse.list_memories(conn, project, tags=["x", "y"])) == [a.id]
    assert set(ids(browse.list_memories(conn, project, tags=["x"]))) == {a.id, b.id}


def test_scope_matches_the_exact_identity_without_descendants(conn, project):
    d = add(conn, project, "dir", scope="directory", target="src")
    f = add(conn, project, "file", scope="file", target="src/pkg/core.py")
    sub = add(conn, project, "subdir", scope="directory", target="src/pkg")
    got = browse.list_memories(conn, project, scope="directory", target="src")
    assert ids(got) == [d.id]
    assert set(ids(browse.list_memories(conn, project, scope="directory"))) == {d.id, sub.id}
    assert ids(browse.list_memories(conn, project, scope="file", target="src/pkg/core.py")) == [
        f.id
    ]


def test_inactive_records_only_on_request(conn, project):
    m = add(conn, project, "old")
    store.archive(conn, project, m.id)
    assert ids(browse.list_memories(conn, project)) == []
    assert ids(browse.list_memories(conn, project, include_inactive=True)) == [m.id]


def test_newest_first_with_id_tie_break_and_paging(conn, project):
    made = [add(conn, project, f"memory number {i}") for i in range(7)]
    conn.execute("UPDATE memories SET created_at = '2026-01-01T00:00:00.000Z'")  # all tied
    expected = sorted((m.id for m in made), reverse=True)
    first = browse.list_memories(conn, project, limit=3)
    assert ids(first) == expected[:3] and first.has_more and first.next_offset == 3
    second = browse.list_memories(conn, project, limit=3, offset=3)
    assert ids(second) == expected[3:6] and second.has_more and second.next_offset == 6
    last = browse.list_memories(conn, project, limit=3, offset=6)
    assert ids(last) == expected[6:] and not last.has_more and last.next_offset is None


def test_global_memories_list_under_the_global_scope(conn, project):
    g = add(conn, project, "everywhere", scope="global")
    assert ids(browse.list_memories(conn, project)) == []
    assert ids(browse.list_memories(conn, project, scope="global")) == [g.id]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"limit": 0},
        {"limit": 101},
        {"offset": -1},
        {"offset": 100_001},
        {"limit": True},
        {"types": ["idea"]},
        {"scope": "galaxy"},
        {"target": "src", "scope": "project"},  # a bare target takes the scope it names
    ],
)
def test_out_of_range_values_are_errors_not_clamps(conn, project, kwargs):
    with pytest.raises(InvalidArgument):
        browse.list_memories(conn, project, **kwargs)


def test_a_slow_query_is_stopped_by_the_deadline(conn, project, monkeypatch):
    for i in range(300):
        add(conn, project, f"row {i} " + "padding " * 50)
    monkeypatch.setattr(browse, "TIMEOUT_S", 0.0)
    with pytest.raises(db.QueryTimeout):
        browse.list_memories(conn, project, query="zzz")


def test_a_query_matches_tags_as_words_not_as_their_json_text(conn, project):
    from waymark.memories.browse import list_memories

    store.remember(conn, project, make_draft(project, type="note", content="tagged", tags=["db"]))
    assert list_memories(conn, project, query='"').results == []
    assert list_memories(conn, project, query="[").results == []
    assert [m.content for m in list_memories(conn, project, query="db").results] == ["tagged"]


def test_legacy_target_spellings_still_filter(conn, project, repo):
    from waymark.memories.browse import list_memories

    draft = make_draft(
        project, type="note", content="legacy", scope="file", target="src/pkg/core.py"
    )
    saved = store.remember(conn, project, draft).memory
    for stored in ("./src/pkg/core.py", str(repo / "src" / "pkg" / "core.py")):
        conn.execute("UPDATE memories SET scope_target = ? WHERE id = ?", (stored, saved.id))
        for asked in ("src/pkg/core.py", "./src/pkg/core.py", str(repo / "src/pkg/core.py")):
            found = list_memories(conn, project, scope="file", target=asked).results
            assert [m.id for m in found] == [saved.id], (stored, asked)


def test_ids_are_found_by_a_unique_prefix_in_any_case(conn, project):
    import os

    from waymark.errors import NotFound

    one = store.remember(conn, project, make_draft(project, type="note", content="one")).memory
    two = store.remember(conn, project, make_draft(project, type="note", content="two")).memory
    shared = os.path.commonprefix([one.id, two.id])
    assert len(shared) >= 4  # made within the same few seconds
    assert store.get(conn, one.id[: len(shared) + 1].lower()).id == one.id
    assert store.archive(conn, project, two.id[: len(shared) + 1].lower()).status == "archived"
    with pytest.raises(InvalidArgument) as many:
        store.get(conn, shared.lower())
    assert "several" in many.value.message and one.id in many.value.message
    with pytest.raises(NotFound):
        store.get(conn, "ZZZZZZZZ")


def test_the_count_is_what_paging_walks_through_with_the_same_filters(conn, project, monkeypatch):
    for i in range(7):
        add(conn, project, f"deploy step {i}", tags=["ops"] if i % 2 else [])
    old = add(conn, project, "deploy step archived")
    store.archive(conn, project, old.id)
    add(conn, project, "unrelated")
    for filters in (
        {},
        {"query": "deploy"},
        {"tags": ["ops"]},
        {"include_inactive": True},
        {"query": "deploy", "include_inactive": True},
        {"types": ["decision"]},
    ):
        walked = len(browse.list_memories(conn, project, limit=100, **filters).results)
        assert browse.count_memories(conn, project, **filters) == walked, filters
    monkeypatch.setattr(browse, "COUNT_CAP", 3)  # past the cap: "more than 3"
    assert browse.count_memories(conn, project) == 4
    for i in range(300):
        add(conn, project, f"row {i} " + "padding " * 50)
    monkeypatch.setattr(browse, "COUNT_TIMEOUT_S", 0.0)  # too slow to count: no total
    assert browse.count_memories(conn, project, query="zzz") is None
