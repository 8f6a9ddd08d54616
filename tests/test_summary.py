"""Opt-in session summaries: a bounded, redacted candidate note refreshed at each Stop."""

from __future__ import annotations

from test_hooks import hook, payload
from test_pre_tool_use import edited, fail, passed
from waymark.base.tokens import estimate
from waymark.curation import candidates, summary

SECRET = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"


def stop(repo, session, message, client="claude-code"):
    data = payload(client, "Stop", cwd=str(repo), session_id=session)
    data["last_assistant_message"] = message
    data["transcript_path"] = str(repo / "no-such-transcript.jsonl")  # never read
    return hook("Stop", data, client)


def test_nothing_is_summarised_unless_the_project_asks(conn, enabled, repo):
    edited(repo, "src/pkg/core.py", "s1")
    stop(repo, "s1", "Done.")
    assert candidates.pending(conn, enabled) == []


def test_a_stop_proposes_the_session_summary_and_refreshes_it(conn, enabled, repo):
    (repo / ".waymark.toml").write_text("[summary]\nenabled = true\n")
    edited(repo, "src/pkg/core.py", "s1")
    fail(repo, "pytest -x tests/test_core.py", "s1", "Exit code 1\nE   boom")
    passed(repo, "pytest -x tests/test_core.py", "s1")
    done = stop(repo, "s1", f"Fixed the import; the token {SECRET} was rotated.")
    assert done.returncode == 0, done.stderr
    (note,) = candidates.pending(conn, enabled)
    text = note["fields"]["content"]
    assert note["kind"] == "summary" and note["fields"]["type"] == "note"
    assert "Files changed: src/pkg/core.py." in text
    assert "Commands: `pytest` ok." in text  # its last outcome; the failure is below
    assert "Failures seen: `pytest -x tests/test_core.py` (exit 1)" in text
    assert "Last message: Fixed the import" in text and SECRET not in text
    edited(repo, "README.md", "s1")
    stop(repo, "s1", "Also documented it.")
    (again,) = candidates.pending(conn, enabled)
    assert again["id"] == note["id"] and "README.md" in again["fields"]["content"]
    assert "Also documented it." in again["fields"]["content"]


def test_the_summary_stays_within_its_budget(conn, enabled, repo):
    for i in range(30):
        edited(repo, f"src/pkg/module_{i}.py", "s1")
    text = summary.build(conn, "s1", "word " * 5000)
    assert text is not None and estimate(text) <= summary.SUMMARY_TOKENS + 20
    assert "(and more)" in text
    assert summary.build(conn, "never-ran", "hi") is None


def test_a_bad_summary_table_never_costs_the_handoff(conn, enabled, repo):
    (repo / ".waymark.toml").write_text('[summary]\nenabled = "yes"\n')
    edited(repo, "src/pkg/core.py", "s1")
    done = stop(repo, "s1", "Done.")
    assert done.returncode == 0
    assert b"decision" in done.stdout  # the unsaved edit still asks for a checkpoint
    assert candidates.pending(conn, enabled) == []
