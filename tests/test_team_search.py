"""Team recall on the server: the vector index grows with the store (built by any member's
sync, as the schema's owner), the planner takes it for a large project and an exact scan
answers a small one, and the words asked are the query's rarest by the server's counts."""

from __future__ import annotations

import json
import random

import pytest

pytest.importorskip("psycopg", reason="the team store needs psycopg (the dev extra)")

from waymark.team.recall import LEXICAL_TERMS, lexical_terms  # noqa: E402
from waymark.teamstore import connection as team_db  # noqa: E402
from waymark.teamstore import memories as team_memories  # noqa: E402
from waymark.teamstore import search  # noqa: E402


def _unit(rng: random.Random) -> list[float]:
    values = [rng.gauss(0, 1) for _ in range(384)]
    norm = sum(v * v for v in values) ** 0.5
    return [v / norm for v in values]


def _blob(vector: list[float]) -> bytes:
    from array import array

    return array("f", vector).tobytes()


def _memory(i: int, content: str) -> dict:
    return {"id": f"m{i:05d}", "type": "note", "title": content[:40], "content": content,
            "status": "active", "supersedes": None, "superseded_by": None,
            "content_hash": f"h{i}", "updated_at": "2026-12-01T00:00:00Z"}  # fmt: skip


def _fill(pg, key: str, vectors: list[list[float]], texts: list[str], start: int = 0) -> None:
    rows = [
        (_memory(start + i, t), _blob(v))
        for i, (v, t) in enumerate(zip(vectors, texts, strict=True))
    ]
    with team_db.write(pg):
        team_memories.insert_memories(pg, rows, key, "machine-1")


@pytest.fixture
def member(store):
    """A writer who does not own the schema: (owner's connection, member's connection)."""
    import psycopg

    conninfo, name, socket = store
    owner = team_db.connect(conninfo)
    owner.execute("DO $$ BEGIN CREATE ROLE member LOGIN; EXCEPTION WHEN duplicate_object"
                  " THEN NULL; END $$")  # fmt: skip
    owner.execute("GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO member")
    owner.execute("GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO member")
    theirs = team_db.connect(f"postgresql://member@/{name}?host={socket}")
    yield owner, theirs
    theirs.close()
    owner.close()
    with psycopg.connect(conninfo, autocommit=True) as c:
        c.execute("REASSIGN OWNED BY member TO postgres")
        c.execute("DROP OWNED BY member")


def _plan(pg, key: str, vector: list[float]) -> str:
    literal = "[" + ",".join(map(repr, vector)) + "]"
    rows = pg.execute(
        "EXPLAIN SELECT id FROM team_memories WHERE project_key = %s AND status = 'active'"
        " AND embedding IS NOT NULL ORDER BY embedding <=> %s::vector LIMIT 50",
        (key, literal),
    ).fetchall()
    return "\n".join(r[0] for r in rows)


def test_a_members_sync_builds_the_vector_index_once_the_store_is_large(member):
    owner, theirs = member
    rng = random.Random(5)
    big = [_unit(rng) for _ in range(1200)]
    _fill(theirs, "name:big", big, [f"note {i}" for i in range(1200)])
    assert search.tend_vectors(theirs, min_rows=5000) == "kept"  # too small for an index
    assert search.tend_vectors(theirs, min_rows=1000) == "built 100"  # as the owner
    assert search.tend_vectors(theirs, min_rows=1000) == "kept"  # until it grows fourfold
    owner_of = owner.execute(
        "SELECT pg_get_userbyid(relowner) FROM pg_class WHERE relname = 'team_memories_embedding'"
    ).fetchone()[0]
    assert owner_of == "postgres"
    assert "team_memories_embedding" in _plan(theirs, "name:big", big[0])

    # A stored vector finds its own memory first, through the index.
    for i in (0, 417, 1199):
        found = search.team_matches(theirs, "name:big", [], big[i], 5)
        assert found[0][0] == f"m{i:05d}"


def test_a_small_project_beside_a_large_one_gets_every_neighbour(member):
    """The index filters after it scans: a project of a few rows in a large store must not
    come back short when the planner takes the index anyway."""
    owner, theirs = member
    rng = random.Random(6)
    _fill(theirs, "name:big", [_unit(rng) for _ in range(1200)], ["big"] * 1200)
    small = [_unit(rng) for _ in range(30)]
    _fill(theirs, "name:small", small, [f"small {i}" for i in range(30)], start=5000)
    assert search.tend_vectors(theirs, min_rows=1000).startswith("built")
    owner.execute("SET enable_seqscan = off")  # the planner's worst choice for the small one
    owner.execute("SET enable_bitmapscan = off")
    assert "team_memories_embedding" in _plan(owner, "name:small", small[7])
    found = search.team_matches(owner, "name:small", [], small[7], 50)
    assert len(found) == 30 and found[0][0] == "m05007"


def test_team_recall_asks_for_the_rarest_words_by_the_servers_counts(member, monkeypatch):
    from waymark.team import recall

    monkeypatch.setattr(recall, "LEXICAL_ROWS", 100)  # a store of 1,000 stands for 100,000
    owner, theirs = member
    rng = random.Random(7)
    texts = [f"checksum cache worker {'ledger ' if i % 50 == 0 else ''}note {i}"
             for i in range(1000)]  # fmt: skip
    _fill(theirs, "name:shop", [_unit(rng) for _ in texts], texts)
    owner.execute("ANALYZE team_memories")
    words = lexical_terms(theirs, "why does the checksum cache miss the ledger zebra?")
    # `miss` and `zebra` are in no memory, `ledger` in a fiftieth; `checksum` and `cache`,
    # in every one, would put the whole store in the ranking.
    assert words == ["miss", "zebra", "ledger"]
    assert len(lexical_terms(theirs, " ".join(f"w{i}" for i in range(30)))) == LEXICAL_TERMS
    shares, _, rows = search.lexeme_shares(theirs)
    assert shares["checksum"] == pytest.approx(1.0) and rows == 1000
    top = search.team_matches(theirs, "name:shop", words, None, 3)
    assert json.dumps(top) and all(int(m[1:]) % 50 == 0 for m, _ in top)
