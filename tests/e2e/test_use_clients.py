"""Measured use inside real Claude Code and Codex sessions (scripted stub model): a memory
the packet showed, whose id the agent cites in its last message, is counted used by
`waymark stats`; one it never mentions is not."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from waymark.memories import store
from waymark.memories.draft import make_draft

from .conftest import enabled_project, git_project

CLIENTS = ["claude", "codex"]


@pytest.mark.parametrize("client", CLIENTS)
def test_stats_count_the_id_the_agent_cites(clients, client, monkeypatch, tmp_path):
    run_dir = tmp_path / "run"
    project_dir = git_project(run_dir / "project", {"src/billing.py": "def charge(): ...\n"})
    conn, project = enabled_project(clients, monkeypatch, project_dir)
    made = [
        store.remember(conn, project, make_draft(project, type="warning", content=text,
                                                 scope="file", target="src/billing.py")).memory
        for text in ("billing.py: charge() must stay idempotent", "billing.py: amounts are cents")
    ]  # fmt: skip
    cited, ignored = made
    result = clients.run(
        client,
        [{"text": f"Keeping charge() idempotent, as {cited.id} says."}, {"text": "Stopping."}],
        run_dir=run_dir,
        hooks=clients.hooks(client),
        prompt="Look at src/billing.py and tell me what to keep in mind.",
    )
    first = json.dumps(result.main_requests[0]["body"])
    assert cited.id in first and ignored.id in first  # both were shown
    env = {**os.environ, **clients.env()}
    done = subprocess.run(
        [sys.executable, "-m", "waymark", "stats", "--json", "--project", str(project_dir)],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["by_how"] == {"cited": 1}
    assert data["shown"] >= 2 and data["used"] == 1
    (section,) = [r for r in data["by_section"] if r["section"] == "For the files you named"]
    assert (section["shown"], section["used"]) == (2, 1)
