"""The plugin route: Waymark packaged as a plugin for Claude Code and Codex (plugin/)."""

from __future__ import annotations

import json
import pathlib
import sys

import pytest

from waymark.memories import store
from waymark.memories.draft import make_draft

from .conftest import enabled_project, tool_texts

PLUGIN = pathlib.Path(__file__).parents[2] / "plugin"


def enable(clients, monkeypatch, run_dir):
    project_dir = run_dir / "project"
    project_dir.mkdir(parents=True)
    conn, project = enabled_project(clients, monkeypatch, project_dir)
    store.remember(
        conn,
        project,
        make_draft(
            project, type="convention", pinned=True, content="Plugin route marker: prefer small PRs"
        ),
    )
    return conn


def requests_text(result) -> list[str]:
    from stub_llm import request_text

    return [request_text(r) for r in result.main_requests]


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_the_plugin_fires_hooks_and_serves_mcp(clients, client, monkeypatch, tmp_path):
    run_dir = tmp_path / "run"
    enable(clients, monkeypatch, run_dir)
    result = clients.run(
        client,
        [{"tool": "mcp__waymark__status", "input": {}}, {"text": "ok"}],
        run_dir=run_dir,
        plugin_dirs=[str(PLUGIN)],
        mcp_servers={},
        env={"WAYMARK_PYTHON": sys.executable},
    )
    assert requests_text(result)[0].count("Plugin route marker: prefer small PRs") == 1
    status = next(t for t in tool_texts(result) if '"data_home"' in t)
    status = json.loads(status[status.index("{") :])
    assert status["project"]["root"] == str((run_dir / "project").resolve())
    assert status["data_home"] == str(clients.home)


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_plugin_and_installed_hooks_together_run_each_event_once(
    clients, client, monkeypatch, tmp_path
):
    run_dir = tmp_path / "run"
    enable(clients, monkeypatch, run_dir)
    result = clients.run(
        client,
        [{"text": "ok"}],
        run_dir=run_dir,
        plugin_dirs=[str(PLUGIN)],
        hooks=clients.hooks(client),
        env={"WAYMARK_PYTHON": sys.executable},
    )
    assert requests_text(result)[0].count("Plugin route marker: prefer small PRs") == 1
