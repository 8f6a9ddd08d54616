"""The code map across two real sessions of Claude Code and Codex (scripted stub model):
session 1 edits a function and saves its checkpoint through Waymark's MCP tool (which
refreshes the map); session 2's SessionStart packet names the modified declaration and the
files that depend on it."""

from __future__ import annotations

import pytest

from waymark.codemap import questions, snapshot

from .conftest import enabled_project, git_project
from .test_hooks_clients import requests_text

CLIENTS = ["claude", "codex"]
FILES = {
    "app/__init__.py": "",
    "app/store.py": "class Cache:\n    pass\n\n\ndef open_cache():\n    return Cache()\n",
    "app/service.py": "from app.store import open_cache\n\n\ndef serve():\n    return open_cache()\n",
}
EDITED = "class Cache:\n    pass\n\n\ndef open_cache():\n    return Cache()  # sized\n"


def edit_turn(client: str) -> dict:
    if client == "claude":
        return {"tool": "Write", "input": {"file_path": "app/store.py", "content": EDITED}}
    return {"shell": "printf '" + EDITED.replace("\n", "\\n") + "' > app/store.py"}


@pytest.mark.parametrize("client", CLIENTS)
def test_the_next_session_names_the_modified_function_and_its_dependents(
    clients, client, monkeypatch, tmp_path
):
    run_dir = tmp_path / "run"
    project_dir = git_project(run_dir / "project", FILES)
    conn, project = enabled_project(clients, monkeypatch, project_dir)
    first = snapshot.refresh(conn, project)["snapshot"]["id"]  # `waymark map refresh`
    clients.run(
        client,
        [
            edit_turn(client),
            {"text": "Done."},
            {
                "tool": "mcp__waymark__checkpoint",
                "input": {
                    "operation": "create",
                    "objective": "Size the cache",
                    "next_action": "pass the size through serve()",
                    "relevant_files": ["app/store.py"],
                },
            },
            {"text": "Checkpoint saved."},
        ],
        run_dir=run_dir,
        hooks=clients.hooks(client),
    )
    assert (project_dir / "app/store.py").read_text("utf-8") == EDITED
    newest = questions.status(conn, project)["snapshots"][0]["id"]
    assert newest != first, "the checkpoint's save did not refresh the map"
    second = clients.run(
        client, [{"text": "Looking."}], run_dir=run_dir, hooks=clients.hooks(client)
    )
    packet = requests_text(second)[0]
    assert f"- map {first} (last session's start) -> {newest}: 1 modified" in packet
    assert "- modified app/store.py::open_cache (1 dependent file: app/service.py)" in packet
    assert "- app/store.py: 1 file depends on it" in packet  # the checkpoint's relevant file
