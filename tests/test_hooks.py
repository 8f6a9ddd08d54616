"""Hooks as real processes: recorded payloads of both clients on stdin, exact outputs."""

from __future__ import annotations

import json
import os
import pathlib
import random
import subprocess
import sys
import time
import uuid

import pytest
from waymark.installers.commands import HOOKS

from conftest import call_tool, git_env, isolated
from waymark import home
from waymark.base import launch
from waymark.handoff import checkpoints
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.storage import connection as db

PAYLOADS = pathlib.Path(__file__).parent / "fixtures" / "payloads"
MODULES = {spec.event: spec.module for spec in HOOKS}
CODEX_KEYS = {
    "continue",
    "stopReason",
    "suppressOutput",
    "systemMessage",
    "decision",
    "reason",
    "hookSpecificOutput",
}


def hook(
    event: str,
    payload: dict | str | bytes,
    client: str = "claude-code",
    timeout=20,
    fresh: bool = True,
):
    """Run one hook process. `fresh` gives the payload a new turn id (and a prompt a new
    prompt id), as real clients do for every turn (an identical payload is a second delivery
    of the same event)."""
    if isinstance(payload, dict) and fresh:
        payload = {**payload, "turn_id": uuid.uuid4().hex}
        if "prompt_id" in payload:
            payload["prompt_id"] = str(uuid.uuid4())
    data = (
        payload
        if isinstance(payload, bytes)
        else (payload if isinstance(payload, str) else json.dumps(payload)).encode()
    )
    started = time.perf_counter()
    done = subprocess.run(
        launch.argv(sys.executable, MODULES[event], client),
        input=data,
        capture_output=True,
        timeout=timeout,
    )
    done.seconds = time.perf_counter() - started
    if event == "SessionEnd":
        extras_done()
    return done


def extras_done(most_s: float = 60.0) -> None:
    """Wait for the extras a SessionEnd hook handed to a process of its own (its hand-over
    file goes when they are done): a test reads what they wrote, as the next session does."""
    folder = pathlib.Path(home.data_home()) / "pending"
    deadline = time.monotonic() + most_s
    while any(folder.glob("session-end-*")):
        assert time.monotonic() < deadline, "the SessionEnd extras did not finish"
        time.sleep(0.02)


def payload(client: str, name: str, **changes) -> dict:
    data = json.loads((PAYLOADS / client / f"{name}.json").read_text(encoding="utf-8"))
    data.update(changes)
    return data


def context_of(done) -> str:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def recorded():
    for client_dir in sorted(PAYLOADS.iterdir()):
        for f in sorted(client_dir.glob("*.json")):
            yield client_dir.name, f.stem


@pytest.mark.parametrize(("client", "name"), list(recorded()))
def test_every_recorded_payload_runs_clean_in_an_enabled_project(enabled, repo, client, name):
    event = name.split("-")[0]
    done = hook(event, payload(client, name, cwd=str(repo)), client)
    assert done.returncode == 0 and done.stderr == b""
    if done.stdout:
        out = json.loads(done.stdout)
        assert set(out) <= CODEX_KEYS
        if "hookSpecificOutput" in out:
            assert set(out["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
            assert out["hookSpecificOutput"]["hookEventName"] == event
    log = pathlib.Path(home.data_home(), "hooks.log")
    assert not log.exists(), log.read_text(encoding="utf-8")


@pytest.mark.parametrize(("client", "name"), list(recorded()))
def test_hooks_stay_silent_and_write_nothing_where_waymark_is_off(tmp_path, client, name):
    plain = tmp_path / "elsewhere"
    plain.mkdir()
    done = hook(name.split("-")[0], payload(client, name, cwd=str(plain)), client)
    assert (done.returncode, done.stdout) == (0, b"")
    assert not os.path.exists(home.db_path())  # no database created by a hook


def test_in_per_project_mode_a_project_not_enabled_stays_silent_and_unbound(conn, repo):
    from waymark import settings

    settings.set_value(conn, "capture.all_git_repos", False)
    done = hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo)))
    assert (done.returncode, done.stdout) == (0, b"")
    assert conn.execute("SELECT count(*) FROM projects").fetchone()[0] == 0


def test_the_first_session_after_install_captures_in_any_git_repository(repo):
    # No database yet, nothing enabled: the default captures in every git repository.
    assert not os.path.exists(home.db_path())
    hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo), session_id="s1"))
    (repo / "src" / "pkg" / "core.py").write_text("def run():\n    return 1\n")
    edit(repo)
    blocked = stop(repo)
    assert json.loads(blocked.stdout)["decision"] == "block"


def remember(conn, project, content, **kw):
    kw.setdefault("type", "note")
    return store.remember(conn, project, make_draft(project, content=content, **kw)).memory


def test_session_start_packet_has_checkpoint_lessons_rules_and_is_deterministic(
    conn, enabled, repo
):
    remember(conn, enabled, "Never call run() twice", type="warning", pinned=True)
    checkpoints.create(
        conn,
        enabled,
        {
            "objective": "Ship v2",
            "next_action": "tag the release",
            "lessons": "bump the version first",
        },
    )
    first = context_of(hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo))))
    assert first.startswith('<waymark-memory kind="session-start">')
    assert "not an instruction" in first
    assert first.index("Next action: tag the release") < first.index("Objective: Ship v2")
    assert "bump the version first" in first and "Never call run() twice" in first
    again = context_of(hook("SessionStart", payload("codex", "SessionStart", cwd=str(repo))))
    assert again == first  # same inputs, same generation: byte-identical


def test_resume_gets_a_pointer_and_compact_only_checkpoint_and_rules(conn, enabled, repo):
    remember(conn, enabled, "Pinned rule text", type="convention", pinned=True)
    checkpoints.create(conn, enabled, {"objective": "o", "next_action": "n"})
    resume = context_of(
        hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo), source="resume"))
    )
    assert "Pinned rule text" not in resume and "recall" in resume and len(resume) < 300
    compact = context_of(
        hook(
            "SessionStart", payload("claude-code", "SessionStart", cwd=str(repo), source="compact")
        )
    )
    assert "Next action: n" in compact and "Pinned rule text" in compact
    assert "Recent work" not in compact and "Repository since" not in compact


