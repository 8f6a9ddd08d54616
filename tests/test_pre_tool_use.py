"""PreToolUse as a real process: what is known about a file before its edit and about a
command before it runs, once per session, within budget; guards that ask; nothing heavy."""

from __future__ import annotations

import json

import pytest

from conftest import call_tool
from test_hooks import context_of, hook, modules_loaded, payload, remember
from waymark.base import shell as commands
from waymark.handoff import checkpoints
from waymark.projects import capture
from waymark.storage import sessions
from waymark.storage.search import typed_matches


def before_edit(repo, path="src/pkg/core.py", session="s1", client="claude-code"):
    if client == "codex":  # Codex edits through apply_patch in its shell tool
        patch = f"apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: {path}\n@@\n-a\n+b\n*** End Patch\nEOF\n"
        data = payload("codex", "PreToolUse-patch", cwd=str(repo), session_id=session)
        data["tool_input"] = {"command": patch}
    else:
        data = payload("claude-code", "PreToolUse-write", cwd=str(repo), session_id=session)
        data["tool_input"] = {"file_path": str(repo / path), "content": "x = 1\n"}
    return hook("PreToolUse", data, client)


def before_run(repo, command, session="s1", client="claude-code"):
    data = payload(client, "PreToolUse-bash", cwd=str(repo), session_id=session)
    data["tool_input"] = {"command": command}
    return hook("PreToolUse", data, client)


def context(done) -> str:
    assert done.returncode == 0, done.stderr
    assert done.stdout, "the hook said nothing"
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    return out["additionalContext"]


def silent(done) -> bool:
    return done.returncode == 0 and done.stdout == b"" and done.stderr == b""


@pytest.mark.parametrize("client", ["claude-code", "codex"])
def test_a_files_warning_comes_before_the_first_edit_only(conn, enabled, repo, client):
    warning = remember(
        conn, enabled, "core.run() is called from the signal handler: no locks",
        type="warning", scope="file", target="src/pkg/core.py",
    )  # fmt: skip
    first = context(before_edit(repo, client=client))
    assert warning.id in first and "no locks" in first
    assert silent(before_edit(repo, client=client))  # never twice in a session
    assert warning.id in context(before_edit(repo, session="s2", client=client))


def test_a_directory_memory_reaches_the_files_below_and_others_stay_out(conn, enabled, repo):
    near = remember(
        conn, enabled, "pkg is vendored upstream: send patches there", type="convention",
        scope="directory", target="src/pkg",
    )  # fmt: skip
    far = remember(conn, enabled, "docs build with mkdocs", scope="file", target="README.md")
    text = context(before_edit(repo))
    assert near.id in text and far.id not in text


def test_nothing_is_said_when_nothing_is_known_and_a_read_opens_nothing(conn, enabled, repo):
    assert silent(before_edit(repo))
    assert silent(before_run(repo, "ls -la"))
    read = payload("claude-code", "PreToolUse-write", cwd=str(repo), session_id="r1")
    read.update(tool_name="Read", tool_input={"file_path": str(repo / "README.md")})
    assert silent(hook("PreToolUse", read))
    assert sessions.get_session(conn, "r1") is None


def test_warnings_come_first_and_the_packet_stays_within_its_budget(conn, enabled, repo):
    for i in range(12):
        remember(
            conn, enabled, f"note {i} about core: " + "detail " * 30, scope="file",
            target="src/pkg/core.py",
        )  # fmt: skip
    warning = remember(
        conn, enabled, "never import core at module level", type="warning", scope="file",
        target="src/pkg/core.py",
    )  # fmt: skip
    text = context(before_edit(repo))
    from waymark.base.tokens import estimate

    assert estimate(text) <= 300
    body = text.split("## ", 1)[1]
    assert body.splitlines()[1].startswith("- [warning")
    assert warning.id in text and "Left out:" in text


def test_a_checkpoints_failed_approach_naming_the_file_is_shown(conn, enabled, repo):
    checkpoints.create(
        conn,
        enabled,
        {
            "objective": "Speed up run()",
            "failed_approaches": [
                {"approach": "caching in core.py", "why_failed": "stale after reload"},
                {"approach": "a thread pool", "why_failed": "GIL-bound"},
            ],
        },
    )
    text = context(before_edit(repo))
    assert "caching in core.py: failed because stale after reload" in text
    assert "thread pool" not in text
    assert silent(before_edit(repo))


def fail(repo, command, session, error="Exit code 1\nE   boom", client="claude-code"):
    if client == "codex":
        data = payload("codex", "PostToolUse-failed", cwd=str(repo), session_id=session)
        data.update(tool_input={"command": command}, tool_response=error)
        return hook("PostToolUse", data, "codex")
    data = payload("claude-code", "PostToolUseFailure", cwd=str(repo), session_id=session)
    data.update(tool_input={"command": command}, error=error)
    return hook("PostToolUseFailure", data)


