"""The opt-in multilingual model (`recall.model multilingual`), through the real loading code
(fastembed, onnxruntime) with a small stand-in the tests build (tiny_model.py): it has
paraphrase-multilingual-MiniLM-L12-v2's files and puts a German or French word where its
English one is, as the real model puts translations near each other.

What a user sees: the setting chosen with `waymark config`, `waymark index` embedding with
it, an English question finding a German memory, every vector and every receipt naming the
model, and vectors of two models never compared: a store switched to another model searches
none of the old vectors until it is embedded again, and a running MCP server switches
without a restart.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

import tiny_model
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.recall import embed
from waymark.storage import connection as db

GERMAN = "Die Datenbank ist gesperrt: die nächtlich Zahlung Wiederholung"
QUERY = "nightly payment retry database locked"
ML = embed.MULTILINGUAL.id


@pytest.fixture(scope="module")
def multilingual_dir(tmp_path_factory):
    return tiny_model.build_multilingual(tmp_path_factory.mktemp("tiny-multilingual"))


@pytest.fixture(scope="module")
def english_dir(tmp_path_factory):
    return tiny_model.build(tmp_path_factory.mktemp("tiny-english"))


def wm(cwd, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "waymark", *args], cwd=cwd, text=True,
                          capture_output=True, env={**os.environ, **(env or {})})  # fmt: skip


def out(done: subprocess.CompletedProcess) -> dict:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def remember(conn, project, content: str) -> str:
    return store.remember(
        conn, project, make_draft(project, type="fact", content=content)
    ).memory.id


def models(conn) -> list[str]:
    return sorted({str(r[0]) for r in conn.execute("SELECT model FROM vectors")})


def test_an_english_question_finds_a_german_memory_and_every_vector_names_the_model(
    conn, project, repo, monkeypatch, multilingual_dir
):
    monkeypatch.setenv(embed.ENV_MODEL_DIR, str(multilingual_dir))
    german = remember(conn, project, GERMAN)
    remember(conn, project, "Lunch is served at noon on fridays")
    chosen = out(wm(repo, "config", "recall.model", "multilingual", "--json"))
    assert chosen == {"recall.model": "multilingual"}
    indexed = out(wm(repo, "index", "--json"))
    assert indexed["model"] == ML and indexed["embedded"] == 2
    assert models(conn) == [ML]
    found = out(wm(repo, "recall", QUERY, "--json", "--explain"))["results"]
    assert found and found[0]["memory"]["id"] == german
    semantic = found[0]["explain"]["tiers"]["semantic"]
    assert semantic["model"] == ML and "lexical" not in found[0]["explain"]["tiers"]
    status = out(wm(repo, "status", "--json"))["semantic"]
    assert status["embedded"] == 2 and status["other_models"] == {}
    assert ML in status["model"]


def test_a_bad_choice_is_refused_and_a_folder_of_the_other_model_is_named(
    repo, monkeypatch, english_dir
):
    refused = wm(repo, "config", "recall.model", "klingon", "--json")
    assert refused.returncode != 0
    error = json.loads(refused.stdout)
    assert error["code"] == "invalid_argument" and "english, multilingual" in error["message"]
    monkeypatch.setenv(embed.ENV_MODEL_DIR, str(english_dir))  # holds model.onnx only
    assert out(wm(repo, "config", "recall.model", "multilingual", "--json"))
    failed = wm(repo, "index", "--json")
    assert failed.returncode != 0
    assert "model_optimized.onnx" in json.loads(failed.stdout)["message"]


def test_vectors_of_another_model_are_never_searched_until_embedded_again(
    conn, project, repo, monkeypatch, english_dir, multilingual_dir
):
    german = remember(conn, project, GERMAN)
    monkeypatch.setenv(embed.ENV_MODEL_DIR, str(english_dir))
    assert out(wm(repo, "index", "--json"))["model"] == embed.ENGLISH.id
    monkeypatch.setenv(embed.ENV_MODEL_DIR, str(multilingual_dir))
    assert out(wm(repo, "config", "recall.model", "multilingual", "--json"))
    before = out(wm(repo, "recall", QUERY, "--json", "--explain"))["results"]
    assert all("semantic" not in hit["explain"]["tiers"] for hit in before)  # none compared
    status = out(wm(repo, "status", "--json"))["semantic"]
    assert status["embedded"] == 0 and status["other_models"] == {embed.ENGLISH.id: 1}
    assert "not searched" in status["said"]
    assert out(wm(repo, "index", "--json"))["embedded"] == 1
    after = out(wm(repo, "recall", QUERY, "--json", "--explain"))["results"]
    assert (
        after[0]["memory"]["id"] == german
        and after[0]["explain"]["tiers"]["semantic"]["model"] == ML
    )
    assert models(conn) == sorted([embed.ENGLISH.id, ML])  # the old ones kept, never searched


def test_a_running_server_switches_models_without_a_restart(
    conn, project, repo, monkeypatch, english_dir, multilingual_dir
):
    from waymark import settings
    from waymark.server.state import State

    german = remember(conn, project, GERMAN)
    monkeypatch.setenv(embed.ENV_MODEL_DIR, str(english_dir))
    monkeypatch.setattr(embed, "_loaded", {})
    state = State(cwd=str(repo))
    try:
        state._load_model()
        assert state.embedder is not None and state.embedder.spec == embed.ENGLISH
        assert models(conn) == [embed.ENGLISH.id]
        monkeypatch.setenv(embed.ENV_MODEL_DIR, str(multilingual_dir))
        settings.set_value(conn, embed.SETTING, "multilingual")
        with state.conn() as own:
            assert state.embedder_for(own) is None  # not the chosen model: lexical meanwhile
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
            state.embedder is not None and state.embedder.spec == embed.MULTILINGUAL
            and ML in models(conn) and not state._model_loading.locked()
        ):  # fmt: skip
            time.sleep(0.05)
        assert state.embedder.spec == embed.MULTILINGUAL and ML in models(conn)
        with state.conn() as own:
            near = state.semantic_for(own, project, QUERY)
            assert near is not None
            found = near()
        assert found.model == ML and found[0][0] == db.scalar(
            conn, "SELECT rowid FROM memories WHERE id = ?", (german,)
        )
    finally:
        state.close()


def test_a_prompt_packet_receipt_names_the_model_that_found_the_memory(
    conn, enabled, repo, monkeypatch, multilingual_dir
):
    from test_server_process import serving, wait_for
    from test_use import prompt
    from waymark import settings, warm

    monkeypatch.setenv(embed.ENV_MODEL_DIR, str(multilingual_dir))
    settings.set_value(conn, embed.SETTING, "multilingual")
    german = remember(conn, enabled, GERMAN)
    with serving(repo):
        probe = {"queries": ["x"], "project_id": enabled.id}

        def ready() -> bool:
            reply = warm.ask("semantic", probe, 0.5)
            return bool(reply and reply.get("ok") and reply.get("model") == ML)

        assert wait_for(ready, 60), "the server never loaded the multilingual model"
        assert wait_for(lambda: ML in models(conn), 60)
        said = prompt(repo, "ml-1", QUERY)
    assert said is not None and german in said
    why = [
        str(r[0])
        for r in conn.execute(
            "SELECT why FROM injections WHERE session_id = 'ml-1' AND item = ?", (german,)
        )
    ]
    assert why and f"semantic #1 by {ML}" in why[0]


def test_every_library_call_that_loads_or_looks_for_a_model_names_which():
    """The English model is these functions' default for tests and scripts; Waymark's own
    code always passes the store's choice (or, for the team store, the English model by
    name), so no caller falls back to it without saying so."""
    import ast
    import pathlib

    import waymark

    names = {"open_embedder", "load_embedder", "semantic_available", "int8_built",
             "int8_source", "cached_model"}  # fmt: skip
    silent = []
    for path in pathlib.Path(waymark.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            named = any(k.arg == "spec" for k in node.keywords)
            if name in names and not named and not node.args:
                silent.append(f"{path.name}:{node.lineno} {name}()")
    assert silent == []