def test_session_start_stays_within_its_budget_and_says_what_it_left_out(conn, enabled, repo):
    for i in range(60):
        remember(
            conn,
            enabled,
            f"Rule number {i}: " + "always do the careful thing " * 8,
            type="convention",
            pinned=True,
        )
    text = context_of(hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo))))
    assert len(text) <= 9000 and (len(text) + 3) // 4 <= 1750 + 100
    assert "Left out:" in text and "from rules (budget)" in text


def test_a_correction_is_shown_ahead_of_older_rules_and_the_receipt_names_what_was_left_out(
    conn, enabled, repo
):
    from waymark.packets import receipts

    old = remember(conn, enabled, "Indent with tabs " + "in every module " * 6,
                   type="convention", pinned=True, priority=3)  # fmt: skip
    others = [
        remember(
            conn,
            enabled,
            f"Rule number {i}: " + "always do the careful thing " * 8,
            type="convention",
            pinned=True,
            priority=2,
        )  # fmt: skip
        for i in range(30)
    ]
    fixed = store.supersede(conn, enabled, old.id, make_draft(
        enabled, type="convention", content="Indent with four spaces, never tabs", pinned=True,
    )).memory  # fmt: skip
    text = context_of(hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo))))
    assert "Indent with four spaces" in text and "Indent with tabs" not in text
    assert text.index("Indent with four spaces") < text.index("Rule number")
    (packet,) = receipts.packets(conn, enabled, packet="last")
    left = [line for line in packet["lines"] if line["why"].startswith("left out (budget)")]
    shown = {line["item"] for line in packet["lines"] if line not in left}
    assert left and fixed.id in shown
    assert {line["item"] for line in left} <= {m.id for m in others}
    assert all(line["tokens"] == 0 for line in left)


def test_a_correction_of_a_low_priority_rule_outranks_every_other_rule_and_all_left_out_are_named(
    conn, enabled, repo
):
    """Twenty pinned rules of priority 2 and a correction of a priority-0 pinned rule: the
    correction leads the rules under a tight budget, and the receipt names every rule left
    out, those the packet did not even read included."""
    from waymark import settings
    from waymark.packets import receipts

    old = remember(conn, enabled, "Indent with tabs", type="convention", pinned=True)
    others = [
        remember(
            conn,
            enabled,
            f"Rule number {i}: " + "always do the careful thing " * 3,
            type="convention",
            pinned=True,
            priority=2,
        )  # fmt: skip
        for i in range(20)
    ]
    fixed = store.supersede(conn, enabled, old.id, make_draft(
        enabled, type="convention", content="Indent with four spaces, never tabs", pinned=True,
    )).memory  # fmt: skip
    settings.set_value(conn, "packet.session_start_tokens", 300)
    text = context_of(hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo))))
    assert "Indent with four" in text and text.index("Indent with four") < text.index("Rule number")
    (packet,) = receipts.packets(conn, enabled, packet="last")
    left = {line["item"] for line in packet["lines"] if line["why"].startswith("left out")}
    shown = {line["item"] for line in packet["lines"]} - left
    assert fixed.id in shown
    assert left == {m.id for m in others} - shown and len(left) + len(shown) == 21
    said = int(text.split("Left out: ", 1)[1].split(" from rules", 1)[0])
    assert said == len(left)  # the packet's count and the receipt agree


def test_decisions_since_the_last_session_open_the_next_one(conn, enabled, repo):
    """A decision saved with `remember` (not pinned) is in the next session's first packet,
    marked new; older ones follow while there is room; the budget holds."""
    start = payload("claude-code", "SessionStart", cwd=str(repo), session_id="d1")
    done = subprocess.run(
        [sys.executable, "-m", "waymark", "remember", "--type", "decision", "--content",
         "Use WAL mode because readers must never block the writer"],
        cwd=repo, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    first = context_of(hook("SessionStart", start))
    assert "## Decisions" in first and "readers must never block the writer" in first
    time.sleep(0.01)
    newer = remember(conn, enabled, "Chose httpx over requests: HTTP/2 and async", type="decision")
    second = context_of(
        hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo), session_id="d2"))
    )
    block = second.split("## Decisions\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert f"[decision · new · {newer.event_time[:10]} · id {newer.id}]" in block[0]
    assert "readers must never block" in block[1] and "· new ·" not in block[1]
    for i in range(40):
        remember(conn, enabled, f"Decision {i}: " + "we weighed the options carefully " * 6,
                 type="decision")  # fmt: skip
    third = context_of(
        hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo), session_id="d3"))
    )
    assert "Decision 39" in third and "from decisions (budget)" in third
    assert (len(third) + 3) // 4 <= 1750 + 100
    from waymark.packets import receipts

    (packet,) = receipts.packets(conn, enabled, packet="last")
    decided = [line for line in packet["lines"] if line["section"] == "Decisions"]
    left = [line for line in decided if line["why"].startswith("left out")]
    said = int(third.split(" from decisions")[0].rsplit(" ", 1)[-1])
    assert len(left) == said  # every decision the packet did not show, named


def test_the_mcp_recall_answer_names_the_ids_it_left_out():
    from waymark.packets.answer import fit_answer

    views = [{"id": f"M{i:025d}", "title": "x " * 40} for i in range(20)]
    out = fit_answer({"project": {}, "semantic": False}, {}, views, 600)
    kept = [v["id"] for v in out["results"]]
    assert out["omitted_counts"]["results"] == 20 - len(kept)
    named = out["omitted_ids"]["results"]
    assert named and named == [v["id"] for v in views[len(kept) : len(kept) + len(named)]]
    assert out["tokens"] <= 600


def core_warning(conn, project):
    return remember(
        conn,
        project,
        "core.py: run() is not reentrant",
        type="warning",
        scope="file",
        target="src/pkg/core.py",
    )


def test_a_prompt_naming_a_file_brings_its_warning_once(conn, enabled, repo):
    warning = core_warning(conn, enabled)
    remember(conn, enabled, "Lunch is at noon")
    prompt = payload(
        "claude-code",
        "UserPromptSubmit",
        cwd=str(repo),
        prompt="Please add a retry flag to src/pkg/core.py zqxjv-marker",
    )
    text = context_of(hook("UserPromptSubmit", prompt))
    assert warning.id in text and "Lunch" not in text
    assert hook("UserPromptSubmit", prompt).stdout == b""  # nothing injected twice
    conn.close()
    with open(home.db_path(), "rb") as f:
        assert b"zqxjv-marker" not in f.read()  # the prompt is never stored


