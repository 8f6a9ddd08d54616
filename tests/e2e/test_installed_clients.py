"""`waymark install` into a real client's config, then a real session of that client: its
hooks fire through the installed commands and its MCP server answers as `waymark`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from waymark.storage import connection as db

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib
from waymark.installers import commands

from .conftest import tool_texts

MEMORY = "The zebra importer streams rows; never load the whole file"
WARNING = "billing.py: charge() must stay idempotent"


def waymark(env: dict[str, str], *args: str) -> dict:
    """Run the CLI as the user would, with the client's environment."""
    out = subprocess.run(
        [sys.executable, "-m", "waymark", *args, "--json"],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout)


def connect(client: str, project: Path, reports: list[dict]):
    """before_launch: install Waymark for `client` into the run's HOME and config dir, turn
    capture on for the run's project and give it one memory to recall."""

    def before_launch(run_dir: Path, env: dict[str, str]) -> None:
        reports.append(waymark(env, "install", "--client", client))
        waymark(env, "enable", "--project", str(project))
        waymark(env, "remember", "--project", str(project), "--type", "fact", "--content", MEMORY)

    return before_launch


def client_env(clients) -> dict[str, str]:
    env = {"WAYMARK_HOME": str(clients.home)}
    if os.environ.get("WAYMARK_EMBED_MODEL_DIR"):
        env["WAYMARK_EMBED_MODEL_DIR"] = os.environ["WAYMARK_EMBED_MODEL_DIR"]
    return env


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_an_installed_client_fires_waymarks_hooks_and_reaches_its_mcp_server(
    clients, client, tmp_path, monkeypatch
):
    name = {"claude": commands.CLAUDE, "codex": commands.CODEX}[client]
    run_dir = tmp_path / "run"
    reports: list[dict] = []
    extra = {"strict_mcp_config": False} if client == "claude" else {}
    result = clients.run(
        client,
        [
            {"shell": "echo waymark-e2e"},
            {"tool": "mcp__waymark__recall", "input": {"query": "zebra importer"}},
            {"text": "Done."},
        ],
        run_dir=run_dir,
        mcp_servers={},  # only what `waymark install` registered
        env=client_env(clients),
        before_launch=connect(name, run_dir / "project", reports),
        **extra,
    )
    assert {f["status"] for f in reports[0]["files"]} <= {"created", "updated"}

    # The MCP server, started from the installed entry, answered from the same data home
    # (for Codex that needs WAYMARK_HOME in env_vars).
    recalled = [t for t in tool_texts(result) if "zebra importer streams rows" in t]
    assert recalled, tool_texts(result)

    # The hooks ran through the installed commands: SessionStart opened the session,
    # PostToolUse saw the shell command, SessionEnd closed it; none logged an error.
    log = clients.home / "hooks.log"
    assert not log.exists(), log.read_text(encoding="utf-8")
    monkeypatch.setenv("WAYMARK_HOME", str(clients.home))
    conn = db.connect()
    rows = conn.execute("SELECT client, last_shell_at, ended_at FROM sessions").fetchall()
    conn.close()
    assert [(c, bool(shell), bool(end)) for c, shell, end in rows] == [(name, True, True)], rows

    # Uninstall takes every Waymark entry out of the client's config again.
    env = {**os.environ, "HOME": str(run_dir / "home"), "WAYMARK_HOME": str(clients.home)}
    if client == "claude":
        env["CLAUDE_CONFIG_DIR"] = str(run_dir / "claude-config")
    else:
        env["CODEX_HOME"] = str(run_dir / "codex-home")
    report = waymark(env, "uninstall")
    assert report["files"] and "unchanged" not in {f["status"] for f in report["files"]}
    for f in report["files"]:
        assert not has_waymark(Path(f["path"])), f


