"""The session's work map: each tool call in a few words, bounded, replayed after a
compaction so the agent knows what it already tried."""

from __future__ import annotations

from test_hooks import context_of, hook, payload
from waymark.base.tokens import estimate


def tool(repo, name, session="w1", client="claude-code", **fields):
    kind = "PostToolUse-bash" if name == "Bash" else "PostToolUse-write"
    data = payload(client, kind, cwd=str(repo), session_id=session)
    data.update(tool_name=name, **fields)
    return hook("PostToolUse", data, client)


def failed(repo, command, session="w1"):
    data = payload("claude-code", "PostToolUseFailure", cwd=str(repo), session_id=session)
    data.update(tool_input={"command": command}, error="Exit code 1\nE boom")
    return hook("PostToolUseFailure", data)


def compact(repo, session="w1"):
    data = payload("claude-code", "SessionStart", cwd=str(repo), session_id=session)
    data["source"] = "compact"
    return context_of(hook("SessionStart", data))


def section(text: str, title: str) -> str:
    body = text.split(f"## {title}\n", 1)[1]
    return body.split("\n\n", 1)[0].split("\n</waymark-memory>", 1)[0]


def test_after_a_compaction_the_packet_replays_what_the_session_did(conn, enabled, repo):
    core = str(repo / "src/pkg/core.py")
    tool(repo, "Read", tool_input={"file_path": core})
    tool(repo, "Edit", tool_input={"file_path": core, "old_string": "a", "new_string": "b"})
    tool(repo, "Edit", tool_input={"file_path": core, "old_string": "b", "new_string": "c"})
    failed(repo, "pytest -x tests/test_core.py")
    tool(repo, "Bash", tool_input={"command": "pytest -x tests/test_core.py"})
    said = section(compact(repo), "This session so far")
    assert said == (
        "- Read src/pkg/core.py; Edit src/pkg/core.py x2; Bash pytest: failed (exit 1); Bash pytest"
    )


def test_twenty_steps_cost_about_a_hundred_tokens_and_only_the_newest_are_kept(conn, enabled, repo):
    for i in range(70):
        path = str(repo / f"src/pkg/mod{i % 25}.py")
        tool(repo, "Edit", tool_input={"file_path": path, "old_string": "a", "new_string": "b"})
    assert conn.execute("SELECT count(*) FROM session_steps").fetchone()[0] == 60
    said = section(compact(repo), "This session so far")
    assert said.count(";") + said.count("\n") + 1 == 20
    assert 80 <= estimate(said) <= 150, estimate(said)
    assert "mod19.py" in said.splitlines()[-1]  # the newest last


def test_a_steps_command_keeps_its_program_never_its_arguments(conn, enabled, repo):
    secret = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
    tool(repo, "Bash", tool_input={"command": f"curl -H 'Authorization: token {secret}' x"})
    tool(repo, "Bash", tool_input={"command": "npm run build --prod"})
    tool(repo, "Bash", tool_input={"command": "echo 1 > out.txt"})
    rows = conn.execute("SELECT target FROM session_steps ORDER BY seq").fetchall()
    assert [r[0] for r in rows] == ["curl", "npm run", "echo -> out.txt"]


def test_an_ignored_read_is_not_a_step_and_the_full_packet_has_no_map(conn, enabled, repo):
    (repo / ".waymark.toml").write_text('[capture]\nignore_paths = ["secret"]\n')
    tool(repo, "Read", tool_input={"file_path": str(repo / "secret/keys.txt")})
    tool(repo, "Read", tool_input={"file_path": str(repo / "README.md")})
    assert [r[0] for r in conn.execute("SELECT target FROM session_steps")] == ["README.md"]
    start = payload("claude-code", "SessionStart", cwd=str(repo), session_id="w1")
    done = hook("SessionStart", start)
    assert b"This session so far" not in done.stdout
