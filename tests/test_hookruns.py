"""Every hook run leaves one line (event, client, time, outcome, duration), and doctor says
per client whether the wired hooks fire: the proof beyond a config that looks right."""

from __future__ import annotations

import io
import json
import os

import pytest
from waymark.installers import install

from test_hooks import hook, payload
from waymark import home
from waymark.base import hookruns
from waymark.cli import main
from waymark.health import fired
from waymark.storage import connection as db


def runs():
    return hookruns.read()


def test_a_hook_process_records_its_run_with_client_event_outcome_and_duration(tmp_path):
    db.connect().close()  # the data home exists, as after an install
    done = hook("UserPromptSubmit", {"session_id": "s1", "prompt": "hi", "cwd": str(tmp_path)},
                client="codex")  # fmt: skip
    assert done.returncode == 0 and done.stdout == b""
    [run] = runs()
    assert (run["client"], run["event"], run["outcome"]) == ("codex", "UserPromptSubmit", "ok")
    assert 0 < run["ms"] < 20_000
    assert run["at"].endswith("Z") and len(run["at"]) == 24
    assert oct(os.stat(hookruns.path()).st_mode & 0o777) == "0o600"


def test_a_second_delivery_and_an_empty_payload_are_recorded_as_such(tmp_path):
    db.connect().close()
    same = {"session_id": "s1", "prompt": "hi", "cwd": str(tmp_path), "turn_id": "t1"}
    hook("UserPromptSubmit", same, fresh=False)
    hook("UserPromptSubmit", same, fresh=False)
    hook("Stop", b"")
    assert [r["outcome"] for r in runs()] == ["ok", "repeat", "empty"]


def test_an_internal_error_is_recorded_as_error_and_the_hook_still_exits_0(repo):
    db.connect().close()
    os.chmod(home.db_path(), 0o000)  # the store cannot be opened
    try:
        done = hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo)))
    finally:
        os.chmod(home.db_path(), 0o600)
    if os.geteuid() == 0:  # root opens it anyway: break it another way
        with open(home.db_path(), "wb") as f:
            f.write(b"not a database" * 100)
        done = hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo)))
    assert done.returncode == 0 and done.stdout == b""
    assert runs()[-1]["outcome"] == "error"


def test_no_record_is_made_where_waymark_has_no_data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("WAYMARK_HOME", str(tmp_path / "not-yet"))
    hookruns.append("claude-code", "Stop", "ok", 1.0)
    assert not (tmp_path / "not-yet").exists()


def test_the_record_moves_aside_past_its_size_and_a_cut_line_is_skipped(monkeypatch):
    db.connect().close()
    monkeypatch.setattr(hookruns, "MAX_BYTES", 400)
    for i in range(12):
        hookruns.append("claude-code", "PreToolUse", "ok", float(i))
    assert os.path.exists(hookruns.path() + ".1")
    with open(hookruns.path(), "a", encoding="utf-8") as f:
        f.write("2026-12-03T10:00:00.000Z\tclaude-code\tStop\tok")  # cut mid-write
    ms = [r["ms"] for r in runs()]
    assert ms == sorted(ms) and ms[-1] == 11.0 and len(ms) >= 6
    assert all(r["event"] == "PreToolUse" for r in runs())


def test_by_hook_gives_last_run_and_percentiles_of_the_runs_that_worked():
    rows = [{"at": f"2026-12-03T10:00:{i:02d}.000Z", "client": "codex", "event": "Stop",
             "outcome": "ok", "ms": float(i)} for i in range(1, 21)]  # fmt: skip
    rows.append({"at": "2026-12-03T10:01:00.000Z", "client": "codex", "event": "Stop",
                 "outcome": "error", "ms": 900.0})  # fmt: skip
    [row] = fired.by_hook(rows)
    assert (row["runs"], row["errors"], row["p50"], row["p95"]) == (21, 1, 10.0, 19.0)
    assert row["last_outcome"] == "error" and row["last_at"] == "2026-12-03T10:01:00.000Z"


@pytest.fixture
def user_home(tmp_path, monkeypatch):
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    (h / ".claude").mkdir()
    db.connect().close()
    install(["claude-code"])
    return h


def doctor(capsys):
    main(["doctor", "--json"])
    return {f["check"]: f for f in json.loads(capsys.readouterr().out)["findings"]}


def test_doctor_says_no_hook_ran_since_the_install_and_its_own_test_run_does_not_count(
    user_home, capsys
):
    found = doctor(capsys)
    said = found["claude-code hooks fired"]
    assert said["status"] == "warn"
    assert said["detail"].startswith("no claude-code hook has run since the install at")
    assert "start a claude-code session" in said["fix"]
    assert found["hook run"]["status"] == "ok"  # doctor fired SessionStart itself...
    assert [r["client"] for r in runs()] == ["self-test"]  # ...and recorded it as its own


def test_doctor_flags_a_wired_hook_that_stayed_silent_while_the_others_ran(
    user_home, tmp_path, capsys
):
    start = {"session_id": "s1", "source": "startup", "cwd": str(tmp_path)}
    hook("SessionStart", start)
    hook("UserPromptSubmit", {"session_id": "s1", "prompt": "hi", "cwd": str(tmp_path)})
    said = doctor(capsys)["claude-code hooks fired"]
    assert said["status"] == "warn"
    assert said["detail"].startswith("wired but silent since the install at")
    assert said["detail"].endswith(": Stop")
    hook("Stop", {"session_id": "s1", "cwd": str(tmp_path), "stop_hook_active": False})
    said = doctor(capsys)["claude-code hooks fired"]
    assert said["status"] == "ok", said
    assert "3 of" in said["detail"] and "last Stop at" in said["detail"]


def test_doctor_names_the_hook_whose_last_run_failed_open(user_home, capsys):
    for event in fired.EVERY_SESSION:
        hookruns.append("claude-code", event, "ok", 5.0)
    hookruns.append("claude-code", "PreToolUse", "error", 5.0)
    said = doctor(capsys)["claude-code hooks fired"]
    assert (said["status"], said["detail"]) == ("warn", "last run failed open: PreToolUse")
    assert "hooks.log" in said["fix"]