def test_installed_for_a_claude_code_that_calls_mcp_tools_the_server_answers_the_prompt(
    clients, tmp_path
):
    """The installer finds this Claude Code (2.1.118 or later) on PATH, so the prompt hook
    is also a call into the server; the real session's prompt gets its packet once."""
    from stub_llm import request_text

    from .conftest import NODE_MODULES

    run_dir = tmp_path / "run"
    reports: list[dict] = []
    install = connect(commands.CLAUDE, run_dir / "project", reports)

    def before_launch(run: Path, env: dict[str, str]) -> None:
        path = f"{Path(NODE_MODULES, '.bin')}{os.pathsep}{env.get('PATH', '')}"
        install(run, {**env, "PATH": path})
        (run / "project" / "src").mkdir(exist_ok=True)
        (run / "project" / "src" / "billing.py").write_text("def charge(): ...\n", "utf-8")
        waymark(env, "remember", "--project", str(run / "project"), "--type", "warning",
                "--content", WARNING, "--target", str(run / "project" / "src" / "billing.py"))  # fmt: skip

    result = clients.run(
        "claude", [{"text": "Done."}], run_dir=run_dir, mcp_servers={},
        env=client_env(clients), before_launch=before_launch, strict_mcp_config=False,
        prompt="Fix src/billing.py please", extra_args=["--debug"],
    )  # fmt: skip
    settings = json.loads((run_dir / "claude-config" / "settings.json").read_text("utf-8"))
    (group,) = settings["hooks"]["UserPromptSubmit"]
    assert [h["type"] for h in group["hooks"]] == ["command", "mcp_tool"]
    # This Claude Code takes `args`: every hook starts Python itself, no shell in between,
    # and they ran (the session the exec-form SessionStart opened, its end recorded).
    (start,) = settings["hooks"]["SessionStart"][0]["hooks"]
    assert start["args"][-1] == "claude-code" and "-c" in start["args"], start
    conn = db.connect(str(clients.home / "waymark.db"))
    opened = conn.execute("SELECT client, ended_at FROM sessions").fetchall()
    conn.close()
    assert [(c, bool(e)) for c, e in opened] == [("claude-code", True)], opened
    first = request_text(result.main_requests[0])
    assert WARNING in first and first.count("UserPromptSubmit hook additional context") == 1
    (debug,) = (run_dir / "claude-config" / "debug").glob("*.txt")
    assert "mcp_tool calling waymark/hook" in debug.read_text(encoding="utf-8", errors="replace")


def has_waymark(path: Path) -> bool:
    """Whether a client config still holds a Waymark hook, MCP server or notify program."""
    if not path.exists():
        return False
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        doc = tomllib.loads(text)
        return "waymark" in doc.get("mcp_servers", {}) or commands.is_waymark_notify(
            doc.get("notify")
        )
    doc = json.loads(text)
    hooks = [h for groups in doc.get("hooks", {}).values() for g in groups for h in g["hooks"]]
    return "waymark" in doc.get("mcpServers", {}) or any(map(commands.is_ours, hooks))


def trust_with_our_hash(run_dir: Path) -> None:
    """Trust Waymark's Codex hooks as `/hooks` would, with the hash doctor computes."""
    from waymark.installers.checks import trust_hash

    hooks_file = run_dir / "codex-home" / "hooks.json"
    doc = json.loads(hooks_file.read_text(encoding="utf-8"))
    lines = []
    for event, groups in doc["hooks"].items():
        for i, group in enumerate(groups):
            for j, handler in enumerate(group["hooks"]):
                snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in event).lstrip("_")
                lines.append(f'\n[hooks.state."{hooks_file}:{snake}:{i}:{j}"]\n'
                             f'trusted_hash = "{trust_hash(event, group, handler)}"\n')  # fmt: skip
    config = run_dir / "codex-home" / "config.toml"
    config.write_text(config.read_text(encoding="utf-8") + "".join(lines), encoding="utf-8")


