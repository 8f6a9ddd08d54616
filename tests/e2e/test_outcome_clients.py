"""Outcomes from git inside real Claude Code and Codex sessions (scripted stub model): the
agent records a decision through Waymark's MCP tool and commits the change in session 1;
the change is reverted; session 2's prompt about the file brings the decision flagged
REVERTED (its demotion in ranking: tests/test_outcomes.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .conftest import enabled_project, git_project

CLIENTS = ["claude", "codex"]
DECISION = "billing.py charges through charge_once() so retries never double charge"
COMMIT = (
    "printf 'def charge_once():\\n    return 1\\n' > src/billing.py && git add -A"
    " && git -c user.name=t -c user.email=t@example.com commit -qm 'charge once'"
)


@pytest.mark.parametrize("client", CLIENTS)
def test_a_reverted_decision_comes_back_flagged_and_demoted(clients, client, monkeypatch, tmp_path):
    run_dir = tmp_path / "run"
    project_dir = git_project(
        run_dir / "project", {"src/billing.py": "def charge():\n    return 1\n"}
    )
    conn, project = enabled_project(clients, monkeypatch, project_dir)
    remember = {
        "type": "decision",
        "content": DECISION,
        "scope": "file",
        "target": "src/billing.py",
    }
    clients.run(
        client,
        [{"tool": "mcp__waymark__remember", "input": remember}, {"shell": COMMIT}, {"text": "Done."},
         {"text": "Stopping."}],
        run_dir=run_dir,
        hooks=clients.hooks(client),
    )  # fmt: skip
    git = ["git", "-C", str(project_dir), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "revert", "--no-edit", "HEAD"], check=True, capture_output=True)
    env = {**os.environ, **clients.env()}
    done = subprocess.run(
        [sys.executable, "-m", "waymark", "outcomes", "--refresh", "--json", "--project",
         str(project_dir)], env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (outcome,) = json.loads(done.stdout)["outcomes"]
    assert outcome["state"] == "reverted" and outcome["kind"] == "memory"
    again = clients.run(
        client,
        [{"text": "Noted."}, {"text": "Stopping."}],
        run_dir=run_dir,
        hooks=clients.hooks(client),
        prompt="Rework how src/billing.py charges invoices.",
    )
    first = json.dumps(again.main_requests[0]["body"], ensure_ascii=False)
    assert "decision · REVERTED · src/billing.py" in first, first[-3000:]
    assert outcome["item_id"] in first
