"""`storage.search.bm25` filters the best matches of the whole index first and falls back to
filtering every match: either way its answer is exactly the best matches in scope."""

from __future__ import annotations

import random

from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.projects.resolve import resolve
from waymark.recall.knobs import FTS_WEIGHTS
from waymark.storage import search

WORDS = ["zebra", "lantern", "quartz", "harbor", "velvet", "cobalt", "maple", "ember"]


def everything(conn, project_id: str, match: str, limit: int, inactive: bool = False):
    """The reference: every match scored, then kept in Python where it is in scope."""
    columns = ", ".join(str(w) for w in FTS_WEIGHTS)
    scored = conn.execute(
        f"SELECT rowid, bm25(memories_fts, {columns}) FROM memories_fts WHERE memories_fts MATCH ?",
        (match,),
    ).fetchall()
    where = {
        r: (p, s) for r, p, s in conn.execute("SELECT rowid, project_id, status FROM memories")
    }
    kept = [
        (score, rowid)
        for rowid, score in scored
        if where[rowid][0] in (project_id, None) and (inactive or where[rowid][1] == "active")
    ]
    return [(int(r), -float(s)) for s, r in sorted(kept)[:limit]]


def elsewhere(conn, tmp_path):
    (tmp_path / "other").mkdir()
    return resolve(conn, str(tmp_path / "other"))


def remember(conn, project, text: str):
    return store.remember(conn, project, make_draft(project, type="fact", content=text)).memory


def test_another_projects_better_matches_do_not_crowd_this_one_out(conn, project, tmp_path):
    other = elsewhere(conn, tmp_path)
    for i in range(40):  # the other project's matches all score above ours
        remember(conn, other, f"zebra zebra zebra stripes {i}")
    ours = [remember(conn, project, f"the zebra crossing on street number {i} near the school")
            for i in range(3)]  # fmt: skip
    found = search.bm25(conn, project.id, '"zebra"', 3, FTS_WEIGHTS, False)
    assert found == everything(conn, project.id, '"zebra"', 3)
    assert len(found) == 3  # all of ours, though 40 better ones are elsewhere
    assert {r for r, _ in found} == {
        conn.execute("SELECT rowid FROM memories WHERE id = ?", (m.id,)).fetchone()[0] for m in ours
    }


def test_archived_matches_count_only_when_asked(conn, project):
    for i in range(30):
        old = remember(conn, project, f"zebra zebra zebra old note {i}")
        store.archive(conn, project, old.id)
    remember(conn, project, "a zebra in a long sentence about something else entirely")
    live = search.bm25(conn, project.id, '"zebra"', 5, FTS_WEIGHTS, False)
    assert live == everything(conn, project.id, '"zebra"', 5) and len(live) == 1
    every = search.bm25(conn, project.id, '"zebra"', 5, FTS_WEIGHTS, True)
    assert every == everything(conn, project.id, '"zebra"', 5, inactive=True) and len(every) == 5


def test_the_answer_is_the_full_querys_for_any_mix(conn, project, tmp_path):
    rng = random.Random(5)
    other = elsewhere(conn, tmp_path)
    for _ in range(300):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9)))
        remember(conn, rng.choice([project, project, other]), f"{words} {rng.random()}")
    for _ in range(40):
        match = " OR ".join(f'"{w}"' for w in rng.sample(WORDS, rng.randint(1, 3)))
        limit = rng.choice([1, 3, 10, 50])
        assert search.bm25(conn, project.id, match, limit, FTS_WEIGHTS, False) == everything(
            conn, project.id, match, limit
        )
