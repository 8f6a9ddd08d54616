"""Speak to an MCP server as a client does: start it, open the connection the way that
client opens it, list the tools and call them, each step within the time the client waits.

`waymark doctor` runs this against the server each installed client's configuration starts,
so a break the client would hit (a refused handshake, a tool call rejected, a server too
slow to start) is a FAIL with the server's own error, not a healthy report. Standard library
only: it must work when the server it checks cannot even import its SDK.

The sequences, as captured from the clients (stdio, newline-delimited JSON-RPC):
- Claude Code 2.1.332: `server/discover` with the 2026-07-28 envelope; on an error, or no
  answer within about 3 s, the handshake (`initialize` at 2025-11-25,
  `notifications/initialized`), then `tools/list`; a discover answered in time moves it to the
  2026-07-28 era instead, every request carrying the envelope. Its prompt hook calls the
  hidden `hook` tool.
- Codex 0.171: `initialize` at 2025-06-18 (10 s to answer: `startup_timeout_sec`), then
  `tools/list`, then the tool calls (60 s each: `tool_timeout_sec`).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

DISCOVER = "server/discover"
MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
TOOLS = ("recall", "remember", "checkpoint", "forget", "status")


@dataclass(frozen=True)
class Client:
    """How one client opens a connection and how long it waits at each step."""

    name: str
    protocol: str  # the handshake version its `initialize` asks for
    probe_s: float | None = None  # server/discover first, waited for this long; None: no probe
    connect_s: float = 30.0  # initialize answered within
    call_s: float = 60.0  # each tools/list and tools/call answered within
    hook_tool: bool = False  # its prompt hook calls the hidden `hook` tool
    capabilities: dict[str, Any] = field(default_factory=dict)


CLIENTS = {
    "claude-code": Client(
        "claude-code",
        "2025-11-25",
        probe_s=3.0,
        connect_s=30.0,  # MCP_TIMEOUT's default
        hook_tool=True,
        capabilities={"roots": {"listChanged": True}, "elicitation": {"form": {}, "url": {}}},
    ),
    "codex": Client("codex", "2025-06-18", connect_s=10.0, capabilities={"elicitation": {}}),
    "opencode": Client("opencode", "2025-06-18", connect_s=30.0),
}


@dataclass
class Step:
    name: str
    ok: bool
    ms: float  # the step's own time
    detail: str = ""
    at: float = 0.0  # ms from the server's start to the step's end


@dataclass
class Report:
    client: str
    steps: list[Step]
    era: str = "handshake"  # or MODERN, where the server answered the probe
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return all(step.ok for step in self.steps)

    @property
    def failed(self) -> Step | None:
        return next((step for step in self.steps if not step.ok), None)

    def summary(self) -> str:
        """One line: each step and its time, or the step that failed and why."""
        bad = self.failed
        if bad is not None:
            tail = f"; the server said on stderr: {self.stderr[-300:]}" if self.stderr else ""
            return f"{bad.name} failed after {bad.ms:.0f} ms: {bad.detail}{tail}"
        return ", ".join(f"{s.name} {s.ms:.0f} ms" for s in self.steps if s.name != DISCOVER)


class Speaker:
    """One server process and the messages it writes, read on a thread of their own."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: str) -> None:
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._errors,
            env=env,
            cwd=cwd,
        )
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.early: dict[Any, dict[str, Any]] = {}  # answers that came while another was awaited
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                message = {"unparsed": line.decode("utf-8", "replace")[:300]}
            self.inbox.put(message if isinstance(message, dict) else {"unparsed": str(message)})
        self.inbox.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None, wait_s: float) -> Any:
        """The answer to one request: its `result`, or raises Refused (an error answer, a
        line that is not JSON) or TimeoutError (no answer within `wait_s`)."""
        self.next_id += 1
        rid = f"waymark-doctor-{self.next_id}"
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        deadline = time.monotonic() + wait_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer to {method} within {wait_s:g} s")
            try:
                reply = self.inbox.get(timeout=left)
            except queue.Empty:
                continue
            if reply is None:
                raise Refused(f"the server closed its output (exit {self.proc.poll()})")
            if "unparsed" in reply:
                raise Refused(f"a line that is not JSON-RPC on stdout: {reply['unparsed']!r}")
            if reply.get("id") != rid:
                continue  # a notification, or a late answer to an abandoned probe
            if "error" in reply:
                raise Refused(json.dumps(reply["error"], ensure_ascii=False)[:500])
            return reply.get("result")

    def close(self) -> str:
        """End the server as a client does (close its stdin) and return what it wrote on
        stderr."""
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._errors.seek(0)
        text = self._errors.read().decode("utf-8", "replace")
        self._errors.close()
        return text.strip()


def since(start: float) -> float:
    """Milliseconds since `start` (time.monotonic)."""
    return 1000 * (time.monotonic() - start)


class Refused(Exception):
    """The server answered with an error, or broke the protocol."""


