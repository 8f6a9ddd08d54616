"""Claude Code's status line: `waymark install --statusline` wires it where none is set, the
command Claude Code runs prints the session's line (a real process, the JSON on stdin), and
uninstall takes it out byte for byte; a status line of the user's own is never touched."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from waymark.installers import commands, install, uninstall

from test_hooks import edit, hook, payload, remember, stop
from test_install import CLAUDE_SETTINGS, _seed, tree
from test_install import home as home  # noqa: F401  (the fixture)
from waymark.handoff import checkpoints
from waymark.handoff.origin import Origin
from waymark.packets.statusline import ago

PY = sys.executable


def line(session_id: str, python: str = PY) -> subprocess.CompletedProcess:
    """The status line as Claude Code runs it: its installed command, the JSON on stdin."""
    command = commands.statusline(python)["command"]
    data = {"session_id": session_id, "cwd": os.getcwd(), "model": {"display_name": "Opus"},
            "workspace": {"current_dir": os.getcwd()}}  # fmt: skip
    return subprocess.run(["/bin/sh", "-c", command], input=json.dumps(data).encode(),
                          capture_output=True, timeout=20)  # fmt: skip


def said(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    return done.stdout.decode("utf-8")


def test_the_line_follows_the_session_shown_used_and_its_handoff(conn, enabled, repo):
    warning = remember(conn, enabled, "core.py: run() is not reentrant", type="warning",
                       scope="file", target="src/pkg/core.py")  # fmt: skip
    assert said(line("s1")) == "memory: ready\n"  # no hook has opened the session yet
    hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo), session_id="s1"))
    assert said(line("s1")) == "memory: 0 shown · 0 used · no handoff yet\n"
    prompt = payload("claude-code", "UserPromptSubmit", cwd=str(repo), session_id="s1",
                     prompt="Please add a retry flag to src/pkg/core.py")  # fmt: skip
    assert warning.id in hook("UserPromptSubmit", prompt).stdout.decode()
    assert said(line("s1")) == "memory: 1 shown · 0 used · no handoff yet\n"
    edit(repo, session="s1")  # the file the warning names, edited after it was shown: used
    assert stop(repo, session="s1").returncode == 0  # asks for a handoff, settles use
    assert said(line("s1")) == "memory: 1 shown · 1 used · handoff needed\n"
    checkpoints.create(conn, enabled, {"objective": "Retry flag", "next_action": "test it"},
                       Origin(client="claude-code", session_id="s1"))  # fmt: skip
    assert said(line("s1")) == "memory: 1 shown · 1 used · handoff saved just now\n"
    hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo), session_id="s2"))
    assert said(line("s2")).endswith("· last handoff just now\n")


def test_the_line_fails_open_and_says_nothing_on_bad_input(enabled, repo):
    assert said(line("")) == ""
    command = commands.statusline(PY)["command"]
    for junk in (b"", b"not json", b"[1, 2]", b'{"session_id": 7}'):
        done = subprocess.run(["/bin/sh", "-c", command], input=junk, capture_output=True)
        assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""


def test_ages_read_as_people_say_them():
    from waymark.base import clock

    stamp = "2027-01-15T08:00:00.000Z"
    at = clock.epoch(stamp)
    assert ago(stamp, at + 30) == "just now"
    assert ago(stamp, at + 125) == "2 min ago"
    assert ago(stamp, at + 3 * 3600 + 5) == "3 h ago"
    assert ago(stamp, at + 2 * 86400) == "2 d ago"


@pytest.mark.parametrize("settings", list(CLAUDE_SETTINGS))
def test_install_wires_it_keeps_it_and_uninstall_gives_every_byte_back(home, settings):  # noqa: F811
    _seed(home, {".claude/settings.json": CLAUDE_SETTINGS[settings]})
    (home / ".claude").mkdir(exist_ok=True)
    before = tree(home)
    install(["claude-code"], python=PY, statusline=True)
    path = home / ".claude" / "settings.json"
    entry = json.loads(path.read_text(encoding="utf-8-sig"))["statusLine"]
    assert entry == commands.statusline(PY) and commands.is_our_statusline(entry)
    wired = path.read_bytes()
    install(["claude-code"], python=PY)  # a re-install (an upgrade) keeps it
    assert path.read_bytes() == wired
    install(["claude-code"], python=PY, statusline=False)
    assert "statusLine" not in json.loads(path.read_text(encoding="utf-8-sig"))
    install(["claude-code"], python=PY, statusline=True)
    uninstall()
    assert tree(home) == before


def test_a_status_line_of_the_users_own_is_never_touched(home):  # noqa: F811
    own = {"statusLine": {"type": "command", "command": "~/.claude/my-line.sh"}}
    _seed(home, {".claude/settings.json": json.dumps(own, indent=2) + "\n"})
    report = install(["claude-code"], python=PY, statusline=True)
    assert any("sets a statusLine already" in note for note in report["notes"])
    path = home / ".claude" / "settings.json"
    assert json.loads(path.read_text(encoding="utf-8-sig"))["statusLine"] == own["statusLine"]
    uninstall()
    assert json.loads(path.read_text(encoding="utf-8-sig")) == own


def test_the_cli_prints_the_same_line(conn, enabled, repo, capsys, monkeypatch):
    from waymark.cli import main

    hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo), session_id="c1"))
    assert main(["statusline", "--session", "c1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"session": "c1", "line": "memory: 0 shown · 0 used · no handoff yet"}
    piped = subprocess.run([PY, "-m", "waymark", "statusline"], capture_output=True,
                           input=json.dumps({"session_id": "c1"}).encode())  # fmt: skip
    assert piped.returncode == 0 and piped.stdout.decode() == out["line"] + "\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["statusline", "--json"]) != 0  # no session named: a clear error
    refused = json.loads(capsys.readouterr().out)
    assert refused["code"] == "invalid_argument" and "name the session" in refused["message"]
