"""After a compaction: the SessionStart that follows re-injects the checkpoint's verbatim
objective and next action and the decisions the session relied on, by id; PostCompact checks
the client's summary against the session's recorded facts and says, once, what it no longer
mentions. Hooks as real processes with Claude Code's payload shapes (PostCompact carries
`compact_summary`, as the real client sends it: tests/e2e/test_compaction_clients.py)."""

from __future__ import annotations

import json

from test_hooks import hook, payload
from waymark.handoff import checkpoints
from waymark.handoff.compaction import mentioned
from waymark.memories import store
from waymark.memories.draft import make_draft

OBJECTIVE = "Make invoice webhooks idempotent across provider retries"
NEXT = "Add the delivery_id unique check to src/pkg/core.py and rerun test_webhooks"


def context(done) -> str | None:
    assert done.returncode == 0, done.stderr
    return (
        json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"] if done.stdout else None
    )


def worked_session(conn, enabled, repo):
    checkpoints.create(conn, enabled, {"objective": OBJECTIVE, "next_action": NEXT},
                       checkpoints.Origin("agent", "claude-code", "c1"))  # fmt: skip
    decision = store.remember(conn, enabled, make_draft(
        enabled, type="decision", content="Key webhook deliveries on delivery_id, not payload hash",
        scope="file", target="src/pkg/core.py")).memory  # fmt: skip
    start = payload("claude-code", "SessionStart", cwd=str(repo), session_id="c1")
    assert decision.id in (context(hook("SessionStart", start)) or "")  # among the decisions
    ask = payload("claude-code", "UserPromptSubmit", cwd=str(repo), session_id="c1",
                  prompt="Work on src/pkg/core.py")  # fmt: skip
    assert decision.id not in (context(hook("UserPromptSubmit", ask)) or "")  # shown once
    write = payload("claude-code", "PostToolUse-write", cwd=str(repo), session_id="c1")
    write["tool_input"] = {"file_path": str(repo / "src/pkg/core.py"), "content": "x"}
    assert hook("PostToolUse", write).returncode == 0
    fail = payload("claude-code", "PostToolUseFailure", cwd=str(repo), session_id="c1")
    fail.update(tool_input={"command": "pytest tests/test_webhooks.py"},
                error="Exit code 1\nE   AssertionError: duplicate delivery")  # fmt: skip
    assert hook("PostToolUseFailure", fail).returncode == 0
    return decision


def test_the_session_start_after_a_compaction_brings_objective_next_action_and_decisions(
    conn, enabled, repo
):
    decision = worked_session(conn, enabled, repo)
    pre = payload("claude-code", "SessionStart", cwd=str(repo), session_id="c1")
    assert hook("PreCompact", {"session_id": "c1", "cwd": str(repo), "hook_event_name":
                               "PreCompact", "trigger": "auto"}).returncode == 0  # fmt: skip
    text = context(hook("SessionStart", {**pre, "source": "compact"}))
    assert text is not None
    assert f"Next action: {NEXT}" in text and OBJECTIVE in text  # verbatim
    assert "## Decisions this session relied on" in text and f"id {decision.id}" in text
    assert "## This session so far" in text


def test_post_compact_says_what_the_summary_no_longer_mentions_once(conn, enabled, repo):
    decision = worked_session(conn, enabled, repo)
    summary = ("<summary>We are making invoice webhooks idempotent across provider retries."
               " Edited core.py.</summary>")  # fmt: skip
    post = {"session_id": "c1", "cwd": str(repo), "hook_event_name": "PostCompact",
            "trigger": "auto", "compact_summary": summary}  # fmt: skip
    text = context(hook("PostCompact", post))
    assert text is not None and "## The compaction summary no longer mentions" in text
    assert "`pytest tests/test_webhooks.py` failed" in text  # not in the summary
    assert f"(id {decision.id})" in text  # the decision it relied on
    assert f"the next action: {NEXT}" in text
    assert "core.py" not in text.split("no longer mentions", 1)[1].split("failed")[0]  # named
    assert OBJECTIVE not in text  # the summary says it
    ask = payload("claude-code", "UserPromptSubmit", cwd=str(repo), session_id="c1",
                  prompt="carry on")  # fmt: skip
    assert "no longer mentions" not in (context(hook("UserPromptSubmit", ask)) or "")  # once


def test_codex_hears_it_with_the_next_prompt(conn, enabled, repo):
    worked_session(conn, enabled, repo)
    post = {"session_id": "c1", "cwd": str(repo), "hook_event_name": "PostCompact",
            "compact_summary": "<summary>nothing much</summary>"}  # fmt: skip
    done = hook("PostCompact", post, client="codex")
    assert done.returncode == 0 and done.stdout == b""  # Codex: no context from this hook
    ask = payload("codex", "UserPromptSubmit", cwd=str(repo), session_id="c1", prompt="go on")
    text = context(hook("UserPromptSubmit", ask, client="codex"))
    assert text is not None and "no longer mentions" in text and NEXT in text


def test_a_summary_that_names_everything_drops_nothing(conn, enabled, repo):
    decision = worked_session(conn, enabled, repo)
    summary = (f"{OBJECTIVE}. {NEXT}. pytest failed. core.py edited. Key webhook deliveries"
               f" on delivery_id ({decision.id}).")  # fmt: skip
    post = {"session_id": "c1", "cwd": str(repo), "hook_event_name": "PostCompact",
            "compact_summary": summary}  # fmt: skip
    assert context(hook("PostCompact", post)) is None


def test_mentioned_reads_paths_commands_ids_and_most_words():
    assert mentioned({"kind": "file", "key": "src/a/b.py", "text": ""}, "we changed b.py")
    assert not mentioned({"kind": "file", "key": "src/a/b.py", "text": ""}, "we changed c.py")
    assert mentioned({"kind": "failure", "key": "npm test", "text": ""}, "NPM TEST failed twice")
    fact = {"kind": "decision", "key": "01ABC", "text": "Use apsw for every SQLite file (id 01ABC)"}
    assert mentioned(fact, "apsw for every sqlite") and not mentioned(fact, "we use sqlite")