def speak(
    client: str | Client,
    argv: list[str],
    env: dict[str, str],
    cwd: str | None = None,
    *,
    connect_s: float | None = None,
    call_s: float | None = None,
) -> Report:
    """Start `argv` as `client` (a name of CLIENTS, or a Client) starts its MCP server and
    speak to it as that client does. `connect_s` / `call_s` override the client's waits
    (Codex's are configurable)."""
    spec = client if isinstance(client, Client) else CLIENTS[client]
    connect_s = spec.connect_s if connect_s is None else connect_s
    call_s = spec.call_s if call_s is None else call_s
    report = Report(spec.name, [])
    began = time.monotonic()
    try:
        speaker = Speaker(argv, env, cwd or os.getcwd())
    except OSError as exc:
        report.steps.append(Step("start", False, 0.0, f"cannot start {argv[0]!r}: {exc}"))
        return report
    talk = _Talk(spec, speaker, report, began, call_s)
    try:
        talk.connect(connect_s)
        talk.check_tools()
        talk.call("status", {})
        if spec.hook_tool:
            where = tempfile.gettempdir()  # no project there: the call writes nothing
            prompt = {"event": "UserPromptSubmit", "prompt": "waymark doctor",
                      "session_id": f"waymark-doctor-{os.getpid()}", "prompt_id": "", "cwd": where,
                      "agent_id": ""}  # fmt: skip
            talk.call("hook", prompt)
    except (Refused, TimeoutError, OSError):
        pass
    finally:
        report.stderr = speaker.close()
    return report


class _Talk:
    """One conversation of `speak`: each step timed into the report, in the era the server
    chose (the probe's envelope on every request once it answered the 2026-07-28 era)."""

    def __init__(
        self, spec: Client, speaker: Speaker, report: Report, began: float, call_s: float
    ) -> None:
        self.spec, self.speaker, self.report = spec, speaker, report
        self.began, self.call_s = began, call_s
        self.envelope: dict[str, Any] | None = None
        self.info = {"name": f"waymark-doctor-as-{spec.name}", "version": "1"}

    def step(self, name: str, method: str, params: dict[str, Any] | None, wait_s: float) -> Any:
        started = time.monotonic()
        if self.envelope is not None:
            meta = {**(params or {}).get("_meta", {}), **self.envelope}
            params = {**(params or {}), "_meta": meta}
        try:
            result = self.speaker.request(method, params, wait_s)
            if isinstance(result, dict) and result.get("isError"):  # the tool's own failure
                texts = [c.get("text", "") for c in result.get("content") or []
                         if isinstance(c, dict)]  # fmt: skip
                raise Refused(f"the tool answered an error: {' '.join(texts)[:500]}")
        except (Refused, TimeoutError, OSError) as exc:
            self.report.steps.append(Step(name, False, since(started), str(exc), since(self.began)))
            raise
        self.report.steps.append(Step(name, True, since(started), at=since(self.began)))
        return result

    def call(self, tool: str, arguments: dict[str, Any]) -> None:
        self.step(f"tools/call {tool}", "tools/call", {"name": tool, "arguments": arguments},
                  self.call_s)  # fmt: skip

    def connect(self, connect_s: float) -> None:
        """The client's probe (where it sends one), else the legacy handshake."""
        spec = self.spec
        if spec.probe_s is not None:
            probe = {VERSION_KEY: MODERN, "io.modelcontextprotocol/clientInfo": self.info,
                     "io.modelcontextprotocol/clientCapabilities": spec.capabilities}  # fmt: skip
            started = time.monotonic()
            try:
                found = self.speaker.request(DISCOVER, {"_meta": probe}, spec.probe_s)
            except (Refused, TimeoutError) as exc:  # the client falls back to the handshake
                found, detail = None, str(exc)
            else:
                detail = "answered: the 2026-07-28 era"
            self.report.steps.append(
                Step(DISCOVER, True, since(started), detail, since(self.began))
            )
            if isinstance(found, dict) and MODERN in (found.get("supportedVersions") or ()):
                self.envelope, self.report.era = probe, MODERN
        if self.envelope is None:
            hello = {"protocolVersion": spec.protocol, "capabilities": spec.capabilities,
                     "clientInfo": self.info}  # fmt: skip
            left = max(0.1, connect_s - (time.monotonic() - self.began))
            self.step("initialize", "initialize", hello, left)
            self.speaker.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def check_tools(self) -> None:
        """tools/list, and every one of Waymark's tools in it."""
        listed = self.step("tools/list", "tools/list", None, self.call_s)
        names = {t.get("name") for t in (listed or {}).get("tools", []) if isinstance(t, dict)}
        missing = [name for name in TOOLS if name not in names]
        if missing:
            last = self.report.steps[-1]
            self.report.steps[-1] = Step(
                last.name, False, last.ms, f"Waymark's tools missing: {missing}"
            )
            raise Refused("tools missing")