@pytest.mark.parametrize("warm", [False, True])
def test_a_prompt_that_says_no_recall_gets_nothing(conn, enabled, repo, warm):
    """`#no-recall` anywhere in the prompt, any case: nothing injected, by the hook or the
    warm server's verb; the same prompt without it brings the file's warning."""
    from waymark.packets import prompt as packets

    warning = core_warning(conn, enabled)
    asked = "Please add a retry flag to src/pkg/core.py"
    for said in (f"{asked} #no-recall", f"#No-Recall {asked}", f"{asked} (#no-recall)"):
        event = payload("claude-code", "UserPromptSubmit", cwd=str(repo), prompt=said)
        if warm:
            request = {"event": {**event, "client": "claude-code", "name": "UserPromptSubmit"},
                       "prompt": said}  # fmt: skip
            assert packets.answer(conn, request) == {"ok": True, "text": None}
        else:
            done = hook("UserPromptSubmit", event)
            assert (done.returncode, done.stdout) == (0, b""), said
    for said in (f"{asked} #no-recalling", f"{asked} a#no-recall", f"{asked} #no-recall-x"):
        assert not packets.asks_no_recall(said), said
    event = payload("claude-code", "UserPromptSubmit", cwd=str(repo), prompt=asked)
    assert warning.id in context_of(hook("UserPromptSubmit", event))


@pytest.mark.parametrize("warm", [False, True])
def test_a_prompt_that_says_no_capture_records_nothing_of_its_turn(conn, enabled, repo, warm):
    """`#no-capture`: nothing of that turn is recorded (its edits, its commands, Stop asks
    for nothing), whether the hook or the warm server's verb took the prompt; the next
    prompt without it records again. Recall still answers."""
    from waymark.packets import prompt as packets

    warning = core_warning(conn, enabled)

    def prompt(said: str) -> str:
        event = payload("claude-code", "UserPromptSubmit", cwd=str(repo), prompt=said,
                        session_id="q1")  # fmt: skip
        if warm:
            request = {"event": {**event, "client": "claude-code", "name": "UserPromptSubmit"},
                       "prompt": said}  # fmt: skip
            return packets.answer(conn, request)["text"] or ""
        done = hook("UserPromptSubmit", event)
        assert done.returncode == 0, done.stderr
        return done.stdout.decode()

    def edits() -> list:
        return conn.execute("SELECT path FROM session_ledger WHERE session_id = 'q1'"
                            " AND kind = 'edit'").fetchall()  # fmt: skip

    said = prompt("Fix the retry in src/pkg/core.py #no-capture")
    assert warning.id in said  # recall still answers
    edit(repo, session="q1")
    assert edits() == []
    assert stop(repo, session="q1").stdout == b""  # nothing recorded: nothing to ask for
    prompt("Now the second part")
    edit(repo, session="q1")
    assert edits() == [("src/pkg/core.py",)]


def test_an_unrelated_prompt_injects_nothing(conn, enabled, repo):
    remember(conn, enabled, "The billing service retries webhooks three times")
    done = hook(
        "UserPromptSubmit",
        payload("codex", "UserPromptSubmit", cwd=str(repo), prompt="what a lovely day"),
    )
    assert (done.returncode, done.stdout) == (0, b"")


def edit(repo, session="s1", path="src/pkg/core.py", client="claude-code"):
    data = payload(
        "claude-code",
        "PostToolUse-write",
        cwd=str(repo),
        session_id=session,
        tool_input={"file_path": str(repo / path), "content": "x"},
    )
    assert hook("PostToolUse", data, client).returncode == 0


def stop(repo, session="s1", active=False, client="claude-code"):
    name = "Stop"
    return hook(
        name,
        payload(client, name, cwd=str(repo), session_id=session, stop_hook_active=active),
        client,
    )


def markers(conn):
    return conn.execute(
        "SELECT session_id FROM handoff_markers WHERE cleared_at IS NULL"
    ).fetchall()


def test_stop_blocks_once_when_files_changed_without_checkpoint(conn, enabled, repo):
    assert stop(repo).stdout == b""  # nothing changed: no block
    edit(repo)
    first = json.loads(stop(repo).stdout)
    assert first["decision"] == "block" and "checkpoint" in first["reason"]
    assert "src/pkg/core.py" in first["reason"]
    assert stop(repo, active=True).stdout == b""  # the re-fired Stop never blocks
    assert markers(conn) == [("s1",)]
    assert stop(repo).stdout == b""  # asked already about this same state: never loop


def test_stop_does_not_block_after_a_checkpoint_and_blocks_again_for_new_work(conn, enabled, repo):
    edit(repo)
    assert json.loads(stop(repo).stdout)["decision"] == "block"
    saved = checkpoints.create(
        conn, enabled, {"objective": "o", "next_action": "n"}, checkpoints.Origin(session_id="s1")
    )
    assert stop(repo).stdout == b""
    time.sleep(0.01)
    edit(repo, path="README.md")
    reason = json.loads(stop(repo).stdout)["reason"]
    assert saved.id in reason and saved.revision.id in reason  # says how to revise


def test_only_a_real_save_clears_the_marker(conn, enabled, repo):
    edit(repo)
    stop(repo)
    stop(repo, active=True)
    assert markers(conn) == [("s1",)]
    text = context_of(
        hook("SessionStart", payload("codex", "SessionStart", cwd=str(repo), session_id="s2"))
    )
    assert "Handoff needed" in text and "src/pkg/core.py" in text
    checkpoints.create(conn, enabled, {"objective": "o"})  # from no session, naming nothing
    assert markers(conn) == [("s1",)]
    saved = checkpoints.active(conn, enabled)
    checkpoints.revise(  # from the session that was shown the marker: it takes the work over
        conn, enabled, saved.id, saved.revision.id, {"objective": "recovered"},
        checkpoints.Origin(session_id="s2"),
    )  # fmt: skip
    assert markers(conn) == []


