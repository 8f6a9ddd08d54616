"""The co-tenant view against a real Claude Code session: another plugin's hooks beside
Waymark's on SessionStart and Stop, and `waymark status` reading the chain Claude Code
recorded in its own transcript."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from .conftest import enabled_project, git_project

OTHER = "sleep 0.4; echo other-plugin-context"


def test_status_shows_each_events_chain_and_waymarks_share(clients, monkeypatch, tmp_path):
    run_dir = tmp_path / "run"
    project_dir = git_project(run_dir / "project", {"app.py": "x = 1\n"})
    enabled_project(clients, monkeypatch, project_dir)
    hooks = clients.hooks("claude")
    for event in ("SessionStart", "Stop"):
        hooks[event][0]["hooks"].append({"type": "command", "command": OTHER, "timeout": 2})
    clients.run(
        "claude",
        [{"shell": "echo hi"}, {"text": "Done."}, {"text": "Stopping."}],
        run_dir=run_dir,
        hooks=hooks,
    )
    env = {**os.environ, **clients.env(), "HOME": str(run_dir / "home"),
           "CLAUDE_CONFIG_DIR": str(run_dir / "claude-config")}  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-m", "waymark", "status", "--json", "--project", str(project_dir)],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    (claude,) = [c for c in json.loads(out.stdout)["hooks"] if c["client"] == "claude-code"]
    rows = {r["event"]: r for r in claude["chain"]}
    stop = rows["Stop"]  # every Stop hook is in Claude Code's summary of it
    assert stop["instances"] >= 1 and stop["hooks"] == 2 and stop["others"] == 1
    assert stop["chain_p95"] >= 400  # the other plugin's sleep sets the pace
    assert stop["ours_p95"] is not None and stop["ours_p95"] < stop["chain_p95"]
    assert 0 < stop["share"] < 1
    start = rows["SessionStart"]  # the other hook printed, so Claude Code recorded it
    assert start["others"] == 1 and start["chain_p95"] >= 400
