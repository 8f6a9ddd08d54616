"""Capture rules (`[capture]` in .waymark.toml): what is ignored never enters storage."""

from __future__ import annotations

import json

import pytest

from test_hooks import edit, hook, payload
from waymark import home
from waymark.projects import ignore
from waymark.projects.ignore import Rules, command_ignored, path_ignored


@pytest.mark.parametrize(
    ("rel", "ignored"),
    [
        ("node_modules/left-pad/index.js", True),
        ("src/node_modules/x.js", True),
        (".venv/lib/site.py", True),
        ("src/pkg/core.py", False),
        ("builder/main.py", False),  # a segment, not a prefix of one
    ],
)
def test_default_paths_are_segments(rel, ignored):
    assert path_ignored(rel, ignore.DEFAULTS) is ignored


def test_globs_match_the_end_and_a_slash_anchors_at_the_root():
    rules = Rules(("*.min.js", "generated/", "docs/*.html"), (), "x")
    assert path_ignored("web/app.min.js", rules) and path_ignored("app.min.js", rules)
    assert path_ignored("generated/a/b.py", rules) and not path_ignored("src/generated.py", rules)
    assert path_ignored("docs/index.html", rules) and not path_ignored("docs/a/index.html", rules)
    assert not path_ignored("web/app.js", rules)


def test_commands_match_by_glob_or_contained_text():
    rules = Rules((), ("npm run dev", "*--token*"), "x")
    assert command_ignored("npm run dev -- --port 3000", rules)
    assert command_ignored("deploy --token abc", rules)
    assert not command_ignored("npm test", rules)


def test_the_nearest_waymark_toml_with_a_capture_table_wins_and_replaces_the_default(repo):
    (repo / ".waymark.toml").write_text('[capture]\nignore_paths = ["vendor"]\n')
    (repo / "src" / ".waymark.toml").write_text("# no [capture] here\n")
    found = ignore.rules_for(str(repo / "src" / "pkg"), str(repo))
    assert found.paths == ("vendor",) and found.source == str(repo / ".waymark.toml")
    assert not path_ignored("node_modules/x.js", found)  # the project's list replaced it
    assert ignore.rules_for(str(repo), None) is ignore.DEFAULTS


def stored_bytes() -> bytes:
    with open(home.db_path(), "rb") as f:
        data = f.read()
    try:
        with open(home.db_path() + "-wal", "rb") as f:
            data += f.read()
    except FileNotFoundError:
        pass
    return data


def test_ignored_edits_and_commands_never_enter_storage(conn, repo):
    (repo / ".waymark.toml").write_text(
        '[capture]\nignore_paths = ["generated", "*.min.js"]\n'
        'ignore_commands = ["make zq-private*"]\n'
    )
    (repo / "generated").mkdir()
    (repo / "generated" / "zqgen.py").write_text("x = 1\n")
    (repo / "app.min.js").write_text("x\n")
    session = "s-ignore"
    edit(repo, session=session, path="generated/zqgen.py")
    edit(repo, session=session, path="app.min.js")
    failing = payload(
        "claude-code",
        "PostToolUseFailure",
        cwd=str(repo),
        session_id=session,
        tool_input={"command": "make zq-private-target"},
    )
    assert hook("PostToolUseFailure", failing).returncode == 0
    conn.close()
    data = stored_bytes()
    assert b"zqgen" not in data and b"app.min.js" not in data
    assert b"zq-private" not in data
    edit(repo, session=session, path="README.md")  # a file the rules keep is recorded
    assert b"README.md" in stored_bytes()


def test_a_read_only_session_is_given_its_memory_and_records_nothing(conn, repo):
    import subprocess
    import sys

    from test_hooks import context_of, remember, stop
    from waymark.projects.resolve import resolve

    project = resolve(conn, str(repo))
    remember(conn, project, "Tabs, never spaces", type="convention", pinned=True)
    conn.close()
    done = subprocess.run(
        [sys.executable, "-m", "waymark", "capture", "read-only", "--session", "s-ro"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    packet = context_of(
        hook(
            "SessionStart", payload("claude-code", "SessionStart", cwd=str(repo), session_id="s-ro")
        )
    )
    assert "Tabs, never spaces" in packet
    (repo / "README.md").write_text("# changed\n")
    edit(repo, session="s-ro", path="README.md")
    assert stop(repo, session="s-ro").stdout == b""  # nothing recorded, nothing to hand off
    status = json.loads(
        subprocess.run(
            [sys.executable, "-m", "waymark", "capture", "--session", "s-ro", "--json"],
            cwd=repo,
            capture_output=True,
            text=True,
        ).stdout
    )
    assert status["mode"] == "read-only" and status["records"] is False
    from waymark.storage import connection as db

    conn = db.connect()
    assert conn.execute("SELECT count(*) FROM session_ledger").fetchone()[0] == 0
    conn.close()


def test_capture_off_for_the_project_silences_every_hook(conn, repo):
    import subprocess
    import sys

    from test_hooks import remember
    from waymark.projects.resolve import resolve

    project = resolve(conn, str(repo))
    remember(conn, project, "Pinned rule", type="convention", pinned=True)
    conn.close()
    assert (
        subprocess.run(
            [sys.executable, "-m", "waymark", "capture", "off"], cwd=repo, capture_output=True
        ).returncode
        == 0
    )
    done = hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo)))
    assert (done.returncode, done.stdout) == (0, b"")
    shown = subprocess.run(
        [sys.executable, "-m", "waymark", "status"], cwd=repo, capture_output=True, text=True
    ).stdout
    assert "capture     off" in shown
