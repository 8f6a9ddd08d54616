"""The embedding model's loading rules: what is cheap, what may touch the network."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from waymark.recall import embed


class StubBackend:
    def embed(self, texts, batch_size):
        for n, _ in enumerate(texts):
            row = np.zeros(embed.ENGLISH.dim, dtype=np.float32)
            row[n % embed.ENGLISH.dim] = 3.0
            yield row


@pytest.fixture
def loads(monkeypatch):
    """Record how the backend would be loaded, without loading it."""
    calls = []
    monkeypatch.delenv(embed.ENV_MODEL_DIR, raising=False)
    monkeypatch.setattr(embed, "_loaded", {})
    monkeypatch.setattr(embed, "load_backend", lambda folder, *, local_only, threads=1, spec=None: (
        calls.append((folder, local_only) if threads == 1 else (folder, local_only, threads))
        or StubBackend()))  # fmt: skip
    return calls


def test_the_model_is_downloaded_only_when_allowed(loads):
    with pytest.raises(embed.ModelUnavailable, match="not downloaded yet"):
        embed.open_embedder(allow_download=False)
    assert loads == []
    embedder = embed.open_embedder(allow_download=True)
    assert loads == [(None, False)]
    assert embedder.model == "all-MiniLM-L6-v2" and embedder.dim == 384


def test_a_cached_download_is_loaded_offline(loads):
    snapshot = os.path.join(embed.cache_dir(), embed.ENGLISH.hub, "snapshots", "0123abc")
    os.makedirs(snapshot)
    open(os.path.join(snapshot, "model.onnx"), "wb").close()
    ok, why = embed.semantic_available()
    assert ok and snapshot in why
    embed.open_embedder(allow_download=False)
    embed.open_embedder(allow_download=True)  # loaded once per process
    assert loads == [(None, True)]


def test_a_model_dir_is_loaded_offline(loads, tmp_path, monkeypatch):
    for name in embed.ENGLISH.files:
        (tmp_path / name).write_bytes(b"")
    monkeypatch.setenv(embed.ENV_MODEL_DIR, str(tmp_path))
    assert embed.semantic_available() == (True, f"{embed.ENGLISH.name} from {tmp_path}")
    embed.open_embedder(allow_download=True)
    assert loads == [(str(tmp_path), True)]


def test_semantic_available_names_missing_packages(monkeypatch):
    real = embed._installed
    monkeypatch.setattr(embed, "_installed", lambda name: name != "fastembed" and real(name))
    ok, why = embed.semantic_available()
    assert not ok and why.startswith("fastembed not installed")
    assert embed.load_embedder(allow_download=True) is None
    assert embed.last_reason() == why


def test_embedder_returns_unit_float32_rows(loads):
    embedder = embed.open_embedder(allow_download=True)
    matrix = embedder.embed(["a", "b", "c"])
    assert matrix.shape == (3, 384) and matrix.dtype == np.float32
    assert np.linalg.norm(matrix, axis=1) == pytest.approx([1, 1, 1])
    assert embedder.embed_query("a").shape == (384,)


def test_importing_embed_and_vectors_loads_nothing_heavy():
    code = (
        "import sys, waymark.recall.embed, waymark.recall.vectors, waymark.cli.recall\n"
        "print(sorted(m for m in ('numpy', 'fastembed', 'onnxruntime', 'sqlite_vec', 'sqlite3')"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         encoding="utf-8", check=True).stdout  # fmt: skip
    assert out.strip() == "[]"


def test_real_model_truncates_at_256_tokens():
    embedder = embed.open_embedder(allow_download=True)  # WAYMARK_EMBED_MODEL_DIR, or fetched
    head = " ".join(["house"] * 300)  # 300 tokens: past 256, well short of 512
    a, b = embedder.embed([head + " apples and pears", head + " a different ending"])
    assert np.dot(a, b) == pytest.approx(1.0, abs=1e-6)


def test_real_model_max_tokens_cuts_each_text_then_restores_the_default():
    embedder = embed.open_embedder(allow_download=True)
    head = "rotate the signing keys"
    long = head + " while the nightly job uploads unrelated archives" * 30
    cut, alone = embedder.embed([long], max_tokens=8)[0], embedder.embed([head])[0]
    assert np.dot(cut, alone) > 0.9
    assert np.dot(embedder.embed([long])[0], alone) < 0.8  # the default length is back
    assert embed._tokenizer(embedder._backend).truncation["max_length"] == embed.ENGLISH.max_tokens


def test_more_threads_is_another_embedder_of_the_same_model(loads):
    one = embed.open_embedder(allow_download=True)
    two = embed.open_embedder(allow_download=True, threads=2)
    assert one is not two and two is embed.open_embedder(allow_download=True, threads=2)
    assert loads == [(None, False), (None, False, 2)]


def test_index_offline_fails_in_seconds_with_the_model_folder_hint(tmp_path, repo):
    import subprocess
    import sys
    import time

    env = {k: v for k, v in os.environ.items() if k != "WAYMARK_EMBED_MODEL_DIR"}
    env.update(
        WAYMARK_HOME=str(tmp_path / "home"),
        HF_HOME=str(tmp_path / "hf"),
        HF_ENDPOINT="http://127.0.0.1:9",  # nothing listens: as offline as it gets
    )
    env.pop("HTTPS_PROXY", None)
    env.pop("https_proxy", None)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "waymark", "index"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.monotonic() - started < 15
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines  # one clear line: no library output before it
    assert "WAYMARK_EMBED_MODEL_DIR" in lines[0] and "[model_unavailable]" in lines[0]


def test_index_model_dir_is_recorded_for_every_later_process(tmp_path, repo, embedding_model):
    import json
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "WAYMARK_EMBED_MODEL_DIR"}
    env.update(WAYMARK_HOME=str(tmp_path / "home"), HF_HOME=str(tmp_path / "hf"),
               HF_ENDPOINT="http://127.0.0.1:9")  # fmt: skip

    def waymark(*args):
        return subprocess.run([sys.executable, "-m", "waymark", *args], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip

    saved = waymark("remember", "--type", "note", "--content", "the parser keeps line numbers")
    assert saved.returncode == 0, saved.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = waymark("index", "--json", "--model-dir", str(empty))
    error = json.loads(refused.stdout)
    assert refused.returncode == 1 and error["code"] == "invalid_argument"
    assert "lacks model.onnx" in error["message"]
    done = waymark("index", "--model-dir", embedding_model)
    assert done.returncode == 0, done.stderr
    assert f"model folder {embedding_model} recorded" in done.stderr and "embedded 1" in done.stdout
    status = waymark("status", "--json")  # another process, no variable: the recorded folder
    semantic = json.loads(status.stdout)["semantic"]
    assert semantic["available"] and semantic["said"].startswith("on:")
    assert embedding_model in semantic["said"] and "(1 embedded)" in semantic["said"]
    forgot = waymark("index", "--model-dir", "")
    assert forgot.returncode == 1 and "model folder forgotten" in forgot.stderr
    said = json.loads(waymark("status", "--json").stdout)["semantic"]["said"]
    assert said.startswith("off: vectors for 1 memories; model not available in this process")
