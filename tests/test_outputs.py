"""Verbose shell output kept out of the context (opt-in): the model sees head, error lines and
tail; the whole output is stored redacted, owner-only, for keep_days; retrievable by id."""

from __future__ import annotations

import json

from conftest import call_tool
from test_hooks import hook, payload
from waymark.cli import main

SECRET = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"


def long_output() -> str:
    lines = [f"collecting test_{i:04d} ... ok" for i in range(600)]
    lines[300] = "E   AssertionError: refund total 1999 != 2000"
    lines[310] = f"token={SECRET}"
    return "\n".join(lines) + "\n"


def run_bash(repo, stdout, client="claude-code", session="o1"):
    data = payload(client, "PostToolUse-bash", cwd=str(repo), session_id=session)
    data["tool_input"] = {"command": "pytest -v tests"}
    if client == "codex":
        data["tool_response"] = stdout
    else:
        data["tool_response"] = {"stdout": stdout, "stderr": "", "interrupted": False}
    return hook("PostToolUse", data, client)


def opt_in(repo, over=8000, keep=7):
    (repo / ".waymark.toml").write_text(f"[output]\ntrim_over = {over}\nkeep_days = {keep}\n")


def test_a_long_output_is_trimmed_for_the_model_and_kept_whole_redacted(
    conn, enabled, repo, capsys, monkeypatch
):
    opt_in(repo)
    text = long_output()
    done = run_bash(repo, text)
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PostToolUse"
    shown = out["updatedToolOutput"]
    assert shown["interrupted"] is False and shown["stderr"] == ""  # the rest as it was
    view = shown["stdout"]
    assert len(view) < 8000 < len(text)
    assert "collecting test_0000" in view and "collecting test_0599" in view  # head, tail
    assert "AssertionError: refund total 1999 != 2000" in view  # an error line from between
    assert "collecting test_0200" not in view
    output_id = view.rsplit("is ", 1)[1].split(":", 1)[0]
    assert output_id.startswith("out_")
    monkeypatch.chdir(repo)
    assert main(["output", output_id]) == 0
    whole = capsys.readouterr().out
    assert "collecting test_0200" in whole and SECRET not in whole
    row = conn.execute("SELECT chars, shown_chars, expires_at, at FROM tool_outputs").fetchone()
    assert row[0] == len(text) and row[1] == len(view) and row[2] > row[3]


def test_trimming_is_off_unless_the_project_asks_and_never_for_codex(conn, enabled, repo):
    assert run_bash(repo, long_output()).stdout == b""  # no [output]: the model sees it all
    opt_in(repo)
    assert run_bash(repo, "short\n").stdout == b""
    assert run_bash(repo, long_output(), client="codex").stdout == b""  # Codex ignores it
    assert conn.execute("SELECT count(*) FROM tool_outputs").fetchone()[0] == 0


def test_an_expired_output_is_gone_and_says_so(conn, enabled, repo, capsys, monkeypatch):
    opt_in(repo, keep=1)
    view = json.loads(run_bash(repo, long_output()).stdout)["hookSpecificOutput"]
    output_id = view["updatedToolOutput"]["stdout"].rsplit("is ", 1)[1].split(":", 1)[0]
    conn.execute("UPDATE tool_outputs SET expires_at = '2000-01-01T00:00:00.000Z'")
    monkeypatch.chdir(repo)
    assert main(["output", output_id, "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["code"] == "not_found"
    run_bash(repo, long_output(), session="o2")  # the next store drops what expired
    assert conn.execute("SELECT count(*) FROM tool_outputs").fetchone()[0] == 1


def test_a_bad_output_table_is_a_clear_error_in_the_log_and_the_output_untouched(
    conn, enabled, repo
):
    (repo / ".waymark.toml").write_text('[output]\ntrim_over = "big"\n')
    done = run_bash(repo, long_output())
    assert done.returncode == 0 and done.stdout == b""
    from waymark import home

    log = (__import__("pathlib").Path(home.data_home()) / "hooks.log").read_text()
    assert "[output] trim_over must be a whole number" in log


def test_the_mcp_recall_tool_returns_a_trimmed_output_by_its_id(conn, enabled, repo):
    opt_in(repo)
    view = json.loads(run_bash(repo, long_output()).stdout)["hookSpecificOutput"]
    output_id = view["updatedToolOutput"]["stdout"].rsplit("is ", 1)[1].split(":", 1)[0]
    result = call_tool(repo, "recall", {"id": output_id})
    assert not result.is_error, result.content
    got = result.structured_content["output"]
    assert got["id"] == output_id and "collecting test_0200" in got["output"]
    assert SECRET not in got["output"]


def test_an_output_past_64_kib_is_stored_whole_and_redacted_and_read_in_pages(conn, enabled, repo):
    opt_in(repo)
    lines = [f"line {i:06d} of a very long build log" for i in range(6000)]
    lines[5500] = f"export GITHUB_TOKEN={SECRET}"
    text = "\n".join(lines) + "\n"
    assert len(text) > 200_000
    view = json.loads(run_bash(repo, text).stdout)["hookSpecificOutput"]
    shown = view["updatedToolOutput"]["stdout"]
    output_id = shown.split("The whole output, redacted, is ", 1)[1].split(":", 1)[0]
    assert "Claude Code keeps at most 30,000 characters" in shown
    (stored,) = conn.execute("SELECT output FROM tool_outputs").fetchone()
    assert "line 005999 of a very long build log" in stored  # the end too: nothing cut
    assert SECRET not in stored and "[REDACTED" in stored
    pages, offset = [], 0
    while offset is not None:
        result = call_tool(repo, "recall", {"id": output_id, "offset": offset})
        got = result.structured_content["output"]
        assert len(got["output"]) <= 16_000
        pages.append(got["output"])
        offset = got["next_offset"]
    assert "".join(pages) == stored and len(pages) > 10


def test_the_view_names_claude_codes_own_copy_when_the_output_says_where_it_is(conn, enabled, repo):
    opt_in(repo)
    saved = "/home/u/.claude/projects/p/s/tool-results/abc.txt"
    text = long_output() + f"<persisted-output>Output too large. Full output saved to: {saved}\n"
    shown = json.loads(run_bash(repo, text).stdout)["hookSpecificOutput"]["updatedToolOutput"]
    assert f"its own full copy: {saved}" in shown["stdout"]