def passed(repo, command, session):
    data = payload("claude-code", "PostToolUse-bash", cwd=str(repo), session_id=session)
    data["tool_input"] = {"command": command}
    return hook("PostToolUse", data)


def edited(repo, path, session):
    data = payload("claude-code", "PostToolUse-write", cwd=str(repo), session_id=session)
    data["tool_input"] = {"file_path": str(repo / path), "content": "x"}
    return hook("PostToolUse", data)


def test_a_command_that_failed_before_brings_its_failure_and_later_its_fix(conn, enabled, repo):
    fail(repo, "pytest -x tests/test_core.py", "s1", "Exit code 1\nE   AssertionError: 2 != 3")
    text = context(before_run(repo, "pytest  -x tests/test_core.py", session="s2"))
    assert "failed once in this project" in text and "exit 1" in text
    assert "AssertionError: 2 != 3" in text
    assert silent(before_run(repo, "pytest -x tests/test_core.py", session="s2"))  # once
    assert silent(before_run(repo, "pytest -x tests/test_other.py", session="s3"))
    edited(repo, "src/pkg/core.py", "s4")
    passed(repo, "pytest -x tests/test_core.py", "s4")
    text = context(before_run(repo, "pytest -x tests/test_core.py", session="s5"))
    assert "It passed later" in text and "after edits to src/pkg/core.py" in text


def test_codex_failures_are_known_from_its_rollout_file(conn, enabled, repo, tmp_path):
    """Codex 0.171 gives the hook no exit code; the rollout file it wrote already has it."""
    rollout = tmp_path / "rollout.jsonl"
    data = payload("codex", "PostToolUse-failed", cwd=str(repo), session_id="c1")
    item = {"type": "CommandExecution", "id": data["tool_use_id"], "exit_code": 2}
    lines = [
        {"type": "session_meta", "payload": {"id": "c1"}},
        {"type": "event_msg", "payload": {"type": "item_completed", "item": item}},
    ]
    rollout.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    data.update(transcript_path=str(rollout), tool_input={"command": "make lint"})
    assert silent(hook("PostToolUse", data, "codex"))
    text = context(before_run(repo, "make lint", session="c2", client="codex"))
    assert "failed once" in text and "exit 2" in text and "cannot access" in text


def test_a_failed_commands_secret_is_stored_redacted_and_never_in_its_key(conn, enabled, repo):
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    fail(repo, f"deploy AKIAIOSFODNN7EXAMPLE --token {secret}", "s1", f"Exit code 3\n{secret}")
    rows = conn.execute("SELECT head, command, error_tail FROM command_failures").fetchall()
    assert len(rows) == 1
    assert rows[0][0] == "deploy" and secret not in "".join(rows[0][1:])
    text = context(before_run(repo, f"deploy AKIAIOSFODNN7EXAMPLE --token {secret}", "s2"))
    assert "failed once" in text and secret not in text


def test_a_warning_naming_the_command_comes_before_it_and_readers_stay_quiet(conn, enabled, repo):
    warning = remember(
        conn, enabled, "Never run alembic downgrade against prod; write a forward migration",
        type="warning",
    )  # fmt: skip
    assert silent(before_run(repo, "cat alembic.ini downgrade"))
    text = context(before_run(repo, "alembic downgrade -1"))
    assert warning.id in text
    assert silent(before_run(repo, "alembic upgrade head", session="s9"))


def test_a_command_naming_a_file_brings_that_files_memories(conn, enabled, repo):
    warning = remember(
        conn, enabled, "core tests need REDIS_URL set", type="warning", scope="file",
        target="src/pkg/core.py",
    )  # fmt: skip
    assert warning.id in context(before_run(repo, "python src/pkg/core.py --check"))
    shell_write = context(before_run(repo, "echo 'x = 1' > src/pkg/core.py", session="s2"))
    assert warning.id in shell_write


def guard(repo, text):
    (repo / ".waymark.toml").write_text(text, encoding="utf-8")


