"""PreToolUse inside real Claude Code and Codex sessions (scripted stub model)."""

from __future__ import annotations

import json

import pytest

from waymark.memories import store
from waymark.memories.draft import make_draft

from .conftest import enabled_project, git_project

CLIENTS = ["claude", "codex"]
WARNING = "billing.py: charge() must stay idempotent across retries"


def project_with_a_file_warning(clients, monkeypatch, run_dir, toml: str | None = None):
    files = {"src/billing.py": "def charge(): ...\n", **({".waymark.toml": toml} if toml else {})}
    project_dir = git_project(run_dir / "project", files)
    conn, project = enabled_project(clients, monkeypatch, project_dir)
    store.remember(
        conn,
        project,
        make_draft(project, type="warning", content=WARNING, scope="file", target="src/billing.py"),
    )
    return conn, project


def edit(client: str, path: str, n: int) -> dict:
    if client == "claude":
        return {"tool": "Write", "input": {"file_path": path, "content": f"x = {n}\n"}}
    patch = f"*** Begin Patch\n*** Add File: {path}\n+x = {n}\n*** End Patch\n"
    if n > 1:
        patch = (
            f"*** Begin Patch\n*** Update File: {path}\n@@\n-x = {n - 1}\n+x = {n}\n*** End Patch\n"
        )
    return {"shell": f"apply_patch <<'EOF'\n{patch}EOF\n"}


def bodies(result) -> list[str]:
    return [json.dumps(r["body"]) for r in result.main_requests]


@pytest.mark.parametrize("client", CLIENTS)
def test_a_files_warning_reaches_the_model_before_the_first_edit_only(
    clients, client, monkeypatch, tmp_path
):
    run_dir = tmp_path / "run"
    project_with_a_file_warning(clients, monkeypatch, run_dir)
    (run_dir / "project" / "src" / "billing.py").unlink()  # apply_patch adds it afresh
    result = clients.run(
        client,
        [edit(client, "src/billing.py", 1), edit(client, "src/billing.py", 2), {"text": "Done."}],
        run_dir=run_dir,
        hooks=clients.hooks(client),
        prompt="Carry on with the task.",
    )
    seen = bodies(result)
    assert WARNING not in seen[0]  # nothing before the edit: not at start, not at the prompt
    assert WARNING in seen[1]  # the first edit brought it
    assert seen[2].count(WARNING) == 1  # and the second did not bring it again


@pytest.mark.parametrize("client", CLIENTS)
def test_a_command_that_failed_last_session_brings_its_failure_before_it_runs(
    clients, client, monkeypatch, tmp_path
):
    run_dir = tmp_path / "run"
    project_with_a_file_warning(clients, monkeypatch, run_dir)
    command = "ls ./no-such-dir-xyz"
    clients.run(
        client,
        [{"shell": command}, {"text": "It failed."}, {"text": "Stopping."}],
        run_dir=run_dir,
        hooks=clients.hooks(client),
    )
    again = clients.run(
        client,
        [{"shell": command}, {"text": "Done."}, {"text": "Stopping."}],
        run_dir=run_dir,
        hooks=clients.hooks(client),
    )
    seen = bodies(again)
    assert "failed once in this project" not in seen[0]
    assert "failed once in this project" in seen[1] and "no-such-dir-xyz" in seen[1]


@pytest.mark.parametrize("client", CLIENTS)
def test_an_ignored_path_is_never_recorded(clients, client, monkeypatch, tmp_path):
    run_dir = tmp_path / "run"
    conn, _ = project_with_a_file_warning(
        clients, monkeypatch, run_dir, toml='[capture]\nignore_paths = ["generated"]\n'
    )
    (run_dir / "project" / "generated").mkdir()
    result = clients.run(
        client,
        [edit(client, "generated/out.py", 1), {"text": "Done."}, {"text": "Stopping."}],
        run_dir=run_dir,
        hooks=clients.hooks(client),
    )
    assert (run_dir / "project" / "generated" / "out.py").exists()  # the edit happened
    rows = conn.execute("SELECT path FROM session_ledger WHERE kind = 'edit'").fetchall()
    assert rows == []
    assert not any("Before stopping, call Waymark" in b for b in bodies(result))


@pytest.mark.parametrize("client", CLIENTS)
def test_a_guarded_file_is_confirmed_the_clients_way(clients, client, monkeypatch, tmp_path):
    run_dir = tmp_path / "run"
    project_with_a_file_warning(
        clients, monkeypatch, run_dir, toml='[guard]\nask_paths = ["src/billing.py"]\n'
    )
    (run_dir / "project" / "src" / "billing.py").unlink()
    result = clients.run(
        client,
        [edit(client, "src/billing.py", 1), edit(client, "src/billing.py", 1), {"text": "Ok."}],
        run_dir=run_dir,
        hooks=clients.hooks(client),
    )
    seen = bodies(result)
    assert "protected by .waymark.toml [guard]" in seen[1]
    made = (run_dir / "project" / "src" / "billing.py").exists()
    if client == "claude":
        assert not made  # non-interactive Claude Code cannot ask the user, so it refuses
    else:
        assert made  # Codex has no "ask": refused once, then the repeated call goes through