def test_a_save_from_no_session_hands_off_only_the_sessions_whose_files_it_names(
    conn, enabled, repo
):
    """Two sessions change files; an MCP save whose server serves both (so knows neither)
    and a CLI save from a terminal hand off only the sessions whose files they name."""
    for sid, path in (("s1", "src/pkg/core.py"), ("s2", "README.md")):
        hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo), session_id=sid))
        edit(repo, session=sid, path=path)
    saved = call_tool(repo, "checkpoint", {"operation": "create", "objective": "o"})
    assert not saved.is_error, saved
    for sid in ("s1", "s2"):  # the save was nobody's: both are still asked
        assert json.loads(stop(repo, session=sid).stdout)["decision"] == "block"
        assert stop(repo, session=sid, active=True).stdout == b""
    assert sorted(markers(conn)) == [("s1",), ("s2",)]
    done = subprocess.run(
        [sys.executable, "-m", "waymark", "checkpoint", "revise", "--progress", "core done",
         "--file", "src/pkg/core.py"],
        cwd=repo, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert markers(conn) == [("s2",)]
    text = context_of(
        hook("SessionStart", payload("codex", "SessionStart", cwd=str(repo), session_id="s3"))
    )
    needed = text.split("Handoff needed", 1)[1].split("##", 1)[0]
    assert "README.md" in needed and "core.py" not in needed
    edit(repo, session="s1", path="src/pkg/core.py")  # new work after the handoff: asked again
    assert json.loads(stop(repo, session="s1").stdout)["decision"] == "block"


def test_codex_shell_edits_are_seen_through_git(conn, enabled, repo):
    hook("SessionStart", payload("codex", "SessionStart", cwd=str(repo), session_id="c1"), "codex")
    (repo / "new_file.py").write_text("print(1)\n", encoding="utf-8")
    bash = payload(
        "codex",
        "PostToolUse-bash",
        cwd=str(repo),
        session_id="c1",
        tool_input={"command": "echo 'print(1)' > new_file.py"},
    )
    assert hook("PostToolUse", bash, "codex").returncode == 0
    out = json.loads(stop(repo, session="c1", client="codex").stdout)
    assert out == {"decision": "block", "reason": out["reason"]} and "new_file.py" in out["reason"]


@pytest.mark.parametrize("warm", [False, True])
def test_a_codex_patch_through_the_shell_is_work_to_hand_off(conn, enabled, repo, warm):
    """Codex applies `apply_patch <<'EOF'` sent through the shell itself and reports it to
    PreToolUse only (a recorded payload): Stop still asks for the file it created, and a
    patch that never landed (denied) asks for nothing. Answered by the hook or the warm
    server's library verb alike."""
    from waymark.packets import tool

    hook("SessionStart", payload("codex", "SessionStart", cwd=str(repo), session_id="c1"), "codex")
    patch = payload("codex", "PreToolUse-patch", cwd=str(repo), session_id="c1")
    assert hook("PreToolUse", patch, "codex").returncode == 0
    assert stop(repo, session="c1", client="codex").stdout == b""  # denied: nothing changed
    # but the file it names is one this session is editing (for another agent's warning)
    noted = conn.execute("SELECT path FROM session_ledger WHERE session_id = 'c1' AND"
                         " kind = 'edit'").fetchall()  # fmt: skip
    assert noted == [("a.txt",)]
    hook("SessionStart", payload("codex", "SessionStart", cwd=str(repo), session_id="c2"), "codex")
    patch["session_id"] = "c2"
    if warm:
        request = {"event": {**patch, "client": "codex", "name": "PreToolUse"}}
        request.update(paths=[], command=patch["tool_input"]["command"])
        assert tool.answer(conn, request)["ok"]
    else:
        assert hook("PreToolUse", patch, "codex").returncode == 0
    (repo / "a.txt").write_text("x\n", encoding="utf-8")  # Codex applied it
    out = json.loads(stop(repo, session="c2", client="codex").stdout)
    assert out["decision"] == "block" and "a.txt" in out["reason"]


def test_pre_compact_and_session_end_leave_the_marker_for_unsaved_work(conn, enabled, repo):
    edit(repo, session="p1")
    assert (
        hook(
            "PreCompact",
            {
                "session_id": "p1",
                "cwd": str(repo),
                "hook_event_name": "PreCompact",
                "trigger": "auto",
            },
        ).stdout
        == b""
    )
    assert markers(conn) == [("p1",)]
    done = hook("SessionEnd", payload("claude-code", "SessionEnd", cwd=str(repo), session_id="p1"))
    assert done.returncode == 0 and done.seconds < 1.0
    row = conn.execute("SELECT ended_at, end_reason FROM sessions WHERE id = 'p1'").fetchone()
    assert row[0] and row[1] == "other"


def test_failed_commands_are_recorded_with_a_redacted_bounded_tail(conn, enabled, repo):
    token = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    failure = payload(
        "claude-code",
        "PostToolUseFailure",
        cwd=str(repo),
        error="Exit code 3\n" + "noise " * 500 + f"auth failed {token}",
    )
    assert hook("PostToolUseFailure", failure).returncode == 0
    row = conn.execute("SELECT command, exit_code, error_tail FROM session_ledger").fetchone()
    assert row[0] == "ls /nonexistent-dir-xyz" and row[1] == 3
    assert token not in row[2] and len(row[2]) <= 400


@pytest.mark.parametrize(
    "stdin",
    [
        b"",
        b"not json",
        b'{"session_id": "x", "cwd"',
        b"\xff\xfe\x00",
        b"[1, 2, 3]",
        b'"just a string"',
    ],
)
def test_garbage_or_truncated_stdin_exits_zero_silently(enabled, stdin):
    for event in MODULES:
        done = hook(event, stdin)
        assert (done.returncode, done.stdout) == (0, b"")


def test_a_lone_surrogate_in_the_payload_is_mended_not_a_lost_capture(conn, enabled, repo):
    # JSON may escape a lone surrogate; SQLite refuses one, which would drop the entry.
    failure = payload("claude-code", "PostToolUseFailure", cwd=str(repo), session_id="sur")
    raw = json.dumps(failure).replace('"Exit code', '"bad \\udcff byte; Exit code', 1)
    assert "\\udcff" in raw
    done = hook("PostToolUseFailure", raw)
    assert (done.returncode, done.stdout) == (0, b"")
    (tail,) = conn.execute(
        "SELECT error_tail FROM session_ledger WHERE session_id = 'sur'"
    ).fetchone()
    assert "bad \ufffd byte" in tail
    log = pathlib.Path(os.environ["WAYMARK_HOME"]) / "hooks.log"
    assert not log.exists() or "Error" not in log.read_text(encoding="utf-8")


def test_a_huge_tool_response_is_capped_and_the_edit_still_recorded(conn, enabled, repo):
    data = payload(
        "claude-code",
        "PostToolUse-write",
        cwd=str(repo),
        session_id="big",
        tool_input={"file_path": str(repo / "README.md"), "content": "x"},
    )
    data["tool_response"] = {"content": "y" * (6 * 1024 * 1024)}
    done = hook("PostToolUse", data)
    assert (done.returncode, done.stdout) == (0, b"") and done.seconds < 10
    assert conn.execute("SELECT path FROM session_ledger WHERE session_id = 'big'").fetchall() == [
        ("README.md",)
    ]


def test_a_locked_database_fails_open_with_a_log_line(conn, enabled, repo):
    other = db.connect()
    other.execute("BEGIN EXCLUSIVE")
    try:
        done = hook("Stop", payload("claude-code", "Stop", cwd=str(repo)))
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert (done.returncode, done.stdout) == (0, b"") and done.seconds < 10
    log = pathlib.Path(home.data_home(), "hooks.log").read_text(encoding="utf-8")
    assert "Stop" in log and ("Busy" in log or "locked" in log)


def test_an_edit_captured_while_the_database_is_locked_waits_and_stop_still_asks(
    conn, enabled, repo
):
    edit = payload("claude-code", "PostToolUse-write", cwd=str(repo), session_id="locked")
    edit["tool_input"] = {"file_path": str(repo / "src" / "pkg" / "core.py"), "content": "x"}
    failed = payload("claude-code", "PostToolUseFailure", cwd=str(repo), session_id="locked")
    secret = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
    failed.update(tool_input={"command": f"curl -H 'token {secret}' x"}, error=f"401 {secret}")
    other = db.connect()
    other.execute("BEGIN EXCLUSIVE")
    try:
        for name, data in (("PostToolUse", edit), ("PostToolUseFailure", failed)):
            done = hook(name, data)
            assert (done.returncode, done.stdout) == (0, b"")
    finally:
        other.execute("ROLLBACK")
        other.close()
    spooled = sorted(pathlib.Path(home.data_home(), "spool").glob("*.json"))
    assert len(spooled) == 2
    assert all(secret not in p.read_text(encoding="utf-8") for p in spooled)
    assert conn.execute("SELECT count(*) FROM session_ledger").fetchone()[0] == 0
    stop = hook("Stop", payload("claude-code", "Stop", cwd=str(repo), session_id="locked"))
    assert json.loads(stop.stdout)["decision"] == "block"  # the spooled edit counts
    assert list(pathlib.Path(home.data_home(), "spool").glob("*.json")) == []
    tails = [r[0] for r in conn.execute("SELECT error_tail FROM command_failures")]
    assert len(tails) == 1 and secret not in tails[0]


def test_a_corrupt_database_fails_open(conn, enabled, repo):
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    with open(home.db_path(), "r+b") as f:
        f.write(b"garbage!" * 64)
    done = hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo)))
    assert (done.returncode, done.stdout) == (0, b"")
    assert "SessionStart" in pathlib.Path(home.data_home(), "hooks.log").read_text(encoding="utf-8")


