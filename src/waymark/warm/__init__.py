"""The warm process's socket, and its one client: every hook and face that asks asks here.

Embedding a query costs ~0.5 s in a cold process, so query embedding and vector search live in
the long-lived process (`waymark.daemon`: the MCP server, `waymark ui` or `waymark proxy`),
which serves the socket through `waymark.warm.server.start(handler)`. An asker calls
`send(op, fields, deadline)` (or `ask`, which also waits for the reply) and does the work
itself when it gets None. This module is the client and the wire: a hook imports it, so it
stays stdlib-light (base and home only); the server lives in `waymark.warm.server`.

Endpoint, inside the 0700 data home: on POSIX the Unix socket `warm.sock` (0600; Linux also
checks the peer's uid), or, when that path is too long for AF_UNIX, a socket in a private
runtime directory named by `warm.addr`. On Windows (or with `transport="tcp"` /
WAYMARK_WARM_TRANSPORT=tcp), 127.0.0.1 on an ephemeral port named by `warm.addr`, and every
request carries the random token from `warm.token`.

Ownership: whoever holds the exclusive lock on `warm.lock` owns the endpoint; other servers get
None and stay clients. The OS drops the lock when its holder dies, so a crash leaves only a
stale socket, which clients see as "no server" (ECONNREFUSED) and the next owner replaces. The
lock file is never removed: that would let two processes lock two inodes under one name.

Wire: one request per connection; each message is a 4-byte big-endian length and a UTF-8 JSON
object of at most 1 MiB. Requests carry `"v": 1` (and `"token"` over TCP: reserved keys);
replies carry `"v"` and `"ok"`, plus `"error"` when `ok` is false.

Lifetime: the server is daemon threads inside the long-lived process, never a fork or detached
daemon, so nothing outlives that process, which exits with its client session. `stop()` (also
run at exit) removes the socket, address and token files. Descriptors are non-inheritable
(PEP 446), so programs the server spawns never hold the lock or the socket.
"""

from __future__ import annotations

# `_socket`, not `socket`: the wrapper's enum and selectors imports cost a hook ~5 ms.
import _socket
import os
import time

from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.home import data_home

VERSION = 1
MAX_MESSAGE = 1 << 20
SOCK_FILE, ADDR_FILE, TOKEN_FILE, LOCK_FILE = "warm.sock", "warm.addr", "warm.token", "warm.lock"


def ask(
    op: str, fields: dict | None = None, deadline: float = 0.05, *, home: str | None = None
) -> dict | None:
    """`send`, then wait for the reply: it, or None if no valid reply came within `deadline`
    seconds. Never raises and never blocks past the deadline. A reply always has `ok`;
    `ok: false` carries `error` (a handler failure or a refused request)."""
    pending = send(op, fields, deadline, home=home)
    return pending.reply() if pending is not None else None


class Pending:
    """A request on its way: the caller works on, then collects the reply by the deadline.

    `reply(keep=True)` leaves the connection open when no reply came in time, for a caller
    that learns afterwards that the server took the work (`later()`); `close()` then."""

    def __init__(self, sock, deadline: float) -> None:  # type: ignore[no-untyped-def]
        self._sock = sock
        self._deadline = deadline
        self._buf = bytearray()  # what arrived of the reply so far
        self.open = True  # False once closed: a reply (or a failure) came, or `close()`

    def reply(self, *, keep: bool = False) -> dict | None:
        """The reply, or None when none valid arrived by the deadline. Call it once."""
        reply, timed_out = self._collect()
        if not (keep and timed_out):
            self.close()
        return reply

    def later(self, seconds: float) -> dict | None:
        """After `reply(keep=True)` gave None: wait up to `seconds` more for the reply."""
        self._deadline = time.monotonic() + seconds
        try:
            return self._collect()[0]
        finally:
            self.close()

    def close(self) -> None:
        self.open = False
        self._sock.close()

    def _collect(self) -> tuple[dict | None, bool]:
        """(the reply or None, whether the deadline cut it short)."""
        try:
            self._fill(4)
            size = int.from_bytes(self._buf[:4], "big")
            if size > MAX_MESSAGE:
                return None, False
            self._fill(4 + size)
            reply = _parse(bytes(self._buf[4 : 4 + size]))
            ok = reply.pop("v", None) == VERSION and "ok" in reply
            return (reply if ok else None), False
        except TimeoutError:  # `socket.timeout` is TimeoutError since 3.10
            return None, True
        except Exception:  # the same contract as ask(): None, never an exception
            return None, False

    def _fill(self, n: int) -> None:
        while len(self._buf) < n:
            self._sock.settimeout(_remaining(self._deadline))
            chunk = self._sock.recv(min(n - len(self._buf), 1 << 16))
            if not chunk:
                raise ConnectionError("peer closed the connection mid-message")
            self._buf += chunk


def send(
    op: str, fields: dict | None = None, deadline: float = 0.05, *, home: str | None = None
) -> Pending | None:
    """Ask the warm process for `op` with `fields`: connect and send now, collect the reply
    later (see `Pending`) within `deadline` seconds of now; None when no server takes it.

    The request carries the wall-clock second the asker stops waiting (`until`): a server that
    reaches it later refuses it unanswered, so an asker that has moved on to doing the work
    itself never finds it half done by the server. Never raises."""
    stop = time.monotonic() + deadline
    sock = None
    try:
        family, address, token = _endpoint(home or data_home())
        message = {**(fields or {}), "op": op, "until": time.time() + deadline, "v": VERSION}
        if token is not None:
            message["token"] = token
        frame = _frame(message)
        sock = _socket.socket(family, _socket.SOCK_STREAM)
        sock.settimeout(_remaining(stop))
        sock.connect(address)
        sock.settimeout(_remaining(stop))
        sock.sendall(frame)
        return Pending(sock, stop)
    except Exception:  # no server, stale socket, refused: the caller goes lexical
        if sock is not None:
            sock.close()
        return None


def _endpoint(home: str) -> tuple[int, str | tuple[str, int], str | None]:
    """(family, address, token): `warm.addr` when published, else the default socket."""
    try:
        with open(os.path.join(home, ADDR_FILE), encoding="utf-8") as f:
            addr = json.loads(f.read(4096))
    except FileNotFoundError:
        return _socket.AF_UNIX, os.path.join(home, SOCK_FILE), None
    if "port" in addr:
        with open(os.path.join(home, TOKEN_FILE), encoding="utf-8") as f:
            token = f.read(256).strip()
        return _socket.AF_INET, ("127.0.0.1", int(addr["port"])), token
    return _socket.AF_UNIX, str(addr["unix"]), None


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("deadline passed")
    return left


def _frame(message: dict) -> bytes:
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if len(data) > MAX_MESSAGE:
        raise ValueError(f"message of {len(data)} bytes exceeds {MAX_MESSAGE}")
    return len(data).to_bytes(4, "big") + data


def _parse(data: bytes) -> dict:
    message = json.loads(data.decode("utf-8"))
    if not isinstance(message, dict):
        raise ValueError("message is not a JSON object")
    return message
