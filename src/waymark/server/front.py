"""The MCP server's first answers, before its heavy imports.

Importing the MCP SDK and pydantic costs `waymark mcp` about 0.8 s, and Codex sends its first
request about a second after starting a server without waiting for it: a first-turn tool
call then finds no Waymark tools. So `waymark mcp` starts here, on the standard library: it
answers `initialize` and `tools/list` at once from `handshake.json` (what the real server
answers, recorded by `python -m waymark.server.front --record` and checked against the live
server by the tests), and hands every other message to the real server, which loads on this
process's main thread meanwhile. A tool call that arrives early waits for it; none is lost.

The real server reads stdin and writes stdout as usual, but both are pipes to this module's
two threads: one passes the client's messages in (replaying `initialize` under an id of its
own, so the real server is initialized exactly as the client asked), the other passes the
server's messages out, dropping the reply to the replay. Anything unexpected (no recording,
another SDK version, a handshake it does not know) and the real server answers everything
itself, as it did before this module existed.

One era of the protocol, whatever the speed. The 2026-07-28 protocol opens with
`server/discover` and carries an envelope on every request; the handshake era opens with
`initialize`. A client such as Claude Code probes `server/discover`, waits about 3 s, then
initializes. Waymark serves the handshake era only (`sdk.Server.run_stdio_async`, the SDK's own
handshake loop), so `server/discover` is refused with the SDK's own answer to it, method not
found, and the front gives that answer at once: the client initializes without waiting, and a
server that starts late (a busy machine, a wrapper) sees the same era as one that starts at
once. The refusal needs no recording, so the front gives it in every mode.

Two things the SDK's stdio transport does not do, the front always does (with or without a
recording): a line that is not JSON gets a JSON-RPC parse error (-32700) instead of
silence, and a request the client sent just before closing its end is answered before the
server sees the end of input (the SDK would cancel it), within END_WAIT_S.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading

HANDSHAKE = os.path.join(os.path.dirname(os.path.realpath(__file__)), "handshake.json")
REPLAY_ID = "waymark-front-initialize"
DIRECT_ENV = "WAYMARK_MCP_DIRECT"  # set: no front, the real server answers everything
END = b"\x00waymark-front-end\n"  # not JSON: no server message can look like it
END_WAIT_S = 30.0  # at end of input, how long requests still in flight may take
PARSE_ERROR = -32700
METHOD_NOT_FOUND = -32601
DISCOVER = "server/discover"  # the 2026-07-28 era's opening request, refused (see above)


def main() -> int:
    if sys.stdin is not None and sys.stdin.isatty():
        print(
            "waymark mcp: the MCP server, waiting for an MCP client on stdin (Claude Code and "
            "Codex start it themselves); Ctrl-D or Ctrl-C to leave",
            file=sys.stderr,
        )
    front = None
    if os.name == "posix" and not os.environ.get(DIRECT_ENV):
        front = Front(_recorded())
        front.start()
    try:
        from waymark.server.app import main as serve
    except BaseException as exc:  # a broken install: say so and leave, never hang
        print(f"waymark mcp: cannot start the server: {exc!r}", file=sys.stderr)
        os._exit(1)
    return serve(before_exit=front.finish if front is not None else None)


def _recorded() -> dict | None:
    """The recorded handshake, if it is this Waymark's and this MCP SDK's."""
    try:
        with open(HANDSHAKE, encoding="utf-8") as f:
            recorded = json.load(f)
        from importlib.metadata import version

        from waymark import __version__
    except (OSError, ValueError, ImportError):
        return None
    try:
        same = (recorded["waymark"], recorded["mcp"]) == (__version__, version("mcp"))
    except Exception:  # a broken install: the real server says what is wrong
        return None
    return recorded if same else None


class Front:
    """Stands between the client's stdio and the real server's, from before it exists."""

    def __init__(self, recorded: dict | None) -> None:
        recorded = recorded or {"initialize": {}, "tools": {}, "latest": ""}
        self.initialize: dict = recorded["initialize"]  # protocol version -> result
        self.tools: dict = recorded["tools"]  # protocol version -> tools/list result
        self.latest: str = recorded["latest"]
        self.version: str | None = None  # negotiated; None until the client's initialize
        # No recording, or a handshake we do not know: the real server answers all.
        self.passthrough = not self.initialize
        self.lock = threading.Lock()
        self.pending: set = set()  # ids of the client's requests the server has not answered
        self.answered = threading.Condition()
        # The client's stdin and stdout, kept; the real server gets a pipe at each.
        self.client_in = os.dup(0)
        self.client_out = os.dup(1)
        server_in, self.to_server = os.pipe()
        self.from_server, server_out = os.pipe()
        os.dup2(server_in, 0)
        os.dup2(server_out, 1)
        os.close(server_in)
        # Kept to say "done": the SDK holds copies of the server's stdout of its own, so the
        # pipe would never reach its end when the server stops.
        self.server_out = server_out

    def start(self) -> None:
        threading.Thread(target=self._pump_in, name="waymark-front-in", daemon=True).start()
        # Not a daemon: the server's last replies must reach the client before the exit.
        self.out = threading.Thread(target=self._pump_out, name="waymark-front-out")
        self.out.start()

    def finish(self) -> None:
        """The server is done: let its last output through."""
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        _write_all(self.server_out, END)  # after everything the server wrote
        self.out.join(timeout=5)

    def _pump_in(self) -> None:
        with open(self.client_in, "rb", buffering=0) as client:
            for line in _lines(client):
                self._from_client(line)
        with self.answered:  # the client left: its last requests are answered first
            self.answered.wait_for(lambda: not self.pending, timeout=END_WAIT_S)
        os.close(self.to_server)  # then the server sees EOF and exits

    def _from_client(self, line: bytes) -> None:
        message = _parse(line)
        if message is None and line.strip():
            error = {"code": PARSE_ERROR, "message": "Parse error: a message is one JSON object"}
            self._to_client({"jsonrpc": "2.0", "id": None, "error": error})
            return
        if message is not None and "method" in message and message.get("id") is not None:
            if message["method"] == DISCOVER:
                self._to_client({"jsonrpc": "2.0", "id": message["id"], "error": DISCOVER_REFUSED})
                return
            with self.answered:
                self.pending.add(_key(message["id"]))
        if message is not None and not self.passthrough:
            method = message.get("method")
            if method == "initialize" and "id" in message and self.version is None:
                result = self._initialized(message)
                if result is not None:
                    self._done(message["id"])
                    self._to_client({"jsonrpc": "2.0", "id": message["id"], "result": result})
                    replay = {**message, "id": REPLAY_ID}
                    _write_all(self.to_server, json.dumps(replay).encode() + b"\n")
                    return
                self.passthrough = True
            elif (
                method == "tools/list"
                and "id" in message
                and self.version is not None
                and not (message.get("params") or {}).get("cursor")
            ):
                result = self.tools[self.version]
                self._done(message["id"])
                self._to_client({"jsonrpc": "2.0", "id": message["id"], "result": result})
                return
        _write_all(self.to_server, line)

    def _initialized(self, message: dict) -> dict | None:
        params = message.get("params") or {}
        if not isinstance(params, dict) or "io.modelcontextprotocol/protocolVersion" in (
            params.get("_meta") or {}
        ):
            return None  # a modern envelope: the SDK negotiates those itself
        requested = params.get("protocolVersion")
        version = requested if requested in self.initialize else self.latest
        if version not in self.tools:
            return None
        self.version = version
        return self.initialize[version]

    def _pump_out(self) -> None:
        with open(self.from_server, "rb", buffering=0) as server:
            for line in _lines(server):
                if line == END:
                    return
                message = _parse(line)
                if message is not None and message.get("id") == REPLAY_ID:
                    continue  # the client already has its answer
                with self.lock:
                    _write_all(self.client_out, line)
                if message is not None and "method" not in message and "id" in message:
                    self._done(message["id"])

    def _done(self, request_id: object) -> None:
        with self.answered:
            self.pending.discard(_key(request_id))
            self.answered.notify_all()

    def _to_client(self, message: dict) -> None:
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        with self.lock:
            _write_all(self.client_out, data)


# What the SDK's handshake loop answers `server/discover` (tested against it).
DISCOVER_REFUSED = {"code": METHOD_NOT_FOUND, "message": "Method not found", "data": DISCOVER}


def _key(request_id: object) -> str:
    """One key for an id however it is spelled (1 and 1.0 are one request)."""
    return json.dumps(request_id)


def _lines(stream):  # type: ignore[no-untyped-def]
    """Newline-delimited messages as they arrive, each with its newline."""
    buffer = b""
    while True:
        chunk = stream.read(1 << 16)
        if not chunk:
            if buffer:
                yield buffer
            return
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield line + b"\n"


def _parse(line: bytes) -> dict | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def record(path: str = HANDSHAKE) -> dict:
    """Ask the real server (a direct `waymark mcp`) for its handshake at every protocol
    version it speaks, and write it to `path`."""
    import subprocess
    from importlib.metadata import version

    from mcp.server.runner import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

    from waymark import __version__

    out: dict = {
        "waymark": __version__,
        "mcp": version("mcp"),
        "latest": LATEST_HANDSHAKE_VERSION,
        "initialize": {},
        "tools": {},
    }
    for protocol in HANDSHAKE_PROTOCOL_VERSIONS:
        initialize, tools = ask_direct(protocol, subprocess)
        out["initialize"][protocol] = initialize
        out["tools"][protocol] = tools
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    return out


def ask_direct(protocol: str, subprocess) -> tuple[dict, dict]:  # type: ignore[no-untyped-def]
    """The real server's `initialize` and `tools/list` results for `protocol`."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "waymark", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, DIRECT_ENV: "1"},
    )
    hello = {
        "protocolVersion": protocol,
        "capabilities": {},
        "clientInfo": {"name": "waymark-record", "version": "1"},
    }
    replies: dict = {}
    try:
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ):
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
            while "id" in message and message["id"] not in replies:
                line = proc.stdout.readline()
                if not line:
                    raise RuntimeError(f"the server closed its output; it answered {replies}")
                reply = json.loads(line)
                replies[reply.get("id")] = reply
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        proc.stdout.close()
    return replies[1]["result"], replies[2]["result"]


if __name__ == "__main__":
    if sys.argv[1:] == ["--record"]:
        record()
        print(f"wrote {HANDSHAKE}")
    else:
        sys.exit(main())