def test_the_hook_path_imports_nothing_heavy():
    code = (
        "import sys\n"
        "import waymark.hooks.session_start, waymark.hooks.user_prompt_submit, "
        "waymark.hooks.stop, waymark.hooks.post_tool_use, waymark.hooks.session_end, "
        "waymark.hooks.pre_tool_use, waymark.hooks.subagent_start, waymark.packets.tool, "
        "waymark.handoff.outputs, waymark.projects.client_files, "
        "waymark.packets.sections, waymark.packets.lines, waymark.packets.seen, "
        "waymark.handoff.ledger, waymark.recall.ranked, waymark.recall.semantic, "
        "waymark.warm, waymark.packets.briefing, waymark.handoff.checkpoints\n"
        "print(sorted(m for m in ('pydantic', 'mcp', 'fastembed', 'numpy', 'sqlite_vec',"
        " 'onnxruntime', 'typing', 'dataclasses', 'contextlib', 'functools', 'json', 're')"
        " if m in sys.modules))"
    )
    # The last six are stdlib, but each costs a hook process 1-8 ms (contextlib and functools
    # are what `-m`'s runpy would bring in, which is why hooks are launched with `-c`).
    assert isolated(code).strip() == "[]"


def modules_loaded(module: str, data: dict, names: tuple[str, ...]):
    """Run hook `module` on `data` in a fresh `python -I`, as a client does; (the process,
    which of `names` it had imported by the end)."""
    code = (  # a hook leaves with os._exit (runtime.leave): the list is printed just before
        "import os, sys\n"
        f"sys.argv = ['{module}', 'claude-code']\n"
        f"import waymark.hooks.{module} as hook\n"
        "leave = os._exit\n"
        "def report(code):\n"
        f"    print(sorted(m for m in {names!r} if m in sys.modules), file=sys.stderr)\n"
        "    sys.stderr.flush()\n"
        "    leave(code)\n"
        "os._exit = report\n"
        "hook.main()\n"
    )
    data = {**data, "turn_id": uuid.uuid4().hex}
    done = subprocess.run(
        [sys.executable, "-I", "-c", code],
        input=json.dumps(data).encode(),
        capture_output=True,
        timeout=20,
    )
    assert done.returncode == 0, done.stderr
    return done, done.stderr.decode().strip()


@pytest.mark.parametrize("name", ["PostToolUse-write", "PostToolUse-bash"])
def test_a_tool_hook_run_loads_neither_json_nor_re(conn, enabled, repo, name):
    """Each costs a hook ~6-8 ms; a recorded edit or command needs neither."""
    data = payload("claude-code", name, cwd=str(repo))
    if name == "PostToolUse-write":
        data["tool_input"] = {"file_path": str(repo / "README.md"), "content": "x"}
    names = ("json", "re", "typing", "hashlib", "dataclasses", "datetime", "logging")
    _, loaded = modules_loaded("post_tool_use", data, names)
    assert loaded == "[]"
    assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 1  # it did run


def test_a_prompt_without_a_path_loads_no_re(conn, enabled, repo):
    """Without the MCP server the hook ranks memories itself: its words and the paths a prompt
    names are read without `re` (2.5 ms) unless the prompt names a path."""
    remember(conn, enabled, "The login bug came from a stale session cookie")
    data = payload("claude-code", "UserPromptSubmit", cwd=str(repo),
                   prompt="Fix the login bug. Then run the tests, the slow ones too.")  # fmt: skip
    done, loaded = modules_loaded("user_prompt_submit", data, ("re", "json", "typing"))
    assert loaded == "[]"
    assert b"stale session cookie" in done.stdout  # it did rank, and found the memory
    data = {
        **data,
        "prompt": "Fix the login bug in src/auth/session.py",
        "prompt_id": "p2",
        "session_id": "another",
    }
    done, loaded = modules_loaded("user_prompt_submit", data, ("re",))
    assert loaded == "['re']" and b"stale session cookie" in done.stdout


