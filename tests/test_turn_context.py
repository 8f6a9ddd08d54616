"""Imported conversation turns are embedded with their neighbours (recall/vectors.py
`with_context`): a session's turns, in order, within the session only, each with its own
text first; nothing else changes how it is embedded. Real SQLite files; the embedder is a
stand-in that records what it was given (the quality gain is bench/retrieval.py's)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from waymark.data.importer import import_lines
from waymark.errors import InvalidArgument
from waymark.memories import draft as records
from waymark.memories import store
from waymark.recall import vectors

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


class Recorder:
    """Embeds each text as a fixed unit vector; keeps (text, max_tokens) of every call."""

    model, dim = "recorder", 8

    def __init__(self) -> None:
        self.seen: list[tuple[str, int | None]] = []

    def embed(self, texts: list[str], max_tokens: int | None = None) -> np.ndarray:
        self.seen += [(text, max_tokens) for text in texts]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        out[:, 0] = 1.0
        return out

    def texts(self) -> dict[str, str]:
        """Each embedded text by its first line (the turn's own text)."""
        return {text.split("\n", 1)[0]: text for text, _ in self.seen}


def lines(*rows: dict) -> list[str]:
    return [json.dumps(row) for row in rows]


def turns(session, *texts, prefix="t") -> list[dict]:
    return [
        {"key": f"{prefix}{session}:{i}", "text": text, "session": session,
         "timestamp": "2026-11-02T10:00:00"}
        for i, text in enumerate(texts)
    ]  # fmt: skip


def test_a_turn_is_embedded_with_two_turns_either_side_in_its_session_only(conn, project):
    import_lines(conn, project, lines(
        *turns(1, "Ann: did you run the race?", "Bo: yes, last Saturday!", "Ann: how was it?",
               "Bo: raised 300 for the shelter", "Ann: well done", "Bo: thanks"),
        *turns("two", "Bo: I adopted a cat", "Ann: what is its name?"),
        {"key": "alone", "text": "A note without a session"},
    ))  # fmt: skip
    agent = records.make_draft(project, type="fact", content="An agent's fact in a session",
                               actor="agent", session_id="s-1")  # fmt: skip
    store.remember(conn, project, agent)
    recorder = Recorder()
    report = vectors.index_missing(conn, recorder, project.id)
    assert report["embedded"] == 10
    got = recorder.texts()
    assert got["Bo: yes, last Saturday!"] == "\n".join([
        "Bo: yes, last Saturday!", "Ann: did you run the race?", "Ann: how was it?",
        "Bo: raised 300 for the shelter"])  # fmt: skip
    assert got["Ann: how was it?"] == "\n".join([
        "Ann: how was it?", "Ann: did you run the race?", "Bo: yes, last Saturday!",
        "Bo: raised 300 for the shelter", "Ann: well done"])  # fmt: skip
    assert got["Bo: thanks"] == "Bo: thanks\nBo: raised 300 for the shelter\nAnn: well done"
    # another session's turns are never context
    assert got["Bo: I adopted a cat"] == "Bo: I adopted a cat\nAnn: what is its name?"
    # what has no session, or was not imported, is embedded alone, at the model's own length
    caps = {text: cap for text, cap in recorder.seen}
    assert caps["A note without a session"] is None
    assert caps["An agent's fact in a session"] is None
    assert caps[got["Ann: how was it?"]] == vectors.CONTEXT_MAX_TOKENS


def test_the_context_is_the_same_whole_or_by_id_and_follows_a_changed_neighbour(conn, project):
    import_lines(conn, project, lines(*turns(7, "a one", "b two", "c three", "d four", "e five",
                                             "f six")))  # fmt: skip
    vectors.index_missing(conn, Recorder(), project.id)
    ids = [row[0] for row in conn.execute("SELECT id FROM memories ORDER BY rowid")]
    again = Recorder()
    # a write's own check (by id) makes the same text: nothing to embed again
    assert vectors.index_missing(conn, again, project.id, memory_ids=ids)["embedded"] == 0
    assert vectors.missing(conn, Recorder.model, project.id) == []
    # a turn changed: it and the turns within two of it are embedded again, no others
    changed = turns(7, "a one", "b two", "c three", "d FOUR", "e five", "f six")
    report = import_lines(conn, project, lines(*changed))
    assert report.superseded == 1
    later = Recorder()
    assert vectors.index_missing(conn, later, project.id)["embedded"] == 5
    assert sorted(later.texts()) == ["b two", "c three", "d FOUR", "e five", "f six"]
    assert later.texts()["b two"] == "b two\na one\nc three\nd FOUR"
    by_id = Recorder()
    assert vectors.index_missing(conn, by_id, project.id, memory_ids=ids)["embedded"] == 0


def test_an_import_keeps_a_session_scrubbed_and_refuses_one_of_another_kind(conn, project):
    report = import_lines(conn, project, lines(
        {"key": "k1", "text": "first turn", "session": f"chat {SECRET}"},
        {"key": "k2", "text": "second turn", "session": 12},
    ))  # fmt: skip
    assert report.created == 2 and report.redactions == 1
    stored = dict(conn.execute("SELECT key, session_id FROM memories").fetchall())
    assert SECRET not in stored["k1"] and "[REDACTED" in stored["k1"]
    assert stored["k2"] == "12"
    for bad in (True, {"id": 1}, [1]):
        with pytest.raises(InvalidArgument, match='line 1: "session" is a string or a number'):
            import_lines(conn, project, lines({"key": "k3", "text": "x", "session": bad}))
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 2


def test_import_then_index_as_a_user_runs_them_embeds_each_turn_with_its_context(tmp_path):
    """`waymark import` and `waymark index` as processes, with the model the tests load."""
    import subprocess
    import sys

    from waymark.storage import connection as db

    lines_file = tmp_path / "chat.jsonl"
    lines_file.write_text("\n".join(lines(
        *turns("d1", "Ann: did you finish the charity race?", "Bo: yes, last Saturday, 10 km!",
               "Ann: well done"),
        *turns("d2", "Bo: my knee hurts since then"),
    )) + "\n", encoding="utf-8")  # fmt: skip

    def waymark(*args):
        done = subprocess.run([sys.executable, "-m", "waymark", *args, "--json"],
                              capture_output=True, text=True, cwd=tmp_path)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert waymark("import", str(lines_file), "--project", "convo")["created"] == 4
    assert waymark("index", "--project", "convo")["embedded"] == 4
    conn = db.connect()
    stored = dict(conn.execute(
        "SELECT m.content, v.text_hash FROM memories m JOIN vectors v ON v.memory_rowid = m.rowid"
    ).fetchall())  # fmt: skip
    own = "Bo: yes, last Saturday, 10 km!"
    context = "\n".join([own, "Ann: did you finish the charity race?", "Ann: well done"])
    assert stored[own] == vectors.text_hash(context) != vectors.text_hash(own)
    alone = "Bo: my knee hurts since then"  # the only turn of its session
    assert stored[alone] == vectors.text_hash(alone)
    assert waymark("index", "--project", "convo")["embedded"] == 0  # nothing stale
    found = waymark("recall", "how long was the charity race", "--project", "convo")
    assert found["results"]
    conn.close()