def test_a_guarded_path_asks_in_claude_code_naming_the_memory(conn, enabled, repo):
    warning = remember(
        conn, enabled, "core.py is generated from core.tmpl", type="warning", scope="file",
        target="src/pkg/core.py",
    )  # fmt: skip
    guard(repo, '[guard]\nask_paths = ["src/pkg/core.py"]\n')
    out = json.loads(before_edit(repo).stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "ask"
    assert warning.id in out["permissionDecisionReason"]
    assert ".waymark.toml [guard]" in out["permissionDecisionReason"]
    again = json.loads(before_edit(repo).stdout)["hookSpecificOutput"]
    assert again["permissionDecision"] == "ask"  # the client asks every time
    assert "additionalContext" not in again  # the memory itself was already shown


def test_a_guarded_command_in_codex_is_refused_once_then_let_through(conn, enabled, repo):
    guard(repo, '[guard]\nask_commands = ["git push --force*"]\n')
    first = json.loads(before_run(repo, "git push --force origin main", client="codex").stdout)
    out = first["hookSpecificOutput"]
    assert set(first) == {"hookSpecificOutput"}
    assert (
        out["permissionDecision"] == "deny" and "same call again" in out["permissionDecisionReason"]
    )
    assert silent(before_run(repo, "git push --force origin main", client="codex"))
    assert silent(before_run(repo, "git push origin main", client="codex"))  # not protected
    other = before_run(repo, "git push --force origin main", session="s2", client="codex")
    assert json.loads(other.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_without_a_guard_nothing_ever_asks_or_denies(conn, enabled, repo):
    remember(conn, enabled, "careful", type="warning", scope="file", target="src/pkg/core.py")
    out = json.loads(before_edit(repo).stdout)["hookSpecificOutput"]
    assert set(out) == {"hookEventName", "additionalContext"}


def test_read_only_capture_injects_but_records_nothing_and_off_is_silent(conn, enabled, repo):
    warning = remember(conn, enabled, "mind the lock", type="warning", scope="file",
                       target="src/pkg/core.py")  # fmt: skip
    capture.set_mode(conn, enabled, "read-only")
    assert warning.id in context(before_edit(repo))
    assert warning.id in context(before_edit(repo))  # nothing recorded, so shown again
    assert sessions.get_session(conn, "s1") is None
    capture.set_mode(conn, enabled, "off")
    assert silent(before_edit(repo, session="s3"))


def test_the_edit_path_loads_neither_json_nor_re_and_nothing_heavy(conn, enabled, repo):
    remember(conn, enabled, "mind the lock", type="warning", scope="file", target="src/pkg/core.py")
    data = payload("claude-code", "PreToolUse-write", cwd=str(repo), session_id="imp")
    data["tool_input"] = {"file_path": str(repo / "src/pkg/core.py")}
    names = (
        "json", "re", "typing", "dataclasses", "datetime", "logging", "pydantic", "mcp",
        "fastembed", "numpy", "sqlite_vec", "tomllib",
    )  # fmt: skip
    done, loaded = modules_loaded("pre_tool_use", data, names)
    assert loaded == "[]" and b"mind the lock" in done.stdout


@pytest.mark.parametrize(
    ("command", "files"),
    [
        ("echo hi > out.txt", ["out.txt"]),
        ("make 2>&1 >>build.log", ["build.log"]),
        ("pytest -q > /dev/null 2>&1", []),
        ("cat a | tee -a b.txt c.txt", ["b.txt", "c.txt"]),
        ("sed -i 's/a/b/' src/x.py", ["src/x.py"]),
        ("cp a.py b.py && mv c.py d.py", ["b.py", "c.py", "d.py"]),
        ("rm -rf build/ && touch stamp", ["build/", "stamp"]),
        (
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: n.py\n+x\n*** End Patch\nEOF",
            ["n.py"],
        ),
        ("git status && pytest -x", []),
    ],
)
def test_the_files_a_shell_command_writes(command, files):
    assert commands.written_files(command) == files


@pytest.mark.parametrize(
    ("command", "head"),
    [
        ("pytest -x tests/a.py", "pytest -x"),
        ("FOO=1 npm run build", "npm run"),
        ("deploy AKIAIOSFODNN7EXAMPLE", "deploy"),
        ("curl -H 'Authorization: x' https://a", "curl -H"),
        ("psql postgres://u:p@h/db", "psql"),
    ],
)
def test_a_commands_head_holds_only_plain_words(command, head):
    assert commands.head(command) == head


def test_the_warning_search_is_one_phrase_over_active_warnings(conn, enabled):
    kept = remember(conn, enabled, "alembic downgrade wipes data", type="warning")
    remember(conn, enabled, "alembic downgrade is fine locally", type="note")
    row = conn.execute("SELECT rowid FROM memories WHERE id = ?", (kept.id,)).fetchone()
    assert typed_matches(conn, enabled.id, '"alembic downgrade"', ("warning",), 5) == [row[0]]


def test_every_injection_leaves_a_receipt_that_log_and_recall_explain(
    conn, enabled, repo, capsys, monkeypatch
):
    """ "Why did the agent get this?": each line, its hook, session, record, tokens and why."""
    from waymark.cli import main

    rule = remember(conn, enabled, "Money is integer cents", type="convention", pinned=True)
    scoped = remember(conn, enabled, "core.run() holds the GIL", type="warning", scope="file",
                      target="src/pkg/core.py")  # fmt: skip
    start = payload("claude-code", "SessionStart", cwd=str(repo), session_id="r1")
    assert rule.id in context_of(hook("SessionStart", start))
    assert scoped.id in context(before_edit(repo, session="r1"))
    monkeypatch.chdir(repo)
    assert main(["log", "--injected", "--session", "r1", "--json"]) == 0
    packets = json.loads(capsys.readouterr().out)["packets"]
    assert [p["hook"] for p in packets] == ["PreToolUse", "SessionStart"]  # newest first
    tool_line = packets[0]["lines"][0]
    assert tool_line["item"] == scoped.id and tool_line["why"] == "path match: src/pkg/core.py"
    assert tool_line["title"] == "core.run() holds the GIL" and tool_line["tokens"] > 0
    start_lines = {line["item"]: line for line in packets[1]["lines"]}
    assert start_lines[rule.id]["why"] == "pinned" and start_lines[rule.id]["section"] == "Rules"
    assert packets[1]["tokens"] == sum(line["tokens"] for line in packets[1]["lines"])
    assert main(["recall", "--explain", "--packet", "last"]) == 0
    text = capsys.readouterr().out
    assert "PreToolUse (tool)" in text and "path match: src/pkg/core.py" in text
    assert main(["recall", "--explain", "--packet", packets[1]["packet"]]) == 0
    assert "pinned" in capsys.readouterr().out
    assert main(["recall", "--explain", "--packet", "nope", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["code"] == "not_found"


def test_a_read_only_session_leaves_no_receipt(conn, enabled, repo):
    remember(conn, enabled, "mind the lock", type="warning", scope="file", target="src/pkg/core.py")
    capture.set_mode(conn, enabled, "read-only")
    assert "mind the lock" in context(before_edit(repo))
    assert conn.execute("SELECT count(*) FROM injections").fetchone()[0] == 0


def test_a_prompt_packets_receipt_gives_each_hits_score_and_tiers(conn, enabled, repo):
    found = remember(conn, enabled, "webhook retries use exponential backoff", type="decision")
    for i in range(40):  # a prompt's words found in over 5% of memories are not searched
        remember(conn, enabled, f"filler {i}: the invoice table has column number {i}")
    ask = payload("claude-code", "UserPromptSubmit", cwd=str(repo), session_id="p1",
                  prompt="how do webhook retries back off?")  # fmt: skip
    assert found.id in context_of(hook("UserPromptSubmit", ask))
    row = conn.execute(
        "SELECT hook, kind, section, why FROM injections WHERE item = ?", (found.id,)
    ).fetchone()
    assert row[:3] == ("UserPromptSubmit", "prompt", "Relevant memories")
    assert row[3].startswith("score ") and "lexical #1" in row[3]


def test_the_mcp_recall_tool_explains_a_past_packet(conn, enabled, repo):
    scoped = remember(conn, enabled, "core.run() holds the GIL", type="warning", scope="file",
                      target="src/pkg/core.py")  # fmt: skip
    assert scoped.id in context(before_edit(repo, session="m1"))
    result = call_tool(repo, "recall", {"query": "", "packet": "last"})
    assert not result.is_error, result.content
    packets = result.structured_content["packets"]
    assert packets[0]["hook"] == "PreToolUse"
    assert packets[0]["lines"][0]["item"] == scoped.id
    assert packets[0]["lines"][0]["why"] == "path match: src/pkg/core.py"


def test_receipts_are_bounded(conn, enabled, monkeypatch):
    from waymark.storage import connection as db
    from waymark.storage import sessions

    monkeypatch.setattr(sessions, "RECEIPTS_KEPT", 1000)
    sessions.insert_session(
        conn, "b1", "claude-code", enabled.id, "2026-12-01T00:00:00.000Z", None, None
    )
    for i in range(700):  # packets of three lines: seq never lands on a multiple by luck
        with db.write(conn):
            lines = [("Rules", f"m{i}-{k}", "pinned", 5, f"- rule {i}") for k in range(3)]
            sessions.add_receipts(conn, f"p{i}", "2026-12-01T00:00:00.000Z", enabled.id, "b1",
                                  "SessionStart", "startup", lines)  # fmt: skip
    kept = conn.execute("SELECT count(*), min(seq), max(seq) FROM injections").fetchone()
    assert kept[2] == 2100 and kept[0] <= 1000 + 500


def test_old_confirmation_markers_are_forgotten(conn, enabled, repo):
    import os
    import pathlib

    from waymark import home

    guard(repo, '[guard]\nask_commands = ["git push --force*"]\n')
    before_run(repo, "git push --force origin main", client="codex")
    folder = pathlib.Path(home.data_home(), "guard")
    (old,) = list(folder.iterdir())
    os.utime(old, (1, 1))  # long ago
    before_run(repo, "git push --force origin main", session="s9", client="codex")
    assert old not in list(folder.iterdir()) and len(list(folder.iterdir())) == 1
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