def test_the_same_event_delivered_twice_runs_once(conn, enabled, repo):
    """The plugin route and the installed route may both be registered: one run per event."""
    edit(repo)
    data = payload("claude-code", "Stop", cwd=str(repo), session_id="s1")
    first = hook("Stop", data, fresh=False)
    second = hook("Stop", data, fresh=False)
    assert json.loads(first.stdout)["decision"] == "block"
    assert (second.returncode, second.stdout) == (0, b"")
    assert conn.execute("SELECT count(*) FROM handoff_markers").fetchone()[0] == 0


@pytest.mark.parametrize("size", [300, 60_000, 70_000, 300_000])
def test_a_delivery_key_tells_every_byte_apart(size):
    """Short payloads (a modulo) and long ones (zlib) alike: the same bytes, the same key; one
    byte changed anywhere, or one more, another key."""
    from waymark.base.markers import delivery_key

    raw = bytes(random.Random(size).randrange(256) for _ in range(size))
    key = delivery_key("PostToolUse", raw)
    assert key == delivery_key("PostToolUse", bytes(raw))
    assert key != delivery_key("PreToolUse", raw)
    for at in (0, size // 2, size - 1):
        changed = bytearray(raw)
        changed[at] ^= 1
        assert delivery_key("PostToolUse", bytes(changed)) != key
    assert delivery_key("PostToolUse", raw + b"\0") != key
    assert key[-1] in "0123456789abcdef"  # markers sweeps at keys ending in 0: one in 16


def test_prompt_recall_uses_the_warm_servers_neighbours(conn, enabled, repo):
    from waymark.warm import server as warm_server

    hidden = remember(conn, enabled, "Invoices are generated by the nightly ledger job")
    rowid = conn.execute("SELECT rowid FROM memories WHERE id = ?", (hidden.id,)).fetchone()[0]
    asked = []

    def handler(request):  # a server that answers only the semantic tier (as older ones do)
        if request["op"] != "semantic":
            return {"ok": False, "error": f"unknown op {request['op']!r}"}
        asked.append(request)
        return {"ok": True, "hits": [[[rowid, 0.91]]]}

    server = warm_server.start(handler)
    try:
        done = hook(
            "UserPromptSubmit",
            payload(
                "claude-code",
                "UserPromptSubmit",
                cwd=str(repo),
                prompt="when do bills get produced?",
            ),
        )
    finally:
        server.stop()
    assert asked and asked[0]["op"] == "semantic" and asked[0]["cwd"] == str(repo)
    assert asked[0]["queries"] == ["when do bills get produced?"] and asked[0]["max_tokens"] == 64
    assert hidden.id in context_of(done)  # no word in common: only the server could find it


def test_codex_notify_leaves_the_marker_for_an_unsaved_turn(conn, enabled, repo):
    edit(repo, session="thread-1", client="codex")
    note = {
        "type": "agent-turn-complete",
        "thread-id": "thread-1",
        "turn-id": "t1",
        "cwd": str(repo),
        "input-messages": ["hi"],
        "last-assistant-message": "done",
    }
    done = subprocess.run(
        [sys.executable, "-I", "-m", "waymark.hooks.notify", json.dumps(note)],
        capture_output=True,
        timeout=20,
    )
    assert (done.returncode, done.stdout) == (0, b"")
    assert markers(conn) == [("thread-1",)]


def test_the_prompt_hook_asks_for_the_same_token_cap_as_every_query():
    from waymark.packets import prompt
    from waymark.recall import embed

    assert prompt.PROMPT_SEMANTIC_TOKENS == embed.QUERY_MAX_TOKENS


KEY_BODY = "".join(
    f"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC{i:04d}BKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n" for i in range(12)
)
PEM = f"-----BEGIN PRIVATE KEY-----\n{KEY_BODY}-----END PRIVATE KEY-----\n"


def failed(conn, repo, error, session_id, command="ls /nonexistent-dir-xyz"):
    failure = payload(
        "claude-code",
        "PostToolUseFailure",
        cwd=str(repo),
        session_id=session_id,
        error="Exit code 1\n" + error,
        tool_input={"command": command},
    )
    assert hook("PostToolUseFailure", failure).returncode == 0
    return conn.execute(
        "SELECT command, error_tail FROM session_ledger WHERE session_id = ?", (session_id,)
    ).fetchone()


def test_a_private_key_whose_begin_line_the_tail_cut_would_drop_is_still_redacted(
    conn, enabled, repo
):
    _, tail = failed(conn, repo, "loading key\n" + PEM + "error: bad key", "pem")
    assert "MIIEvQIBADAN" not in tail and "BKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj" not in tail
    assert tail.endswith("error: bad key") and len(tail) <= 400


def test_the_end_of_a_long_private_span_does_not_survive_the_tail_cut(conn, enabled, repo):
    secret = "<private>" + "customer-name-zebra " * 100 + "</private> then it failed"
    _, tail = failed(conn, repo, secret, "priv")
    assert "zebra" not in tail and tail.endswith("then it failed")


def test_a_token_cut_in_half_by_the_command_limit_is_redacted_whole(conn, enabled, repo):
    token = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    command = "x" * 285 + f" {token} https://api.example"  # the limit falls inside it
    stored, _ = failed(conn, repo, "boom", "cmd", command=command)
    assert len(stored) <= 300 and token[:10] not in stored and "Z9y8X7" not in stored


def test_a_key_opened_far_before_a_long_output_s_tail_is_still_redacted(conn, enabled, repo):
    output = "-----BEGIN RSA PRIVATE KEY-----\n" + KEY_BODY * 300 + "\nfailed"
    assert len(output) > 64 * 1024
    _, tail = failed(conn, repo, output, "far")
    assert "MIIEvQIBADAN" not in tail


def test_email_and_ip_addresses_in_tool_output_are_redacted_unless_the_user_keeps_them(
    conn, enabled, repo
):
    error = "ssh alice@example.com: connect to 10.20.30.40 port 22 refused (local 127.0.0.1)"
    stored, tail = failed(conn, repo, error, "contacts", command="ssh deploy@10.20.30.40")
    assert "10.20.30.40" not in tail + stored and "alice@example.com" not in tail
    assert "[REDACTED:ip_address]" in tail and "[REDACTED:email]" in tail and "127.0.0.1" in tail
    from waymark import settings

    settings.set_value(conn, "capture.redact_contacts", False)
    stored, tail = failed(conn, repo, error, "kept", command="ssh deploy@10.20.30.40")
    assert "10.20.30.40" in tail and "alice@example.com" in tail and "10.20.30.40" in stored


def test_a_lesson_or_a_revise_that_changes_nothing_is_not_a_handoff(conn, enabled, repo):
    saved = checkpoints.create(conn, enabled, {"objective": "o", "next_action": "n"})
    time.sleep(0.01)
    edit(repo)
    stop(repo)
    stop(repo, active=True)  # the session ended without a handoff: a marker
    assert markers(conn) == [("s1",)]
    lesson = checkpoints.revise(
        conn, enabled, saved.id, saved.revision.id, {"lessons": ["use -x"]},
        operation="record_lesson",
    )  # fmt: skip
    same = checkpoints.revise(conn, enabled, lesson.id, lesson.revision.id, {"objective": "o"})
    assert same.revision.id == lesson.revision.id  # nothing changed: nothing written
    assert markers(conn) == [("s1",)]
    edit(repo, session="s2")
    assert json.loads(stop(repo, session="s2").stdout)["decision"] == "block"
    checkpoints.revise(
        conn, enabled, saved.id, lesson.revision.id, {"progress": ["done"]},
        checkpoints.Origin(session_id="s2"),
    )  # fmt: skip
    assert markers(conn) == []
    assert stop(repo, session="s2").stdout == b""


def test_an_edit_outside_the_project_is_not_work_to_hand_off(conn, enabled, repo, tmp_path):
    outside = tmp_path / "elsewhere.txt"
    data = payload(
        "claude-code",
        "PostToolUse-write",
        cwd=str(repo),
        session_id="out",
        tool_input={"file_path": str(outside), "content": "x"},
    )
    assert hook("PostToolUse", data).returncode == 0
    assert stop(repo, session="out").stdout == b""


def test_one_stop_delivered_twice_at_once_asks_once(conn, enabled, repo):
    for trial in range(8):
        session = f"race{trial}"
        edit(repo, session=session, path="README.md")
        data = payload("claude-code", "Stop", cwd=str(repo), session_id=session)
        procs = [
            subprocess.Popen(
                launch.argv(sys.executable, "stop", "claude-code"),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            for _ in range(2)
        ]
        for i, proc in enumerate(procs):  # two deliveries: the same event, other turn ids
            proc.stdin.write(json.dumps({**data, "turn_id": f"{trial}-{i}"}).encode())
            proc.stdin.close()
        outs = [proc.stdout.read() for proc in procs]
        for proc in procs:
            proc.stdout.close()
            assert proc.wait(timeout=20) == 0
        assert sum(b'"block"' in out for out in outs) == 1, outs


def test_a_session_without_session_start_does_not_hide_what_changed_since(
    conn, enabled, repo, tmp_path
):
    hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo), session_id="a"))
    edit(repo, session="b")  # a session whose SessionStart never ran: no HEAD recorded
    (repo / "new.txt").write_text("new\n", encoding="utf-8")
    env = git_env(tmp_path)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "add new.txt"], check=True, env=env)
    text = context_of(
        hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo), session_id="c"))
    )
    assert "Repository since last session" in text and "add new.txt" in text


