"""Compaction inside real Claude Code (scripted stub model): a session edits a file and sees
a command fail; `/compact` on the resumed session runs PreCompact, SessionStart (compact) and
PostCompact with the summary the stub wrote; the checkpoint's next action comes back
verbatim, and the next request says what the summary no longer mentions. (Codex's headless
`exec` compacts only past its context limit: its path is tests/test_compaction.py.)"""

from __future__ import annotations

import json

from waymark.handoff import checkpoints

from .conftest import enabled_project, git_project

NEXT = "Add the delivery_id unique check to src/app.py and rerun the webhook tests"


def test_a_compaction_brings_the_next_action_back_and_says_what_the_summary_dropped(
    clients, monkeypatch, tmp_path
):
    run_dir = tmp_path / "run"
    project_dir = git_project(run_dir / "project", {"src/app.py": "x = 1\n"})
    conn, project = enabled_project(clients, monkeypatch, project_dir)
    checkpoints.create(conn, project, {"objective": "Idempotent webhooks", "next_action": NEXT})
    first = clients.run(
        "claude",
        [{"tool": "Write", "input": {"file_path": str(project_dir / "src/app.py"),
                                     "content": "x = 2\n"}},
         {"shell": "ls ./no-such-fixture-dir"}, {"text": "Working on it."},
         {"text": "Stopping."}],
        run_dir=run_dir,
        hooks=clients.hooks("claude"),
    )  # fmt: skip
    session = first.output["session_id"]
    compacted = clients.run(
        "claude",
        [{"text": "<summary>Idempotent webhooks: edited src/app.py.</summary>"}, {"text": "ok"}],
        run_dir=run_dir,
        hooks=clients.hooks("claude"),
        prompt="/compact",
        extra_args=["--resume", session],
    )
    assert compacted.main_requests  # the summary request reached the stub
    after = clients.run(
        "claude",
        [{"text": "Carrying on."}, {"text": "Stopping."}],
        run_dir=run_dir,
        hooks=clients.hooks("claude"),
        prompt="Carry on.",
        extra_args=["--resume", session],
    )
    body = json.dumps(after.main_requests[0]["body"])
    assert f"Next action: {NEXT}" in body  # the compact SessionStart's packet, verbatim
    assert "The compaction summary no longer mentions" in body  # PostCompact's context
    tail = body.split("The compaction summary no longer mentions", 1)[1]
    assert "no-such-fixture-dir" in tail.split("</waymark-memory>")[0]
    assert "edited src/app.py" not in tail.split("</waymark-memory>")[0]  # the summary said it
