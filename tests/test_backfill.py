"""Backfill from past sessions: transcripts in Claude Code's and Codex's own line shapes (as
the real clients write them: tests/e2e/test_backfill_clients.py reads real ones), read for
this project only, redacted, proposed as candidates with their source; idempotent; a bulk
approve; the CLI as a user runs it."""

from __future__ import annotations

import json

import pytest

from waymark.cli import main

TOKEN = "ghp_" + "B1c2D3e4F5g6H7i8J9k0L1m2N3o4P5q6R7s8"


def claude_lines(cwd: str) -> list[dict]:
    def say(kind: str, content, at: str) -> dict:
        return {"type": kind, "cwd": cwd, "timestamp": at, "sessionId": "s",
                "message": {"role": kind, "content": content}}  # fmt: skip

    return [
        say("user", "Fix the failing tests", "2026-11-20T10:00:00.000Z"),
        say(
            "assistant",
            [
                {
                    "type": "text",
                    "text": "We decided to use Celery queues instead of "
                    "threads because retries pile up in the web workers.",
                }
            ],
            "2026-11-20T10:00:01.000Z",
        ),  # fmt: skip
        say(
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Bash",
                    "input": {"command": "pytest tests/test_api.py"},
                }
            ],
            "2026-11-20T10:00:02.000Z",
        ),
        say(
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "is_error": True,
                    "content": "Exit code 1\nE   ModuleNotFoundError: No module named 'celery'",
                }
            ],
            "2026-11-20T10:00:03.000Z",
        ),  # fmt: skip
        say(
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "t2",
                    "name": "Bash",
                    "input": {"command": f"pip install celery --token {TOKEN}"},
                }
            ],
            "2026-11-20T10:00:04.000Z",
        ),  # fmt: skip
        say(
            "user",
            [{"type": "tool_result", "tool_use_id": "t2", "content": "ok"}],
            "2026-11-20T10:00:05.000Z",
        ),
        say(
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "t3",
                    "name": "Write",
                    "input": {"file_path": f"{cwd}/src/tasks.py", "content": "x"},
                }
            ],
            "2026-11-20T10:00:06.000Z",
        ),  # fmt: skip
        say(
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "t4",
                    "name": "Bash",
                    "input": {"command": "pytest tests/test_api.py -q"},
                }
            ],
            "2026-11-20T10:00:07.000Z",
        ),
        say(
            "user",
            [{"type": "tool_result", "tool_use_id": "t4", "content": "3 passed"}],
            "2026-11-20T10:00:08.000Z",
        ),  # fmt: skip
    ]


def codex_lines(cwd: str) -> list[dict]:
    def item(payload: dict, at: str) -> dict:
        return {"timestamp": at, "type": "response_item", "payload": payload}

    return [
        {
            "timestamp": "2026-11-21T09:00:00.000Z",
            "type": "session_meta",
            "payload": {"id": "c1", "cwd": cwd, "timestamp": "2026-11-21T09:00:00.000Z"},
        },
        item(
            {
                "type": "message",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": "Decision: keep money as integer cents everywhere.",
                    }
                ],
            },
            "2026-11-21T09:00:01.000Z",
        ),  # fmt: skip
        item(
            {
                "type": "function_call",
                "name": "exec_command",
                "call_id": "c-1",
                "arguments": json.dumps(
                    {
                        "cmd": "apply_patch <<'EOF'\n*** Begin Patch\n*** Update "
                        "File: src/money.py\n@@\n-x\n+y\n*** End Patch\nEOF"
                    }
                ),
            },
            "2026-11-21T09:00:02.000Z",
        ),  # fmt: skip
        item(
            {
                "type": "function_call_output",
                "call_id": "c-1",
                "output": "Process exited with code 0\nOutput:\nDone",
            },
            "2026-11-21T09:00:03.000Z",
        ),
    ]


def write(path, lines) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


@pytest.fixture
def transcripts(repo, tmp_path, monkeypatch):
    claude = tmp_path / "claude-config"
    codex = tmp_path / "codex-home"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    monkeypatch.chdir(repo)
    write(claude / "projects" / "-repo" / "a1.jsonl", claude_lines(str(repo)))
    write(claude / "projects" / "-other" / "b1.jsonl", claude_lines(str(tmp_path / "elsewhere")))
    write(codex / "sessions" / "2026" / "11" / "21" / "rollout-2026-11-21T09-00-00-c1.jsonl",
          codex_lines(str(repo)))  # fmt: skip
    main(["remember", "--content", "a first memory makes the project"])
    return repo


def cli(capsys, *args: str, code: int = 0) -> dict:
    capsys.readouterr()
    assert main([*args, "--json"]) == code
    return json.loads(capsys.readouterr().out)


def test_a_backfill_proposes_decisions_fixes_and_edits_with_their_source(conn, transcripts, capsys):
    done = cli(capsys, "backfill")
    assert (done["transcripts"], done["read"]) == (3, 3)
    assert done["by_kind"] == {"decision": 2, "fix": 1, "edits": 2}
    found = cli(capsys, "candidates", "--kind", "backfill")["results"]
    by_type: dict[str, list] = {}
    for c in found:
        by_type.setdefault(c["fields"]["type"], []).append(c)
    contents = [c["fields"]["content"] for c in by_type["decision"]]
    assert any("Celery queues instead of threads" in t for t in contents)
    assert any("integer cents" in t for t in contents)
    (fix,) = by_type["lesson"]
    assert "`pytest tests/test_api.py` failed with: ModuleNotFoundError" in fix["fields"]["content"]
    assert "passed after running `pip install celery --token [REDACTED" in fix["fields"]["content"]
    (cited,) = fix["evidence"]
    assert cited["url"].startswith("file://") and cited["url"].endswith("a1.jsonl#L3")
    assert cited["note"] == "claude transcript a1.jsonl:3, 2026-11-20"
    notes = sorted(c["fields"]["content"] for c in by_type["note"])
    assert "src/tasks.py" in notes[0] and "src/money.py" in notes[1]
    assert TOKEN not in json.dumps(found)
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    from pathlib import Path

    from waymark import home

    for f in Path(home.data_home()).glob("waymark.db*"):
        assert TOKEN.encode() not in f.read_bytes()
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 1  # none active yet


def test_a_second_run_proposes_nothing_new_and_a_bulk_approve_makes_them_memories(
    conn, transcripts, capsys
):
    first = cli(capsys, "backfill")
    again = cli(capsys, "backfill")
    assert again["proposed"] == 0 and again["known"] == first["proposed"]
    dry = cli(capsys, "backfill", "--dry-run")
    assert dry["proposed"] == 0
    cli(capsys, "review", "--kind", "backfill", "--approve")
    assert cli(capsys, "candidates", "--kind", "backfill")["results"] == []
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 1 + first["proposed"]
    assert cli(capsys, "backfill")["proposed"] == 0  # approved ones are never proposed again


def test_since_and_client_choose_the_transcripts(conn, transcripts, capsys):
    assert cli(capsys, "backfill", "--client", "codex", "--dry-run")["transcripts"] == 1
    assert cli(capsys, "backfill", "--since", "2999-01-01", "--dry-run")["transcripts"] == 0
