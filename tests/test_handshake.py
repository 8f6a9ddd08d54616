"""A client that probes `server/discover` and then initializes (Claude Code does) gets one
protocol era however late the server starts, and `waymark doctor` speaks to the installed
server as each client does, failing with the server's own error when a step breaks."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap

import pytest

from waymark.health import handshake
from waymark.server import front

posix_only = pytest.mark.skipif(os.name != "posix", reason="the front needs POSIX pipes")

# Claude Code's sequence with its ~3 s probe wait made 0.5 s, and servers made late by more
# than that: the shape of a busy machine, in a fast test.
CLAUDE = dataclasses.replace(handshake.CLIENTS["claude-code"], probe_s=0.5)
LATE_S = 1.5


def server_argv(late: str) -> list[str]:
    """`waymark mcp` as a client starts it; `late`: nothing, the whole process late (a
    wrapper, ten servers starting at once), or only the SDK late (the front up at once)."""
    if late == "process":
        code = (f"import os, sys, time; time.sleep({LATE_S}); "
                "os.execv(sys.executable, [sys.executable, '-m', 'waymark', 'mcp'])")  # fmt: skip
        return [sys.executable, "-c", code]
    if late == "sdk":
        code = textwrap.dedent(f"""
            import sys, time
            class Slow:
                def find_spec(self, name, path=None, target=None):
                    if name == "waymark.server.app":
                        time.sleep({LATE_S})
                    return None
            sys.meta_path.insert(0, Slow())
            from waymark.server import front
            sys.exit(front.main())
        """)
        return [sys.executable, "-c", code]
    return [sys.executable, "-m", "waymark", "mcp"]


@pytest.mark.parametrize(
    ("late", "direct"),
    [("none", False), ("process", False), ("sdk", False), ("none", True), ("process", True)],
)
def test_a_probing_client_works_however_late_the_server_starts(tmp_path, late, direct):
    env = {**os.environ, "WAYMARK_HOME": str(tmp_path / "home")}
    if direct:
        env[front.DIRECT_ENV] = "1"  # no front: Windows, or by choice
    report = handshake.speak(CLAUDE, server_argv(late), env, str(tmp_path))
    assert report.ok, report.summary() + "\n" + report.stderr
    assert report.era == "handshake"
    names = [step.name for step in report.steps]
    assert names == ["server/discover", "initialize", "tools/list", "tools/call status",
                     "tools/call hook"]  # fmt: skip
    if late == "none" and not direct:  # the front refuses the probe at once
        assert "Method not found" in report.steps[0].detail
        assert report.steps[0].ms < 1000


@posix_only
def test_the_front_refuses_the_probe_exactly_as_the_sdk_does(tmp_path):
    probe = {"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {"_meta": {
        handshake.VERSION_KEY: handshake.MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}}}  # fmt: skip
    answers = []
    for direct in (False, True):
        env = {**os.environ, "WAYMARK_HOME": str(tmp_path / "home")}
        if direct:
            env[front.DIRECT_ENV] = "1"
        done = subprocess.run(
            [sys.executable, "-m", "waymark", "mcp"],
            input=json.dumps(probe).encode() + b"\n",
            capture_output=True,
            env=env,
            cwd=tmp_path,
            timeout=60,
        )
        answers.append(json.loads(done.stdout.splitlines()[0]))
    assert answers[0] == answers[1] == {"jsonrpc": "2.0", "id": 7, "error": front.DISCOVER_REFUSED}


def test_codex_opens_with_the_handshake_and_calls_a_tool(tmp_path):
    env = {**os.environ, "WAYMARK_HOME": str(tmp_path / "home")}
    report = handshake.speak("codex", server_argv("none"), env, str(tmp_path))
    assert report.ok, report.summary()
    assert [s.name for s in report.steps] == ["initialize", "tools/list", "tools/call status"]


STAND_IN = '''#!{python}
"""An incompatible MCP server: it answers the handshake and refuses every tool call, as
Waymark's server did when the SDK had locked the connection to the other era."""
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        r = {{"result": {{"protocolVersion": m["params"]["protocolVersion"], "capabilities": {{}},
                        "serverInfo": {{"name": "waymark", "version": "0"}}}}}}
    elif m["method"] == "tools/list":
        r = {{"result": {{"tools": [{{"name": n, "inputSchema": {{"type": "object"}}}}
                                  for n in ("recall", "remember", "checkpoint", "forget", "status")]}}}}
    else:
        r = {{"error": {{"code": -32602, "message": "params._meta is missing the required envelope"}}}}
    print(json.dumps({{"jsonrpc": "2.0", "id": m["id"], **r}}), flush=True)
'''


def test_doctor_fails_with_the_servers_own_error_when_tool_calls_are_refused(
    tmp_path, monkeypatch, capsys
):
    from waymark.installers import install

    from waymark.cli import main
    from waymark.storage import connection as db

    user = tmp_path / "user"
    (user / ".claude").mkdir(parents=True)
    (user / ".codex").mkdir()
    monkeypatch.setenv("HOME", str(user))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    db.connect().close()
    install(["claude-code", "codex"])

    def doctor() -> dict:
        main(["doctor", "--json"])
        return {f["check"]: f for f in json.loads(capsys.readouterr().out)["findings"]}

    found = doctor()
    for client in ("claude-code", "codex"):
        assert found[f"{client} mcp"]["status"] == "ok", found[f"{client} mcp"]
        assert "tools/call status" in found[f"{client} mcp"]["detail"]
    assert "tools/call hook" in found["claude-code mcp"]["detail"]

    stand_in = tmp_path / "stand-in"
    stand_in.write_text(STAND_IN.format(python=sys.executable), encoding="utf-8")
    stand_in.chmod(0o755)
    config = user / ".claude.json"
    data = json.loads(config.read_text(encoding="utf-8"))
    data["mcpServers"]["waymark"] = {"command": str(stand_in), "args": []}
    config.write_text(json.dumps(data), encoding="utf-8")
    found = doctor()
    broken = found["claude-code mcp"]
    assert broken["status"] == "fail"
    assert "tools/call status failed" in broken["detail"]
    assert "params._meta is missing the required envelope" in broken["detail"]
    assert found["codex mcp"]["status"] == "ok"
