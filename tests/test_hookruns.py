"""Every hook run leaves one line (event, client, time, outcome, duration), and doctor says
per client whether the wired hooks fire: the proof beyond a config that looks right."""

from __future__ import annotations

import io
import json
import os
import time

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


def self_test(capsys, *extra):
    code = main(["doctor", "--self-test", "--json", *extra])
    found = json.loads(capsys.readouterr().out)["findings"]
    return code, {f["check"]: f for f in found if f["check"].endswith(" self-test")}


def test_self_test_fires_each_installed_hook_as_the_client_would(user_home, capsys):
    (user_home / ".codex").mkdir()
    install(["codex"])
    code, found = self_test(capsys)
    assert code == 0
    expected = {f"claude-code {e} self-test" for e in (
        "SessionStart", "UserPromptSubmit", "PreToolUse", "SubagentStart", "PostToolUse",
        "PostToolUseFailure", "PreCompact", "PostCompact", "Stop", "SubagentStop",
        "SessionEnd")}  # fmt: skip
    expected |= {f"codex {e} self-test" for e in (
        "SessionStart", "UserPromptSubmit", "PreToolUse", "SubagentStart", "PostToolUse",
        "PreCompact", "PostCompact", "Stop", "SubagentStop", "SessionEnd")}  # fmt: skip
    assert set(found) == expected
    for said in found.values():
        assert said["status"] == "ok", said
        assert said["detail"].startswith("exit 0 in ") and said["detail"].endswith(" ms")
    # Recorded as Waymark's own test runs, never as the clients: no proof they fire.
    assert {r["client"] for r in runs()} == {"self-test"}
    events = [r["event"] for r in runs() if r["event"] != "SessionStart"]
    assert sorted(set(events)) == sorted({k.split()[1] for k in expected} - {"SessionStart"})
    assert home.data_home() and not os.path.exists(os.path.join(home.data_home(), "spool"))


def test_self_test_fails_a_hook_whose_command_path_was_broken_on_purpose(user_home, capsys):
    settings = user_home / ".claude" / "settings.json"
    doc = json.loads(settings.read_text(encoding="utf-8"))
    (stop,) = [h for g in doc["hooks"]["Stop"] for h in g["hooks"]]
    stop["command"] = stop["command"].replace(stop["command"].split()[0], "/nonexistent/python3", 1)
    settings.write_text(json.dumps(doc), encoding="utf-8")
    code, found = self_test(capsys)
    assert code == 1  # a FAIL: not healthy
    said = found["claude-code Stop self-test"]
    assert said["status"] == "fail" and said["detail"].startswith("exit 127 in ")
    assert "/nonexistent/python3" in said["detail"]  # the shell's own words
    assert said["fix"].startswith("waymark install --client claude-code")
    assert all(f["status"] == "ok" for k, f in found.items() if "Stop" not in k)


def test_self_test_fails_a_command_that_exits_0_but_never_reaches_waymark(user_home, capsys):
    settings = user_home / ".claude" / "settings.json"
    doc = json.loads(settings.read_text(encoding="utf-8"))
    (start,) = [h for g in doc["hooks"]["SessionStart"] for h in g["hooks"]]
    start["command"] = "true -m waymark.hooks.session_start"  # Waymark's name, nothing run
    (stop,) = [h for g in doc["hooks"]["Stop"] for h in g["hooks"]]
    stop["command"] = "echo -m waymark.hooks.stop"  # prints what no client can parse
    settings.write_text(json.dumps(doc), encoding="utf-8")
    _, found = self_test(capsys)
    said = found["claude-code SessionStart self-test"]
    assert said["status"] == "fail" and "never reached Waymark's hook" in said["detail"]
    said = found["claude-code Stop self-test"]
    assert said["status"] == "fail" and said["detail"].endswith("its output is not JSON")


def test_a_client_session_with_no_hook_run_is_flagged_whatever_the_config_says():
    rows = fired.by_hook([
        {"at": "2026-12-02T09:00:00.000Z", "client": "codex", "event": e, "outcome": "ok",
         "ms": 5.0} for e in fired.EVERY_SESSION
    ])  # fmt: skip
    wired = sorted(fired.EVERY_SESSION)
    installed = "2026-12-01T08:00:00Z"
    said = fired.finding("codex", wired, installed, "2026-12-02T09:05:00.000Z", rows)
    assert said["status"] == "ok", said  # the session that made the files ran the hooks
    said = fired.finding("codex", wired, installed, "2026-12-02T11:00:00.000Z", rows)
    assert said["status"] == "warn"
    assert said["detail"].startswith(
        "codex started a session at 2026-12-02 11:00 and no Waymark hook ran in it"
    )
    assert "codex exec" in said["detail"] and "--self-test" in said["fix"]
    # A session before the install says nothing of the hooks installed since.
    assert fired.finding("codex", wired, "2026-12-02T12:00:00Z", "2026-12-02T11:00:00.000Z", rows)[
        "detail"
    ].startswith("no codex hook has run since the install")


def test_when_each_client_last_started_a_session_comes_from_its_own_folders(user_home):
    from waymark.installers.checks import session_started

    assert session_started("codex") is None
    old, new = 1_796_200_000, 1_796_290_000
    for day, when in (("2026/11/30", old), ("2026/12/02", new)):
        folder = user_home / ".codex" / "sessions" / day
        folder.mkdir(parents=True)
        (folder / "rollout-x.jsonl").write_text("{}\n")
        os.utime(folder, (when, when))
    said = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(new))
    assert session_started("codex") == said
    for name, when in (("-tmp-a", new), ("-tmp-b", old)):
        folder = user_home / ".claude" / "projects" / name
        folder.mkdir(parents=True)
        os.utime(folder, (when, when))
    assert session_started("claude-code") == said


def test_status_says_when_each_hook_last_ran_per_client(user_home, tmp_path, capsys):
    hook("SessionStart", {"session_id": "s1", "source": "startup", "cwd": str(tmp_path)})
    hook("UserPromptSubmit", {"session_id": "s1", "prompt": "hi", "cwd": str(tmp_path)})
    repo = tmp_path / "work"
    repo.mkdir()
    assert main(["remember", "--project", str(repo), "--content", "a project to ask of"]) == 0
    capsys.readouterr()
    assert main(["status", "--json", "--project", str(repo)]) == 0
    (claude,) = [c for c in json.loads(capsys.readouterr().out)["hooks"]]
    assert claude["client"] == "claude-code" and claude["status"] == "warn"
    assert claude["said"].endswith(": Stop")  # wired, silent while the others ran
    events = {e["event"]: e for e in claude["events"]}
    assert events["SessionStart"]["runs"] == 1 and events["SessionStart"]["last_outcome"] == "ok"
    assert events["Stop"]["silent"] and events["Stop"]["last_at"] is None
    assert main(["status", "--project", str(repo)]) == 0
    text = capsys.readouterr().out
    assert "hooks       claude-code: wired but silent since the install at" in text
    assert "SessionStart" in text and "never [silent]" in text
