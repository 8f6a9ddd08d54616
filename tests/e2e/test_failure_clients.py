"""Failure-time recall inside real Claude Code and Codex sessions (scripted stub model): a
failure seen and fixed in session 1 is offered in session 2 at the same failure."""

from __future__ import annotations

import json

import pytest

from .conftest import enabled_project, git_project

CLIENTS = ["claude", "codex"]
CHECK = "import pathlib, sys\nprint(pathlib.Path('settings.ini').read_text())\n"
FIX = "cp settings.example settings.ini"
HINT = "This error came up before"


@pytest.mark.parametrize("client", CLIENTS)
def test_a_failure_fixed_last_session_is_offered_when_it_happens_again(
    clients, client, monkeypatch, tmp_path
):
    run_dir = tmp_path / "run"
    project_dir = git_project(
        run_dir / "project",
        {
            "check.py": CHECK,
            "settings.example": "[app]\nmode = dev\n",
            ".gitignore": "settings.ini\n",
        },
    )
    enabled_project(clients, monkeypatch, project_dir)
    first = clients.run(
        client,
        [
            {"shell": "python3 check.py"},
            {"shell": FIX},
            {"shell": "python3 check.py"},
            {"text": "Fixed: the settings file was missing."},
            {"text": "Stopping."},
        ],
        run_dir=run_dir,
        hooks=clients.hooks(client),
    )
    assert all(HINT not in json.dumps(r["body"]) for r in first.main_requests)
    (project_dir / "settings.ini").unlink()  # the next checkout is without it again
    again = clients.run(
        client,
        [{"shell": "python3 check.py --verbose"}, {"text": "I see."}, {"text": "Stopping."}],
        run_dir=run_dir,
        hooks=clients.hooks(client),
    )
    seen = [json.dumps(r["body"]) for r in again.main_requests]
    assert HINT not in seen[0]
    assert HINT in seen[1]  # the request that carries the failed call's result
    assert f"`{FIX}`" in seen[1] and "[failure:" in seen[1]
