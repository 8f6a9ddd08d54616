"""The int8 query model: built once from the real model, close to it, used for queries only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest

from conftest import needs_real_model
from waymark import cli, errors, settings
from waymark.recall import embed, quantize
from waymark.server.state import State

QUERIES = [
    "why is the database locked while the migration runs",
    "src/waymark/recall.py fusion weights",
    "decided to keep SQLite in WAL mode; Postgres was rejected",
]


@pytest.fixture(scope="module")
def model_home(tmp_path_factory):
    """One data home for this module: the model (downloaded here when no
    WAYMARK_EMBED_MODEL_DIR names one) and the int8 copy built from it, once."""
    home = tmp_path_factory.mktemp("int8-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WAYMARK_HOME", str(home))
        patch.setattr(embed, "_loaded", {})
        quantize.build(embed.open_embedder(allow_download=True))
    return home


@pytest.fixture
def home(model_home, tmp_path, monkeypatch):
    """A data home of this test's own that shares the module's model folder."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "models").symlink_to(model_home / "models", target_is_directory=True)
    monkeypatch.setenv("WAYMARK_HOME", str(home))
    monkeypatch.setattr(embed, "_loaded", {})  # each test loads its own embedders
    return home


@pytest.fixture
def fresh_source(home, tmp_path, monkeypatch):
    """A copy of the model files at a new path: no int8 copy has been built for it."""
    source = embed.int8_source()
    folder = tmp_path / "model"
    folder.mkdir()
    for name in (embed.MODEL_FILE, *quantize.SIDE_FILES):
        if os.path.isfile(os.path.join(os.path.dirname(source), name)):
            shutil.copyfile(os.path.join(os.path.dirname(source), name), folder / name)
    monkeypatch.setenv(embed.ENV_MODEL_DIR, str(folder))
    return folder


def cosines(a, b):
    return (a * b).sum(axis=1)


def test_the_copy_is_close_to_the_full_model_but_not_the_same(home):
    folder = embed.int8_built()
    assert folder is not None and folder.startswith(str(home))
    facts = quantize.about(folder)
    assert facts["recipe"] == embed.INT8_RECIPE
    assert facts["probe_cosine_mean"] >= quantize.MIN_MEAN_COSINE
    assert facts["probe_cosine_worst"] >= quantize.MIN_WORST_COSINE

    embedder = embed.open_embedder()
    assert embedder.query_precision == "float32"
    full = embedder.embed_queries(QUERIES)
    assert quantize.attach(embedder) == folder
    assert embedder.query_precision == "int8"
    int8 = embedder.embed_queries(QUERIES)
    assert int8.shape == (3, 384) and int8.dtype == np.float32
    assert np.linalg.norm(int8, axis=1) == pytest.approx([1, 1, 1], abs=1e-5)
    assert (cosines(full, int8) >= 0.97).all()
    assert not np.allclose(full, int8, atol=1e-3)  # really another model
    # Documents keep the full model: stored vectors are canonical.
    assert np.allclose(embedder.embed(QUERIES, max_tokens=embed.QUERY_MAX_TOKENS), full)


def test_a_built_copy_is_found_not_rebuilt_and_owner_only(home, monkeypatch):
    folder = embed.int8_built()
    stamp = os.stat(os.path.join(folder, embed.MODEL_FILE)).st_mtime_ns
    monkeypatch.setattr(quantize.tempfile, "mkdtemp", lambda **_: pytest.fail("rebuilt"))
    assert quantize.build() == folder
    assert os.stat(os.path.join(folder, embed.MODEL_FILE)).st_mtime_ns == stamp
    if os.name == "posix":
        assert os.stat(os.path.dirname(folder)).st_mode & 0o077 == 0
    assert not [n for n in os.listdir(os.path.dirname(folder)) if n.startswith(".build-")]


def test_with_the_copy_a_process_loads_the_full_model_only_for_documents(home, monkeypatch):
    loaded = []
    real = embed.load_backend
    monkeypatch.setattr(embed, "load_backend", lambda folder, *, local_only, threads=1, spec=None: (
        loaded.append(folder) or real(folder, local_only=local_only, threads=threads)))  # fmt: skip
    embedder = embed.open_embedder(int8_queries=True)
    assert embedder.query_precision == "int8"
    embedder.embed_query(QUERIES[0])
    assert embedder.embed([]).shape == (0, 384)
    assert loaded == []  # the copy runs without fastembed
    embedder.embed(["a document"])
    assert loaded == [embed.model_dir()]
    assert embed.open_embedder(int8_queries=False) is not embedder
    assert embed.open_embedder(int8_queries=False).query_precision == "float32"


