"""Document counts of common words kept in the database for the next process: the prompt
hook and `waymark recall` count a query's words first (fts5vocab reads a word's whole
posting list, 2 ms a word at a million memories), and may now find them counted."""

from __future__ import annotations

import time

import pytest

from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.recall import lexical as fts
from waymark.storage import connection as db
from waymark.storage import search


def add(conn, project, content):
    return store.remember(conn, project, make_draft(project, content=content, type="note"))


@pytest.fixture
def counting(monkeypatch):
    """The words fts5vocab was asked to count, in order; common from three memories."""
    monkeypatch.setattr(fts, "KEEP_DOCS", 3)
    counted: list[str] = []
    real = search.doc_frequency
    monkeypatch.setattr(search, "doc_frequency", lambda c, s: counted.append(s) or real(c, s))
    return counted


def fresh_process():
    """What a new process starts with: a new connection and no counts in memory."""
    fts._DF_CACHE[0] = (None, None, {})
    return db.connect()


def kept(conn) -> dict[str, int]:
    return dict(conn.execute("SELECT term, docs FROM term_counts"))


def test_the_counts_of_common_words_serve_the_next_process(conn, project, counting):
    for i in range(3):
        add(conn, project, f"zeppelin hangar door {i}")
    add(conn, project, "a lone zebra")
    assert fts._frequencies(conn, ["zeppelin", "zebra", "absent"]) == {"zeppelin": 3, "zebra": 1}
    assert kept(conn) == {"zeppelin": 3}  # the rare and the absent are counted again: cheap
    assert counting == ["zeppelin", "zebra", "absent"]
    counting.clear()
    other = fresh_process()
    try:
        assert fts._frequencies(other, ["zeppelin", "zebra"]) == {"zeppelin": 3, "zebra": 1}
        assert counting == ["zebra"]  # zeppelin's count was read, not made again
    finally:
        other.close()


def test_counts_of_an_older_index_are_never_read(conn, project, counting):
    for i in range(3):
        add(conn, project, f"zeppelin crew {i}")
    assert fts._frequencies(conn, ["zeppelin"]) == {"zeppelin": 3}
    add(conn, project, "one more zeppelin")  # the index changed: the kept count is stale
    counting.clear()
    other = fresh_process()
    try:
        assert fts._frequencies(other, ["zeppelin"]) == {"zeppelin": 4}
        assert counting == ["zeppelin"]
        assert kept(other) == {"zeppelin": 4}  # and the old state's counts are gone
        assert other.execute("SELECT state FROM term_counts_state").fetchone()[
            0
        ] == search.index_state(other)
    finally:
        other.close()


def test_writes_that_leave_the_index_alone_keep_the_counts(conn, project, counting):
    from waymark import settings

    for i in range(3):
        add(conn, project, f"zeppelin engine {i}")
    fts._frequencies(conn, ["zeppelin"])
    settings.set_value(conn, "recall.half_life_days", 30)  # a write, not to the index
    counting.clear()
    other = fresh_process()
    try:
        assert fts._frequencies(other, ["zeppelin"]) == {"zeppelin": 3}
        assert counting == []
    finally:
        other.close()


def test_rare_words_are_never_kept(conn, project):
    add(conn, project, "the zeppelin hangar")
    assert fts._frequencies(conn, ["zeppelin", "hangar"]) == {"zeppelin": 1, "hangar": 1}
    assert kept(conn) == {}


def test_a_busy_database_keeps_nothing_and_holds_nobody_up(conn, project, counting):
    for i in range(3):
        add(conn, project, f"zeppelin mast {i}")
    busy = db.connect()
    busy.execute("BEGIN IMMEDIATE")  # another process writes
    try:
        reader = fresh_process()
        try:
            reader.set_busy_timeout(5000)
            started = time.perf_counter()
            assert fts._frequencies(reader, ["zeppelin"]) == {"zeppelin": 3}
            assert time.perf_counter() - started < 1.0  # never waited for the lock
            assert reader.execute("PRAGMA busy_timeout").fetchone()[0] == 5000  # as it was
        finally:
            reader.close()
    finally:
        busy.execute("ROLLBACK")
        busy.close()
    assert kept(conn) == {}


def test_a_read_only_file_is_read_and_never_written(conn, project, counting, tmp_path):
    import apsw

    for i in range(3):
        add(conn, project, f"zeppelin gondola {i}")
    fts._DF_CACHE[0] = (None, None, {})
    reader = apsw.Connection(conn.filename, flags=apsw.SQLITE_OPEN_READONLY)
    try:
        assert fts._frequencies(reader, ["zeppelin"]) == {"zeppelin": 3}
        assert not search.keep_doc_frequencies(reader, search.index_state(reader), {"x": 5})
    finally:
        reader.close()
    assert kept(conn) == {}


def test_a_prompt_ranks_the_same_with_kept_counts(conn, project, monkeypatch):
    """Kept counts are the counts: the focused query, and so the ranking, do not change."""
    from waymark.recall import ranked

    monkeypatch.setattr(fts, "KEEP_DOCS", 2)
    for i in range(12):
        add(conn, project, f"deploy pipeline step {i} uses the staging cluster")
    for i in range(4):
        add(conn, project, f"staging cluster certificate rotation note {i}")
    query = "why does the staging deploy pipeline fail on the certificate rotation step"
    settings = ranked.DEFAULT._replace(query_terms=3)
    first = [h.memory.id for h in ranked.recall(conn, project, query, settings=settings)]
    assert kept(conn)  # the common words were kept
    other = fresh_process()
    try:
        again = [h.memory.id for h in ranked.recall(other, project, query, settings=settings)]
    finally:
        other.close()
    assert again == first and first


def test_a_file_found_damaged_is_still_searched_and_never_written(conn, project, counting):
    """Writes stop on a damaged file; a search that counted words goes on without keeping."""
    from waymark.storage.faults import damaged_marker

    for i in range(3):
        add(conn, project, f"zeppelin ballast {i}")
    with open(damaged_marker(conn.filename), "w", encoding="utf-8") as f:
        f.write("database disk image is malformed")
    fts._DF_CACHE[0] = (None, None, {})
    assert fts._frequencies(conn, ["zeppelin"]) == {"zeppelin": 3}
    assert kept(conn) == {}