@pytest.mark.parametrize("trusted", [True, False])
def test_real_codex_runs_waymarks_hooks_only_when_trusted_with_doctors_hash(
    clients, tmp_path, monkeypatch, trusted
):
    run_dir = tmp_path / "run"
    reports: list[dict] = []
    install = connect(commands.CODEX, run_dir / "project", reports)

    def before_launch(run: Path, env: dict[str, str]) -> None:
        install(run, env)
        if trusted:
            trust_with_our_hash(run)

    clients.run(
        "codex",
        [{"shell": "echo waymark-trust"}, {"text": "Done."}],
        run_dir=run_dir,
        mcp_servers={},
        env={**client_env(clients), "WAYMARK_HOOK_TIMING": "1"},  # a log line per hook run
        before_launch=before_launch,
        bypass_hook_trust=False,
    )
    log = clients.home / "hooks.log"
    ran = log.read_text(encoding="utf-8") if log.exists() else ""
    assert ("SessionStart" in ran and "PostToolUse" in ran) is trusted, ran  # untrusted: none
    # Doctor tells: a session Codex started (its own rollout files say so) ran no hook.
    env = {**os.environ, "HOME": str(run_dir / "home"), "WAYMARK_HOME": str(clients.home),
           "CODEX_HOME": str(run_dir / "codex-home")}  # fmt: skip
    out = subprocess.run([sys.executable, "-m", "waymark", "doctor", "--json"], env=env,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    said = {f["check"]: f for f in json.loads(out.stdout)["findings"]}["codex hooks fired"]
    if trusted:
        assert said["status"] == "ok", said
    else:
        assert said["status"] == "warn"
        assert "though codex started a session at" in said["detail"], said


def test_codexs_own_memories_get_waymarks_decisions_and_the_packet_does_not_repeat_them(
    clients, tmp_path
):
    """Codex with its memories on: Waymark's extension folder holds the project's decisions
    (`export --to codex-memories`); one Codex's summary already carries (as its consolidation
    keeps it, cited `waymark:<id>`) reaches the model there and not again in Waymark's packet;
    the folder outlives Codex's own start-up work on its memories."""
    from stub_llm import request_text

    run_dir = tmp_path / "run"
    project, home = run_dir / "project", run_dir / "codex-home"
    ids: dict[str, str] = {}

    def before_launch(run: Path, env: dict[str, str]) -> None:
        waymark(env, "install", "--client", commands.CODEX)
        waymark(env, "enable", "--project", str(project))
        for key, text in (("carried", "We chose SQLite over Postgres for the store"),
                          ("fresh", "We render the charts on the server as SVG")):  # fmt: skip
            ids[key] = waymark(env, "remember", "--project", str(project), "--type", "decision",
                               "--content", text)["memory"]["id"]  # fmt: skip
        waymark(env, "config", "codex.memories_extension", "true")
        written = waymark(env, "export", "--to", "codex-memories", "--project", str(project))
        assert len(written["written"]) == 1, written
        (home / "memories" / "memory_summary.md").write_text(
            f"v1\n\n- The store is SQLite, not Postgres (waymark:{ids['carried']})\n", "utf-8"
        )

    result = clients.run(
        "codex", [{"text": "Done."}], run_dir=run_dir, mcp_servers={},
        env=client_env(clients), before_launch=before_launch, features={"memories": True},
    )  # fmt: skip
    first = request_text(result.main_requests[0])
    assert f"waymark:{ids['carried']}" in first  # Codex put its summary in front of the model
    opening = '<waymark-memory kind=\\"session-start\\">'  # the request is JSON text
    packet = first.split(opening, 1)[1].split("</waymark-memory>")[0]
    assert ids["fresh"] in packet and ids["carried"] not in packet
    folder = home / "memories" / "extensions" / "waymark"
    (resource,) = (folder / "resources").iterdir()
    text = resource.read_text("utf-8")
    assert f"(waymark:{ids['carried']})" in text and f"(waymark:{ids['fresh']})" in text
    assert (folder / "instructions.md").is_file()


def test_real_codex_whose_hooks_did_not_run_gets_the_start_packet_from_the_first_tool_call(
    clients, tmp_path
):
    """`codex exec` with Waymark's hooks not trusted runs none of them, without a word: the
    MCP server gives the session's start packet (the handoff's next action) beside its first
    tool answer, and only there."""
    run_dir = tmp_path / "run"
    project = run_dir / "project"
    install = connect(commands.CODEX, project, [])

    def before_launch(run: Path, env: dict[str, str]) -> None:
        install(run, env)
        waymark(env, "checkpoint", "create", "--project", str(project), "--objective",
                "Port the zebra importer", "--next-action", "run tests/test_zebra.py")  # fmt: skip

    result = clients.run(
        "codex",
        [{"tool": "mcp__waymark__recall", "input": {"query": "zebra importer"}},
         {"tool": "mcp__waymark__recall", "input": {"query": "streams rows"}},
         {"text": "Done."}],
        run_dir=run_dir, mcp_servers={}, env=client_env(clients),
        before_launch=before_launch, bypass_hook_trust=False,
    )  # fmt: skip
    log = clients.home / "hooks.log"
    assert not (log.exists() and "SessionStart" in log.read_text(encoding="utf-8"))
    texts = tool_texts(result)
    # the answer's field, in one answer (each request repeats the earlier answers)
    given = sorted({t for t in texts if '"session_start"' in t})
    assert len(given) == 1 and len(set(texts)) == 2, texts
    packet = given[0].split('"session_start":"', 1)[1]
    assert packet.startswith("<waymark-memory") and "run tests/test_zebra.py" in packet
    assert "zebra importer streams rows" in " ".join(texts)  # the answers themselves
