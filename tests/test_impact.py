"""`waymark stats --impact`: two sessions of real hook processes (the second starts from the
first's handoff, carries it on, and a failure's hint is followed by a pass), a recall asked
through the real MCP server, a decision git's outcome settles, and the clients' transcripts
in their own formats; read back per week through the command a user runs."""

from __future__ import annotations

import io
import json

from conftest import call_tool
from test_failure_recall import TRACE, fail, succeed
from test_hooks import context_of, hook, payload, remember
from test_outcomes import commit
from test_outcomes import git as git  # noqa: F401  (the fixture)
from waymark.cli import main
from waymark.handoff import checkpoints
from waymark.handoff.origin import Origin
from waymark.packets.impact import week_of


def claude_transcript(folder, session_id: str, usages: list[tuple[int, int, int]]) -> None:
    """A Claude Code transcript: one assistant line per request (a second block of the same
    message repeats its id), usage as (input, cache creation, cache read)."""
    lines = [{"type": "user", "message": {"role": "user", "content": "go"}}]
    for n, (fresh, created, read) in enumerate(usages):
        message = {"id": f"msg_{n}", "role": "assistant", "content": [],
                   "usage": {"input_tokens": fresh, "cache_creation_input_tokens": created,
                             "cache_read_input_tokens": read, "output_tokens": 5}}  # fmt: skip
        lines += [{"type": "assistant", "message": message}] * 2
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{session_id}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def codex_rollout(home, session_id: str, usages: list[tuple[int, int]]) -> None:
    """A Codex rollout: a token_count event per request, (input, of which cached)."""
    folder = home / "sessions" / "2026" / "12" / "08"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [{"type": "session_meta", "payload": {"id": session_id}}]
    total = 0
    for sent, cached in usages:
        total += sent
        last = {"input_tokens": sent, "cached_input_tokens": cached, "output_tokens": 5}
        lines.append({"type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": total}, "last_token_usage": last}}})  # fmt: skip
    lines.append({"type": "event_msg", "payload": {"type": "token_count", "info": None}})
    name = f"rollout-2026-12-08T01-18-52-{session_id}.jsonl"
    (folder / name).write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_the_impact_of_two_sessions_read_back_per_week(
    conn, enabled, repo, git, capsys, tmp_path, monkeypatch
):
    monkeypatch.chdir(repo)  # the commands run in the project, as a user runs them
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    first, second = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
    warning = remember(conn, enabled, "core.py: run() is not reentrant", type="warning",
                       scope="file", target="src/pkg/core.py")  # fmt: skip
    kept = commit(git, repo, "README.md", "# demo\nSQLite\n", "store: sqlite")
    undone = commit(git, repo, "docs/cache.md", "redis\n", "cache: redis")
    for text, sha in (("We chose SQLite over Postgres", kept),
                      ("We cache readings in Redis", undone)):  # fmt: skip
        assert (
            main(
                ["remember", "--content", text, "--type", "decision", "--evidence", f"commit:{sha}"]
            )
            == 0
        )
    # The first session: a prompt shows the warning, the tests fail and a fix makes them pass,
    # a handoff is saved.
    hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo), session_id=first))
    prompt = payload("claude-code", "UserPromptSubmit", cwd=str(repo), session_id=first,
                     prompt="Please add a retry flag to src/pkg/core.py")  # fmt: skip
    assert warning.id in context_of(hook("UserPromptSubmit", prompt))
    assert fail("claude-code", repo, first, "python -m pytest", TRACE.format(n=3)) is None
    succeed("claude-code", repo, first, "pip install requests-mock")
    succeed("claude-code", repo, first, "python -m pytest")
    checkpoints.create(conn, enabled, {"objective": "Retry flag", "next_action": "add a test"},
                       Origin(client="claude-code", session_id=first))  # fmt: skip
    hook("SessionEnd", payload("claude-code", "SessionEnd", cwd=str(repo), session_id=first))
    # The second (Codex) starts from that handoff, meets the same error, is told the fix, and
    # the command passes; it carries the handoff on.
    start = payload("codex", "SessionStart", cwd=str(repo), session_id=second)
    assert "add a test" in context_of(hook("SessionStart", start, "codex"))
    hint = fail("codex", repo, second, "python -m pytest -x", TRACE.format(n=9))
    assert hint is not None and "pip install requests-mock" in hint
    succeed("codex", repo, second, "python -m pytest -x")
    task = checkpoints.active(conn, enabled, session_id=second)
    assert task is not None
    checkpoints.revise(conn, enabled, task.id, task.revision.id, {"next_action": "ship it"},
                       Origin(client="codex", session_id=second))  # fmt: skip
    # An agent asks the MCP server; git's outcome of the decision is set as a user would.
    found = call_tool(repo, "recall", {"query": "is run() reentrant in core.py"})
    assert warning.id in json.dumps(found.structured_content)
    git("revert", "--no-edit", undone)
    for n in range(3):  # the kept change stands under later work
        commit(git, repo, "README.md", f"# demo\nSQLite\n{n}\n", f"docs {n}")
    assert main(["outcomes", "--refresh"]) == 0
    # The clients' own records of the two sessions.
    claude_dir, codex_dir = tmp_path / "claude", tmp_path / "codex"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_dir))
    monkeypatch.setenv("CODEX_HOME", str(codex_dir))
    claude_transcript(claude_dir / "projects" / "-repo", first, [(100, 900, 0), (20, 80, 900)])
    codex_rollout(codex_dir, second, [(1000, 0), (1200, 1000)])
    capsys.readouterr()

    assert main(["stats", "--impact", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    t = data["total"]
    assert (t["sessions"], t["from_handoff"], t["handoffs_resumed"]) == (2, 1, 1)
    assert t["recalls"] == 2 and t["asked_recalls"] == 1  # the prompt's packet, the MCP call
    assert t["failure_hints"] == 1 and t["hints_then_passed"] == 1
    assert (t["decisions_held"], t["decisions_reverted"], t["held_share"]) == (1, 1, 0.5)
    assert t["shown"] >= 2 and t["tokens"] > 0 and t["from_handoff_share"] == 0.5
    weeks = [w["week"] for w in data["weeks"]]
    assert weeks == sorted(weeks, reverse=True) and sum(w["sessions"] for w in data["weeks"]) == 2
    cache = data["prompt_cache"]
    assert cache["by_client"]["claude-code"] == {
        "sessions": 1, "requests": 2, "input_tokens": 2000, "cached_tokens": 900,
        "cached_share": 0.45}  # fmt: skip
    assert cache["by_client"]["codex"]["requests"] == 2
    assert cache["cached_tokens"] == 1900 and cache["input_tokens"] == 4200
    assert main(["stats", "--impact"]) == 0
    text = capsys.readouterr().out
    assert "2 sessions, 1 started from a handoff (50%), 1 carried it on" in text
    assert "45% of 2,000" in text and "prompt cache, from the clients' transcripts: 45%" in text


def test_weeks_start_on_monday():
    assert week_of("2026-12-07T09:00:00.000Z") == "2026-12-07"  # a Monday
    assert week_of("2026-12-13T23:59:59.000Z") == "2026-12-07"  # its Sunday
    assert week_of("2026-12-14T00:00:00.000Z") == "2026-12-14"


def test_no_transcript_is_said_and_a_bad_line_is_skipped(conn, enabled, repo, capsys, tmp_path,
                                                         monkeypatch):  # fmt: skip
    monkeypatch.chdir(repo)
    session = "33333333-3333-4333-8333-333333333333"
    hook("SessionStart", payload("claude-code", "SessionStart", cwd=str(repo), session_id=session))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "none"))
    capsys.readouterr()
    assert main(["stats", "--impact"]) == 0
    assert (
        "prompt cache: no transcript of these sessions on this machine" in capsys.readouterr().out
    )
    folder = tmp_path / "claude" / "projects" / "-repo"
    claude_transcript(folder, session, [(10, 0, 90)])
    with open(folder / f"{session}.jsonl", "a") as f:
        f.write("{not json\n")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    assert main(["stats", "--impact", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["prompt_cache"]["cached_share"] == 0.9