def test_index_builds_the_copy_and_status_reports_it(home, repo, capsys):
    assert cli.main(["remember", "--project", str(repo), "--content", "WAL mode stays"]) == 0
    capsys.readouterr()
    assert cli.main(["index", "--project", str(repo), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["embedded"] == 1
    assert report["queries"] == {
        "precision": "int8",
        "note": f"int8 copy at {embed.int8_built()}",
        "folder": embed.int8_built(),
    }
    assert cli.main(["status", "--project", str(repo)]) == 0
    assert f"queries     int8 copy at {embed.int8_built()}" in capsys.readouterr().out

    assert cli.main(["config", "recall.int8_queries", "false"]) == 0
    capsys.readouterr()
    assert cli.main(["index", "--project", str(repo), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["queries"]["precision"] == "float32"
    assert cli.main(["status", "--project", str(repo), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["semantic"]["queries"] == "full model (recall.int8_queries is off)"


@needs_real_model  # the small model the tests build ranks by shared words only
def test_hybrid_recall_finds_the_same_memory_through_either_model(home, repo, capsys):
    for text in (
        "The database file is locked while a migration runs",
        "Our logo uses the brand colour teal",
        "Lunch is served at noon on Fridays",
    ):
        assert cli.main(["remember", "--project", str(repo), "--content", text]) == 0
    assert cli.main(["index", "--project", str(repo)]) == 0
    found = {}
    for on in ("true", "false"):
        assert cli.main(["config", "recall.int8_queries", on]) == 0
        embed._loaded.clear()
        capsys.readouterr()
        query = "why does sqlite say the db is busy during schema upgrades"
        assert cli.main(["recall", query, "--project", str(repo), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["semantic"] is True
        found[on] = [r["memory"]["content"] for r in out["results"]]
    expected = "The database file is locked while a migration runs"
    assert found["true"][0] == found["false"][0] == expected


def test_the_server_sends_queries_through_the_copy(home, repo):
    state = State(cwd=str(repo))
    try:
        state._load_model()
        assert state.embedder is not None and state.embedder.query_precision == "int8"
        assert state.model_note == "all-MiniLM-L6-v2 loaded, queries int8"
    finally:
        state.close()


def test_a_server_builds_the_copy_in_a_process_of_its_own(fresh_source, repo, monkeypatch):
    """The quantiser holds the interpreter's lock for most of its 2 s: in the server's own
    process it slowed a new data home's first recalls threefold."""
    monkeypatch.setattr(quantize, "build", lambda *a, **k: pytest.fail("built in the server"))
    assert embed.int8_built() is None
    state = State(cwd=str(repo))
    try:
        state._load_model()
        assert state.embedder is not None and state.embedder.query_precision == "int8"
        assert embed.int8_built() is not None
    finally:
        state.close()


def test_a_copy_built_apart_says_why_there_is_none(tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("WAYMARK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv(embed.ENV_MODEL_DIR, str(tmp_path / "empty"))
    with pytest.raises(errors.Int8Unavailable, match="no embedding model on disk to copy"):
        quantize.build_apart(embed.ENGLISH)


def test_a_copy_that_strays_is_rejected_once_and_remembered(fresh_source, monkeypatch):
    embedder = embed.open_embedder()
    monkeypatch.setattr(quantize, "MIN_MEAN_COSINE", 1.01)
    with pytest.raises(errors.Int8Unavailable, match="strays too far") as first:
        quantize.attach(embedder)
    assert embedder.query_precision == "float32"
    assert embed.int8_built() is None
    assert quantize.note(True) == first.value.message
    # Not rebuilt at every start: the verdict holds until the model file or recipe changes.
    monkeypatch.setattr(quantize.tempfile, "mkdtemp", lambda **_: pytest.fail("rebuilt"))
    with pytest.raises(errors.Int8Unavailable) as second:
        quantize.build(embedder)
    assert second.value.message == first.value.message


def test_a_replaced_model_file_gets_a_new_copy_and_the_old_one_goes(fresh_source):
    embedder = embed.open_embedder()
    first = quantize.build(embedder)
    source = fresh_source / embed.MODEL_FILE
    stat = os.stat(source)
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert embed.int8_built() is None
    second = quantize.build(embedder)
    assert second != first and embed.int8_built() == second
    assert not os.path.exists(first)


def test_without_onnx_queries_stay_on_the_full_model(fresh_source, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime.quantization", None)  # import fails
    embedder = embed.open_embedder()
    with pytest.raises(errors.Int8Unavailable, match="cannot build the int8 query model"):
        quantize.attach(embedder)
    assert embedder.query_precision == "float32"
    assert "needs the onnx package" in quantize.note(True)  # no verdict stored: retried later


def test_the_int8_setting_is_a_boolean(conn):
    assert settings.get(conn, "recall.int8_queries") is True
    assert settings.set_value(conn, "recall.int8_queries", False) is False
    with pytest.raises(Exception, match="takes true or false"):
        settings.set_value(conn, "recall.int8_queries", "no")


def test_doctor_reports_the_query_model(home, fresh_source):
    from waymark.health import doctor

    embedding, query = doctor.model()
    assert embedding["status"] == "ok" and query["status"] == "warn"
    assert "waymark index" in query["fix"] and "onnx" in query["fix"]
    quantize.build(embed.open_embedder())
    embedding, query = doctor.model()
    assert query == doctor.finding("query model", "ok", f"int8 copy at {embed.int8_built()}")


def test_a_query_in_a_fresh_process_never_imports_fastembed(home):
    code = (
        "import sys; from waymark.recall import embed;"
        " e = embed.open_embedder(int8_queries=True);"
        " v = e.embed_query('why is the database locked');"
        " print(e.query_precision, v.shape, 'fastembed' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["int8", "(384,)", "False"]


def test_the_copy_runs_as_fastembed_would_run_it(home):
    folder = embed.int8_built()
    direct = embed.Embedder(embed.load_int8(folder))
    via_fastembed = embed.Embedder(embed.load_backend(folder, local_only=True))
    texts = [*QUERIES, "short", "a much longer query " * 40]  # padding and truncation
    for max_tokens in (embed.QUERY_MAX_TOKENS, None):
        a = direct.embed(texts, max_tokens=max_tokens)
        b = via_fastembed.embed(texts, max_tokens=max_tokens)
        assert np.allclose(a, b, atol=1e-5)


def test_a_query_through_the_copy_never_waits_behind_documents(home):
    embedder = embed.open_embedder(int8_queries=True)
    done = []
    with embedder._lock:  # as while the server embeds a batch of documents
        worker = threading.Thread(target=lambda: done.append(embedder.embed_query("locked?")))
        worker.start()
        worker.join(timeout=30)
    assert done and done[0].shape == (384,)
