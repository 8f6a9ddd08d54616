"""Stored vectors, resumable indexing, and the numpy and vec0 search paths.

Most tests use `FakeEmbedder`, a deterministic stand-in for the embedding function only;
storage and search are the real code over a real SQLite file. The tests marked as using the
real model load it from WAYMARK_EMBED_MODEL_DIR, or let fastembed download it when unset.
"""

from __future__ import annotations

import gc
import hashlib
import json
import struct

import numpy as np
import pytest

from conftest import needs_real_model
from waymark import settings
from waymark.errors import InvalidArgument
from waymark.memories import draft as records
from waymark.memories import store
from waymark.projects.resolve import resolve
from waymark.recall import embed, vectors
from waymark.storage import connection as db


class FakeEmbedder:
    """Bag of hashed words (so shared words mean similar vectors), counting what it embeds."""

    def __init__(self, dim: int = 32, model: str = "fake", fail_on_call: int | None = None):
        self.model, self.dim = model, dim
        self.calls: list[list[str]] = []
        self.fail_on_call = fail_on_call

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        if len(self.calls) == self.fail_on_call:
            raise KeyboardInterrupt("interrupted mid-index")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                digest = hashlib.sha256(word.encode()).digest()
                out[i, digest[0] % self.dim] += 1.0 if digest[1] % 2 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    @property
    def embedded(self) -> list[str]:
        return [text for call in self.calls for text in call]