def test_an_event_that_arrives_in_pieces_is_read_whole(conn, enabled, repo):
    """stdin is read without blocking: a client slow to write (or to finish writing) is
    waited for until it closes the pipe, within the deadline."""
    edit(repo, session="slow-writer")
    raw = json.dumps(payload("claude-code", "Stop", cwd=str(repo), session_id="slow-writer"))
    proc = subprocess.Popen(
        launch.argv(sys.executable, "stop", "claude-code"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    time.sleep(0.3)  # the hook is up and finds nothing yet
    proc.stdin.write(raw[:20].encode())
    proc.stdin.flush()
    time.sleep(0.2)
    proc.stdin.write(raw[20:].encode())
    proc.stdin.close()
    out = proc.stdout.read()
    proc.stdout.close()
    assert proc.wait(timeout=20) == 0
    assert json.loads(out)["decision"] == "block"


def test_session_end_gives_up_on_a_stdin_that_never_closes_within_its_budget(enabled, repo):
    proc = subprocess.Popen(
        launch.argv(sys.executable, "session_end", "claude-code"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    started = time.perf_counter()
    proc.stdin.write(b'{"session_id": "slow", ')  # and nothing more: the client hangs
    proc.stdin.flush()
    try:
        assert proc.wait(timeout=10) == 0
        assert time.perf_counter() - started < 1.8  # the installer gives SessionEnd 2 s
    finally:
        proc.stdin.close()
        proc.stdout.close()


@pytest.mark.parametrize("budget", [300, 600, 1750])
def test_the_session_start_packet_counts_every_rule_it_left_out_and_fits_its_budget(
    conn, enabled, repo, budget
):
    from waymark import settings
    from waymark.base import tokens

    for i in range(30):
        remember(
            conn,
            enabled,
            f"Pinned rule {i}: keep the careful habit number {i}",
            type="convention",
            pinned=True,
        )
    settings.set_value(conn, "packet.session_start_tokens", budget)
    text = context_of(hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo))))
    assert tokens.estimate(text) <= budget
    shown = text.count("Pinned rule ")
    left = int(text.split("Left out: ")[1].split(" from rules")[0])
    assert shown + left == 30, (shown, left)


def test_after_compact_a_memory_shown_earlier_in_the_session_is_shown_again(conn, enabled, repo):
    warning = core_warning(conn, enabled)
    prompt = payload(
        "claude-code",
        "UserPromptSubmit",
        cwd=str(repo),
        session_id="s-compact",
        prompt="Add a retry flag to src/pkg/core.py",
    )
    assert warning.id in context_of(hook("UserPromptSubmit", prompt))
    assert hook("UserPromptSubmit", prompt).stdout == b""  # shown once...
    hook(
        "SessionStart",
        payload(
            "claude-code", "SessionStart", cwd=str(repo), session_id="s-compact", source="compact"
        ),
    )
    assert warning.id in context_of(hook("UserPromptSubmit", prompt))  # ...and after a compact


def test_a_completed_tasks_lessons_come_back_as_historical_and_cited(conn, enabled, repo):
    first = checkpoints.create(
        conn,
        enabled,
        {
            "objective": "Ship v1",
            "next_action": "tag",
            "lessons": ["bump the version before tagging"],
        },
    )
    checkpoints.revise(conn, enabled, first.id, first.revision.id, {}, operation="complete")
    alone = context_of(hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo))))
    assert "bump the version before tagging" in alone
    assert f"historical, from checkpoint {first.id}" in alone
    checkpoints.create(conn, enabled, {"objective": "Ship v2", "next_action": "write notes"})
    beside = context_of(hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo))))
    assert "Next action: write notes" in beside and "bump the version before tagging" in beside


