"""Backfill over the transcripts real Claude Code and Codex sessions wrote (scripted stub
model): a decision the assistant stated and a failure it fixed come back as candidates with
their source; a second run proposes nothing new."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .conftest import enabled_project, git_project

CLIENTS = ["claude", "codex"]
CHECK = "import pathlib\nprint(pathlib.Path('settings.ini').read_text())\n"


@pytest.mark.parametrize("client", CLIENTS)
def test_backfill_reads_a_real_clients_transcripts(clients, client, monkeypatch, tmp_path):
    run_dir = tmp_path / "run"
    project_dir = git_project(run_dir / "project", {"check.py": CHECK, "settings.example": "x\n",
                                                    ".gitignore": "settings.ini\n"})  # fmt: skip
    enabled_project(clients, monkeypatch, project_dir)
    clients.run(
        client,
        [{"shell": "python3 check.py"}, {"shell": "cp settings.example settings.ini"},
         {"shell": "python3 check.py"},
         {"text": "Done. We decided to keep settings in settings.ini instead of env vars"
                  " because the deploy tool reads it."}, {"text": "Stopping."}],
        run_dir=run_dir,
        mcp_servers={},
    )  # fmt: skip
    env = {**os.environ, **clients.env(), "HOME": str(run_dir / "home"),
           "CLAUDE_CONFIG_DIR": str(run_dir / "claude-config"),
           "CODEX_HOME": str(run_dir / "codex-home")}  # fmt: skip

    def waymark(*args: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "waymark", *args, "--json", "--project",
                               str(project_dir)], env=env, capture_output=True, text=True,
                              timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout)

    name = "claude" if client == "claude" else "codex"
    first = waymark("backfill", "--client", name)
    assert first["read"] >= 1 and first["by_kind"].get("decision") == 1, first
    assert first["by_kind"].get("fix") == 1, first
    found = waymark("candidates", "--kind", "backfill")["results"]
    (fix,) = [c for c in found if c["fields"]["type"] == "lesson"]
    assert "`python3 check.py` failed" in fix["fields"]["content"]
    assert "`cp settings.example settings.ini`" in fix["fields"]["content"]
    assert fix["evidence"][0]["url"].startswith("file://")
    assert waymark("backfill", "--client", name)["proposed"] == 0