class RandomEmbedder(FakeEmbedder):
    """Unrelated random unit vectors, seeded by the text: for comparing search paths."""

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            rows.append(np.random.default_rng(seed).standard_normal(self.dim))
        out = np.asarray(rows, dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def remember(conn, project, content: str, **fields):
    draft = records.make_draft(project, type=fields.pop("type", "note"), content=content, **fields)
    return store.remember(conn, project, draft).memory


def rowid_of(conn, memory) -> int:
    return conn.execute("SELECT rowid FROM memories WHERE id = ?", (memory.id,)).fetchone()[0]


def found(conn, project_id, query, embedder, method="numpy", k=10) -> list[int]:
    hits = vectors.search(conn, project_id, embedder.embed_query(query), k, embedder.model, method)
    return [rowid for rowid, _ in hits]


METHODS = ["numpy", "vec0"]


def test_pack_writes_little_endian_float32_and_unpack_reads_it_back():
    values = [0.5, -1.25, 3.0e-8, 1e30]
    blob = vectors.pack(values)
    assert blob == struct.pack("<4f", *values)
    assert vectors.pack(np.asarray(values, dtype=np.float64)) == blob
    assert vectors.unpack(blob, 4) == pytest.approx(values, rel=1e-6)
    assert np.array_equal(np.frombuffer(blob, dtype="<f4"), np.float32(values))


def test_unpack_refuses_a_vector_of_the_wrong_dimension():
    with pytest.raises(ValueError, match="3 floats, expected 4"):
        vectors.unpack(vectors.pack([1.0, 2.0, 3.0]), 4)


def test_embed_text_is_title_content_and_tags_without_repeating_a_derived_title():
    assert vectors.embed_text("Use apsw", "It loads extensions", ["db"]) == (
        "Use apsw\nIt loads extensions\ndb"
    )
    assert vectors.embed_text("first line", "first line\nmore", []) == "first line\nmore"


def test_index_stores_one_vector_per_memory_with_model_dim_and_text_hash(conn, project):
    memory = remember(conn, project, "Run the tests with pytest -q", tags=["testing"])
    fake = FakeEmbedder()
    report = vectors.index_missing(conn, fake, project.id)
    assert report == {"embedded": 1, "skipped": 0, "total": 1}
    row = (
        db.connect()
        .execute("SELECT memory_rowid, model, dim, text_hash, length(vector) FROM vectors")
        .fetchall()
    )
    text = vectors.embed_text(memory.title, memory.content, memory.tags)
    assert row == [(rowid_of(conn, memory), "fake", 32, vectors.text_hash(text), 4 * 32)]


def test_index_never_re_embeds_unchanged_text(conn, project):
    for n in range(3):
        remember(conn, project, f"memory number {n}")
    fake = FakeEmbedder()
    vectors.index_missing(conn, fake, project.id)
    assert len(fake.embedded) == 3
    again = vectors.index_missing(conn, fake, project.id)
    assert again == {"embedded": 0, "skipped": 3, "total": 3}
    assert len(fake.embedded) == 3
    remember(conn, project, "a fourth one")
    assert vectors.index_missing(conn, fake, project.id)["embedded"] == 1
    assert fake.embedded[-1] == "a fourth one"


def test_index_re_embeds_a_memory_whose_text_hash_no_longer_matches(conn, project):
    memory = remember(conn, project, "the text that was embedded")
    fake = FakeEmbedder()
    vectors.index_missing(conn, fake, project.id)
    with db.write(conn):  # as after a change to what embed_text produces
        conn.execute("UPDATE vectors SET text_hash = 'stale'")
    assert vectors.missing(conn, "fake", project.id) == [(rowid_of(conn, memory), memory.content)]
    assert vectors.index_missing(conn, fake, project.id)["embedded"] == 1
    assert vectors.missing(conn, "fake", project.id) == []


def test_a_vector_stored_with_the_older_full_length_hash_is_current_not_embedded_again(
    conn, project
):
    import hashlib

    memory = remember(conn, project, "embedded before hashes were cut to 16 digits")
    fake = FakeEmbedder()
    vectors.index_missing(conn, fake, project.id)
    (stored,) = conn.execute("SELECT text_hash FROM vectors").fetchone()
    assert len(stored) == 16
    full = hashlib.sha256(memory.content.encode()).hexdigest()
    with db.write(conn):
        conn.execute("UPDATE vectors SET text_hash = ?", (full,))
    assert full.startswith(stored)
    assert vectors.missing(conn, "fake", project.id) == []
    assert vectors.index_missing(conn, fake, project.id)["embedded"] == 0


def test_vectors_of_another_model_are_kept_and_do_not_count(conn, project):
    remember(conn, project, "one memory, two models")
    vectors.index_missing(conn, FakeEmbedder(model="a"), project.id)
    assert vectors.index_missing(conn, FakeEmbedder(model="b"), project.id)["embedded"] == 1
    assert conn.execute("SELECT model FROM vectors ORDER BY model").fetchall() == [("a",), ("b",)]


def test_interrupted_index_resumes_where_it_stopped(conn, project):
    for n in range(5):
        remember(conn, project, f"note {n} about the build")
    failing = FakeEmbedder(fail_on_call=2)
    with pytest.raises(KeyboardInterrupt):
        vectors.index_missing(conn, failing, project.id, batch=2)
    reopened = db.connect()
    assert reopened.execute("SELECT count(*) FROM vectors").fetchone()[0] == 2
    fake = FakeEmbedder()
    seen = []
    report = vectors.index_missing(
        reopened, fake, project.id, batch=2, progress=lambda done, todo: seen.append((done, todo))
    )
    assert report == {"embedded": 3, "skipped": 2, "total": 5}
    assert len(fake.embedded) == 3 and not set(fake.embedded) & set(failing.calls[0])
    assert seen == [(0, 3), (2, 3), (3, 3)]


def test_index_skips_inactive_memories_and_covers_global_ones(conn, project):
    old = remember(conn, project, "old wording")
    store.supersede(
        conn, project, old.id, records.make_draft(project, type="note", content="new wording")
    )
    gone = remember(conn, project, "archived soon")
    store.archive(conn, project, gone.id)
    remember(conn, project, "shared everywhere", scope="global")
    fake = FakeEmbedder()
    assert vectors.index_missing(conn, fake, project.id)["total"] == 2
    assert sorted(fake.embedded) == ["new wording", "shared everywhere"]


def test_erasing_a_memory_removes_its_vector(conn, project):
    memory = remember(conn, project, "contains a customer name")
    vectors.index_missing(conn, FakeEmbedder(), project.id)
    store.erase(conn, project, memory.id, reason="privacy")
    assert db.connect().execute("SELECT count(*) FROM vectors").fetchone()[0] == 0


def test_a_memory_erased_while_being_embedded_gets_no_vector(conn, project):
    memory = remember(conn, project, "erased mid-run")

    class ErasingEmbedder(FakeEmbedder):
        def embed(self, texts):
            store.erase(db.connect(), project, memory.id, reason="raced")
            return super().embed(texts)

    vectors.index_missing(conn, ErasingEmbedder(), project.id)
    assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 0


@pytest.fixture
def five_hundred(conn, project):
    """500 memories with random vectors: rowids and the embedder."""
    with db.write(conn):
        for n in range(500):
            store.insert(
                conn,
                project,
                records.make_draft(project, type="note", content=f"random memory {n}"),
            )
    embedder = RandomEmbedder(dim=384)
    vectors.index_missing(conn, embedder, project.id)
    return embedder


def test_numpy_and_vec0_give_the_same_top_k(conn, project, five_hundred):
    rng = np.random.default_rng(7)
    for _ in range(20):
        query = rng.standard_normal(384).astype(np.float32)
        by_numpy = vectors.search(conn, project.id, query, 10, "fake", "numpy")
        by_vec0 = vectors.search(conn, project.id, query, 10, "fake", "vec0")
        assert [r for r, _ in by_numpy] == [r for r, _ in by_vec0]
        assert [s for _, s in by_numpy] == pytest.approx([s for _, s in by_vec0], abs=1e-5)
        assert [s for _, s in by_numpy] == sorted((s for _, s in by_numpy), reverse=True)


def test_search_finds_a_memory_by_its_own_vector_with_score_one(conn, project, five_hundred):
    text = five_hundred.embedded[122]
    rowid = conn.execute("SELECT rowid FROM memories WHERE content = ?", (text,)).fetchone()[0]
    for method in METHODS:
        best = vectors.search(conn, project.id, five_hundred.embed_query(text), 3, "fake", method)
        assert best[0][0] == rowid and best[0][1] == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("method", METHODS)
def test_search_never_returns_superseded_or_archived_memories(conn, project, method):
    fake = FakeEmbedder()
    old = remember(conn, project, "deploy with the blue button")
    archived = remember(conn, project, "deploy on fridays")
    vectors.index_missing(conn, fake, project.id)
    assert set(found(conn, project.id, "deploy", fake, method)) == {
        rowid_of(conn, old), rowid_of(conn, archived)}  # fmt: skip
    new = store.supersede(conn, project, old.id, records.make_draft(
        project, type="note", content="deploy with the green button")).memory  # fmt: skip
    store.archive(conn, project, archived.id)
    assert found(conn, project.id, "deploy", fake, method) == []  # the cache noticed
    vectors.index_missing(conn, fake, project.id)
    assert found(conn, project.id, "deploy", fake, method) == [rowid_of(conn, new)]


@pytest.mark.parametrize("method", METHODS)
def test_search_includes_global_memories_but_not_other_projects(conn, project, tmp_path, method):
    other = resolve(conn, "other-project")
    fake = FakeEmbedder()
    mine = remember(conn, project, "cache the parser tables")
    shared = remember(conn, project, "cache directories are never committed", scope="global")
    remember(conn, other, "cache eviction is LRU")
    vectors.index_missing(conn, fake)
    expected = {rowid_of(conn, mine), rowid_of(conn, shared)}
    assert set(found(conn, project.id, "cache", fake, method)) == expected
    assert len(found(conn, None, "cache", fake, method)) == 3


@pytest.mark.parametrize("method", METHODS)
def test_cached_search_sees_writes_from_another_connection(conn, project, method):
    fake = FakeEmbedder()
    first = remember(conn, project, "lint with ruff")
    vectors.index_missing(conn, fake, project.id)
    assert found(conn, project.id, "ruff", fake, method) == [rowid_of(conn, first)]
    other = db.connect()
    second = remember(other, project, "ruff also formats")
    vectors.index_missing(other, fake, project.id)
    assert set(found(conn, project.id, "ruff", fake, method)) == {
        rowid_of(conn, first), rowid_of(conn, second)}  # fmt: skip
    store.erase(other, project, first.id, reason="test")
    assert found(conn, project.id, "ruff", fake, method) == [rowid_of(conn, second)]


def test_numpy_cache_stays_correct_after_many_archives_and_additions(conn, project):
    fake = FakeEmbedder()
    memories = [remember(conn, project, f"topic alpha item {n}") for n in range(12)]
    vectors.index_missing(conn, fake, project.id)
    for memory in memories[:9]:  # marks rows dead, then compacts once most are gone
        store.archive(conn, project, memory.id)
        found(conn, project.id, "alpha", fake)
    added = remember(conn, project, "topic alpha, a late addition")
    vectors.index_missing(conn, fake, project.id)
    expected = {rowid_of(conn, m) for m in [*memories[9:], added]}
    assert set(found(conn, project.id, "alpha", fake, k=50)) == expected
    assert len(found(conn, project.id, "alpha", fake, k=2)) == 2


def test_search_with_nothing_indexed_is_empty(conn, project):
    remember(conn, project, "not embedded yet")
    for method in METHODS:
        assert vectors.search(conn, project.id, [1.0, 0.0, 0.0], 5, "fake", method) == []


def test_auto_search_uses_numpy_and_bad_arguments_are_refused(conn, project, five_hundred):
    query = five_hundred.embed_query("anything")
    auto = vectors.search(conn, project.id, query, 5, "fake")
    assert auto == vectors.search(conn, project.id, query, 5, "fake", "numpy")
    assert ("numpy", project.id, "fake", 384) in vectors.index_for(conn)._snapshots
    with pytest.raises(InvalidArgument, match="k must be at least 1"):
        vectors.search(conn, project.id, query, 0, "fake")
    with pytest.raises(InvalidArgument, match="unknown search method"):
        vectors.search(conn, project.id, query, 5, "fake", "faiss")


def test_the_per_connection_index_goes_away_with_its_connection():
    from waymark.recall import vector_index

    connection = db.connect()
    vectors.search(connection, None, [1.0, 0.0], 1, "fake", "vec0")
    assert connection in vector_index._indexes
    connection.close()
    del connection
    gc.collect()
    assert len(vector_index._indexes) == 0


def test_vec0_loads_by_path_without_importing_sqlite_vec(conn):
    import sys

    sys.modules.pop("sqlite_vec", None)
    assert vectors.load_vec0(conn)
    assert conn.execute("SELECT vec_version()").fetchone()[0].startswith("v")
    assert "sqlite_vec" not in sys.modules


def test_semantic_available_says_why_when_the_model_dir_is_empty(tmp_path, monkeypatch):
    empty = tmp_path / "no-model"
    empty.mkdir()
    monkeypatch.setenv(embed.ENV_MODEL_DIR, str(empty))
    ok, why = embed.semantic_available()
    assert not ok
    assert str(empty) in why and "model.onnx" in why and "tokenizer.json" in why
    assert embed.load_embedder() is None
    assert embed.last_reason() == why
    with pytest.raises(embed.ModelUnavailable) as caught:
        embed.open_embedder(allow_download=True)
    assert caught.value.code == "model_unavailable"


def test_without_a_model_dir_or_cache_nothing_is_fetched_unless_allowed(monkeypatch):
    monkeypatch.delenv(embed.ENV_MODEL_DIR, raising=False)
    ok, why = embed.semantic_available()
    assert not ok and "not downloaded yet" in why and "waymark index" in why
    assert embed.load_embedder(allow_download=False) is None


def test_recall_works_with_no_model(conn, project, tmp_path, monkeypatch):
    from waymark.recall import ranked as recall

    monkeypatch.setenv(embed.ENV_MODEL_DIR, str(tmp_path / "missing"))
    memory = remember(conn, project, "The release checklist lives in docs/release.md")
    assert embed.load_embedder() is None
    hits = recall.recall(conn, project, "release checklist", semantic=None)
    assert [hit.memory.id for hit in hits] == [memory.id]


@pytest.fixture(scope="module")
def real_model(tmp_path_factory):
    """The real model: from WAYMARK_EMBED_MODEL_DIR, else fastembed's normal download."""
    with pytest.MonkeyPatch.context() as patch:  # any download stays out of the user's home
        patch.setenv("WAYMARK_HOME", str(tmp_path_factory.mktemp("model-home")))
        return embed.open_embedder(allow_download=True)


def test_real_model_embeds_unit_vectors_of_384_dimensions(real_model):
    matrix = real_model.embed(["first text", "second text"])
    assert matrix.shape == (2, 384) and matrix.dtype == np.float32
    assert np.linalg.norm(matrix, axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)
    assert real_model.model == "all-MiniLM-L6-v2" and real_model.embed([]).shape == (0, 384)


@needs_real_model  # the small model the tests build ranks by shared words only
def test_real_model_ranks_a_related_memory_above_an_unrelated_one(conn, project, real_model):
    related = remember(conn, project, "The database file is locked while a migration runs")
    remember(conn, project, "Our logo uses the brand colour teal")
    remember(conn, project, "Lunch is served at noon on Fridays")
    vectors.index_missing(conn, real_model, project.id)
    query = real_model.embed_query("why does sqlite say the db is busy during schema upgrades")
    for method in METHODS:
        hits = vectors.search(conn, project.id, query, 3, real_model.model, method)
        assert hits[0][0] == rowid_of(conn, related)
        assert hits[0][1] > hits[1][1] + 0.1


@pytest.fixture
def waymark_cli():
    """`waymark` in-process."""
    from waymark import cli

    return cli.main


def test_index_command_embeds_what_is_missing_then_nothing(
    waymark_cli, conn, project, repo, capsys, monkeypatch
):
    fake = FakeEmbedder()
    monkeypatch.setattr(
        embed, "open_embedder", lambda spec=None, allow_download=False, threads=1: fake
    )
    settings.set_value(conn, "recall.int8_queries", False)  # no int8 copy of a fake model
    remember(conn, project, "first")
    remember(conn, project, "second")
    assert waymark_cli(["index", "--project", str(repo), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["embedded"], report["skipped"], report["total"]) == (2, 0, 2)
    assert report["model"] == "fake" and report["project"]["id"] == project.id
    assert waymark_cli(["index", "--project", str(repo)]) == 0
    assert "embedded 0, 2 already current (2 active memories, model fake)" in (
        capsys.readouterr().out
    )
    assert len(fake.embedded) == 2


def test_index_command_all_projects(waymark_cli, conn, project, capsys, monkeypatch):
    monkeypatch.setattr(
        embed, "open_embedder", lambda spec=None, allow_download=False, threads=1: FakeEmbedder()
    )
    settings.set_value(conn, "recall.int8_queries", False)  # no int8 copy of a fake model
    remember(conn, project, "mine")
    remember(conn, resolve(conn, "elsewhere"), "theirs")
    assert waymark_cli(["index", "--all-projects", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["embedded"] == 2 and report["project"] is None


def test_index_command_without_a_model_exits_1_with_model_unavailable(
    waymark_cli, repo, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv(embed.ENV_MODEL_DIR, str(tmp_path))
    assert waymark_cli(["index", "--project", str(repo), "--json"]) == 1
    error = json.loads(capsys.readouterr().out)
    assert error["code"] == "model_unavailable" and "model.onnx" in error["message"]
    assert waymark_cli(["index", "--project", str(repo)]) == 1
    assert "[model_unavailable]" in capsys.readouterr().err


def test_real_model_rows_keep_the_input_order_whatever_the_lengths(real_model):
    # embed sorts by length to pad less; each row must still belong to its own text.
    texts = ["a much longer text about the database migration " * 5, "short", "caching, medium"]
    together = real_model.embed(texts)
    alone = np.vstack([real_model.embed([text]) for text in texts])
    assert np.allclose(together, alone, atol=1e-5)
    assert not np.allclose(together[0], together[1], atol=1e-2)