def test_recorded_events_appear_in_the_session_start_ledger(conn, enabled, repo):
    event = checkpoints.record_event(
        conn,
        enabled,
        kind="decision",
        summary="Chose SQLite WAL over a server database",
        source_key="wal-decision",
    )
    text = context_of(hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo))))
    recent = text.split("## Recent work")[1]
    assert "decision: Chose SQLite WAL over a server database" in recent
    assert event["memory"]["id"] in recent


def git(repo, *args):
    subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, env=git_env(repo.parent)
    )


def test_a_branch_switch_between_sessions_and_a_checkpoint_from_another_branch_are_said(
    conn, enabled, repo
):
    hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo), session_id="a"))
    checkpoints.create(
        conn,
        enabled,
        {"objective": "o", "next_action": "ship it"},
        checkpoints.Origin(actor="user", git_branch="main"),
    )
    git(repo, "checkout", "-q", "-b", "feature-x")
    text = context_of(
        hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo), session_id="b"))
    )
    assert "branch: main last session, feature-x now" in text
    assert " UTC on branch main, not feature-x)" in text  # a space after UTC


def test_list_and_recall_filter_by_branch(conn, enabled, repo):
    from waymark.cli import main

    remember(conn, enabled, "decided on main", type="decision", git_branch="main")
    remember(conn, enabled, "decided on topic", type="decision", git_branch="topic")
    conn.close()
    os.chdir(repo)
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["list", "--branch", "topic", "--json"]) == 0
    assert [m["content"] for m in json.loads(out.getvalue())["results"]] == ["decided on topic"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["recall", "decided", "--branch", "main", "--json", "--lexical"]) == 0
    found = [r["memory"]["content"] for r in json.loads(out.getvalue())["results"]]
    assert found == ["decided on main"]


@pytest.mark.parametrize(
    "name",
    ["ghp_Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8 x", "password=Tr0ub4dor&3 shop"],
)
def test_an_invalid_project_name_is_logged_without_its_value(enabled, repo, name):
    (repo / ".waymark.toml").write_text(f"name = {json.dumps(name)}\n", encoding="utf-8")
    done = hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo)))
    assert (done.returncode, done.stdout) == (0, b"")
    log = pathlib.Path(home.data_home(), "hooks.log").read_text(encoding="utf-8")
    assert f"the project name is invalid ({len(name)} characters, with spaces" in log
    assert name.split()[0].split("=")[-1] not in log


@pytest.mark.parametrize(
    ("output", "code"),
    [
        ("Process exited with code 2\nOutput:\nboom", 2),
        ("Exit code: 127\nbash: nope: command not found", 127),
        ("exit code -1 (killed)", -1),
        ("the exit code was unknown; later: Exit code 3", 3),
        ("Process exited with code 0\nOutput:\nfine", None),
        ("no code here", None),
    ],
)
def test_a_codex_shell_output_says_its_exit_code_without_a_regex(output, code):
    from waymark.hooks.codex import normalise

    event = normalise({"tool_name": "Bash", "tool_response": output, "session_id": "s"},
                      "PostToolUse")  # fmt: skip
    assert event.exit_code == code and event.failed is (True if code else None)


def test_claude_codes_failure_error_loses_its_exit_code_line():
    from waymark.hooks.claude import normalise

    event = normalise({"error": "Exit code 2\nE   boom", "session_id": "s"}, "PostToolUseFailure")
    assert (event.failed, event.exit_code, event.error) == (True, 2, "E   boom")
    event = normalise({"error": "Command timed out", "session_id": "s"}, "PostToolUseFailure")
    assert (event.failed, event.exit_code, event.error) == (True, None, "Command timed out")


def test_past_a_thousand_rules_the_packet_counts_them_as_a_thousand_plus(conn, enabled, repo):
    """Rules are counted up to briefing.RULES_COUNTED: a store of many says "N+", and costs
    the session start no more than a thousand index entries."""
    from waymark.memories.draft import make_draft
    from waymark.memories.store import insert
    from waymark.packets.briefing import RULES_COUNTED, count_rules
    from waymark.storage import connection as db

    with db.write(conn):
        for i in range(RULES_COUNTED + 20):
            draft = make_draft(enabled, type="convention", pinned=True,
                               content=f"Pinned rule {i}: keep the careful habit number {i}")  # fmt: skip
            insert(conn, enabled, draft)
    assert count_rules(conn, enabled) == RULES_COUNTED + 1  # stopped counting
    text = context_of(hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo))))
    shown = text.count("Pinned rule ")
    said = text.split("Left out: ")[1].split(" from rules")[0]
    assert said == f"{RULES_COUNTED - shown}+", said  # at least: it stopped counting


def test_session_start_begins_git_status_before_it_opens_the_store(conn, enabled, repo, tmp_path):
    """`git status` runs while the hook imports and opens the store (at a million memories
    the packet had waited for it); the packet reads it, or starts its own for another tree."""
    from waymark.hooks.session_start import _begin_status

    from waymark.packets.session_start import start_session
    from waymark.projects import git

    (repo / "new.txt").write_text("x", encoding="utf-8")
    root, status = _begin_status(str(repo / "src"))
    assert root == str(repo.resolve()) and git.finish_dirty(status, root) == git.dirty(root)
    assert _begin_status(str(tmp_path)) is None  # not in git
    text = start_session(conn, enabled, "early-1", "claude-code", "startup",
                         started=_begin_status(str(repo)))  # fmt: skip
    assert text and "new.txt" in text  # the repository since last session, from it
    other = start_session(conn, enabled, "early-2", "claude-code", "startup",
                          started=("/elsewhere", None))  # fmt: skip
    assert other and "new.txt" in other  # not its tree: it asked git itself
