"""The warm process's socket: hooks ask the long-running process (the MCP server today).

Embedding a query costs ~0.5 s in a cold process, so query embedding and vector search live in
the MCP server, which calls `start(handler)`. A hook calls `ask()` under one hard deadline and
falls back to lexical recall when it gets None.

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

Lifetime: the server is daemon threads inside the MCP server process, never a fork or detached
daemon, so nothing outlives that process, which exits with its client session. `stop()` (also
run at exit) removes the socket, address and token files. Descriptors are non-inheritable
(PEP 446), so programs the server spawns never hold the lock or the socket.
"""

from __future__ import annotations

# `_socket`, not `socket`: the wrapper's enum and selectors imports cost a hook ~5 ms.
import _socket
import atexit  # built in: free
import os
import sys
import time

from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.home import data_home, ensure_home

TYPE_CHECKING = False  # collections.abc would cost a hook ~1 ms
if TYPE_CHECKING:
    from collections.abc import Callable

    Handler = Callable[[dict], dict]

VERSION = 1
MAX_MESSAGE = 1 << 20
SOCK_FILE, ADDR_FILE, TOKEN_FILE, LOCK_FILE = "warm.sock", "warm.addr", "warm.token", "warm.lock"
MAX_CONNECTIONS = 8  # a burst beyond this is refused at once, so clients fall back without waiting
_UNIX_PATH_MAX = 100  # sun_path holds 104 bytes on macOS/BSD, 108 on Linux, NUL included
_SERVER_IO_TIMEOUT_S = 2.0  # bounds how long a silent or slow client holds a worker
# `until`: the wall-clock second past which the asker has stopped waiting. A request the
# server reaches later (busy starting, or other requests first) is refused unanswered, so a
# hook that has moved on to doing the work itself never finds it half done by the server.
_RESERVED = ("v", "token", "until")


# Client: hooks import this module, so everything above the server section is stdlib-light.


def ask(request: dict, timeout_s: float = 0.05, *, home: str | None = None) -> dict | None:
    """Send `request` to the warm server; its reply, or None if no valid reply came in time.

    Never raises and never blocks past `timeout_s`. A reply always has `ok`; `ok: false`
    carries `error` (a handler failure or a refused request).
    """
    pending = send(request, timeout_s, home=home)
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


def send(request: dict, timeout_s: float = 0.05, *, home: str | None = None) -> Pending | None:
    """Connect and send now, reply later (see `Pending`); None when no server takes it."""
    deadline = time.monotonic() + timeout_s
    sock = None
    try:
        family, address, token = _endpoint(home or data_home())
        message = {**request, "v": VERSION}
        if token is not None:
            message["token"] = token
        frame = _frame(message)
        sock = _socket.socket(family, _socket.SOCK_STREAM)
        sock.settimeout(_remaining(deadline))
        sock.connect(address)
        sock.settimeout(_remaining(deadline))
        sock.sendall(frame)
        return Pending(sock, deadline)
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


def _read_frame(sock, deadline: float) -> bytes:
    size = int.from_bytes(_read_exact(sock, 4, deadline), "big")
    if size > MAX_MESSAGE:  # refuse before reading: the peer is broken or hostile
        raise ValueError(f"message of {size} bytes exceeds {MAX_MESSAGE}")
    return _read_exact(sock, size, deadline)


def _read_exact(sock, n: int, deadline: float) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        sock.settimeout(_remaining(deadline))
        chunk = sock.recv(min(n - len(buf), 1 << 16))
        if not chunk:
            raise ConnectionError("peer closed the connection mid-message")
        buf += chunk
    return bytes(buf)


def _parse(data: bytes) -> dict:
    message = json.loads(data.decode("utf-8"))
    if not isinstance(message, dict):
        raise ValueError("message is not a JSON object")
    return message


# Server: runs in the MCP server process. Its modules are imported inside functions so that
# hooks, which import this module for `ask()`, never pay for them.


def start(
    handler: Handler, *, home: str | None = None, transport: str | None = None
) -> WarmServer | None:
    """Own the warm endpoint and serve `handler(request) -> reply` on daemon threads.

    Returns None when another live server owns it (the caller stays a client). `transport` is
    "unix" or "tcp"; default tcp on Windows, else WAYMARK_WARM_TRANSPORT or unix. `handler`
    runs concurrently on up to MAX_CONNECTIONS threads. Raises OSError when the endpoint cannot
    be set up safely.
    """
    transport = transport or _default_transport()
    if transport not in ("unix", "tcp"):
        raise ValueError(f"unknown warm transport {transport!r}; use 'unix' or 'tcp'")
    if home is None:
        home = ensure_home()
    else:
        os.makedirs(home, mode=0o700, exist_ok=True)
    lock_fd = _lock(os.path.join(home, LOCK_FILE))
    if lock_fd is None:
        return None
    try:
        return WarmServer(handler, home, transport, lock_fd)
    except BaseException:
        os.close(lock_fd)
        raise


def _default_transport() -> str:
    forced = os.environ.get("WAYMARK_WARM_TRANSPORT", "").strip().lower()
    if forced:
        return forced
    return "tcp" if sys.platform == "win32" else "unix"


def _lock(path: str) -> int | None:
    """An exclusive, non-blocking lock held until the fd closes; None if a live owner has it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if sys.platform == "win32":
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (BlockingIOError, PermissionError):  # POSIX / Windows spelling of "already held"
        os.close(fd)
        return None
    return fd


class WarmServer:
    """The owned endpoint, served on daemon threads until `stop()`."""

    def __init__(self, handler: Handler, home: str, transport: str, lock_fd: int) -> None:
        import queue
        import socket
        import threading

        self.handler, self.home, self.transport = handler, home, transport
        self._lock_fd, self._pid = lock_fd, os.getpid()
        self._token: str | None = None
        self._stopped = False
        for name in (SOCK_FILE, ADDR_FILE, TOKEN_FILE):  # a dead owner's leftovers
            _unlink(os.path.join(home, name))
        self._listener = self._bind()
        try:
            self.address = self._listener.getsockname()
            self._publish()
            self._wake_r, self._wake_w = socket.socketpair()
        except BaseException:
            self._listener.close()
            raise
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        # A fixed pool fed by one acceptor: starting a thread per connection measured slower,
        # with ms-scale tails; a queue handoff costs about as much as serving inline.
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._accept_loop, name="waymark-warm", daemon=True)
        for n in range(MAX_CONNECTIONS):
            threading.Thread(target=self._work, name=f"waymark-warm-{n}", daemon=True).start()
        self._thread.start()
        atexit.register(self.stop)

    def _bind(self):
        import socket

        tcp = self.transport == "tcp"
        sock = socket.socket(socket.AF_INET if tcp else socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if tcp and hasattr(socket, "SO_EXCLUSIVEADDRUSE"):  # Windows: nobody shares our port
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_EXCLUSIVEADDRUSE, 1)
            if tcp:
                sock.bind(("127.0.0.1", 0))
                self._token = os.urandom(32).hex()
            else:
                path = self._unix_path()
                sock.bind(path)
                os.chmod(path, 0o600)  # the 0700 directory already keeps others out
            sock.listen(16)
        except BaseException:
            sock.close()
            raise
        return sock

    def _unix_path(self) -> str:
        path = os.path.join(self.home, SOCK_FILE)
        if len(os.fsencode(path)) > _UNIX_PATH_MAX:
            path = os.path.join(_runtime_dir(self.home), SOCK_FILE)
            _unlink(path)  # we hold the lock, so any socket here is stale
        return path

    def _publish(self) -> None:
        # Token before address: a client that finds the address can always read the token.
        if self._token is not None:
            _write_private(os.path.join(self.home, TOKEN_FILE), self._token)
            _write_private(
                os.path.join(self.home, ADDR_FILE), json.dumps({"port": self.address[1]})
            )
        elif self.address != os.path.join(self.home, SOCK_FILE):
            _write_private(os.path.join(self.home, ADDR_FILE), json.dumps({"unix": self.address}))

    def stop(self) -> None:
        """Stop serving, remove the published files, release ownership. Safe to call twice."""
        if self._stopped or os.getpid() != self._pid:  # a forked child must not tear it down
            return
        self._stopped = True
        atexit.unregister(self.stop)
        try:
            self._wake_w.send(b"\0")
            self._thread.join(timeout=2)
            for _ in range(MAX_CONNECTIONS):
                self._queue.put(None)  # workers finish queued and running requests, then exit
            for sock in (self._listener, self._wake_r, self._wake_w):
                sock.close()
            for name in (ADDR_FILE, TOKEN_FILE):
                _unlink(os.path.join(self.home, name))
            if self.transport == "unix":
                _unlink(self.address)
                if os.path.dirname(self.address) != self.home:
                    os.rmdir(os.path.dirname(self.address))  # ours alone: named with our uid
        finally:
            _unlock(self._lock_fd)  # last, so the next owner finds a clean slate

    def _accept_loop(self) -> None:
        import selectors

        self._listener.setblocking(False)  # a client may vanish between select and accept
        with selectors.DefaultSelector() as selector:
            selector.register(self._listener, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            while not self._stopped:
                selector.select()
                if not self._stopped:
                    self._accept()

    def _accept(self) -> None:
        try:
            conn, _ = self._listener.accept()
        except BlockingIOError:
            return
        except OSError:  # e.g. out of descriptors: back off rather than spin
            time.sleep(0.05)
            return
        if not self._slots.acquire(blocking=False):
            conn.close()
            return
        self._queue.put(conn)  # a slot guarantees an idle worker

    def _work(self) -> None:
        while (conn := self._queue.get()) is not None:
            self._serve(conn)

    def _serve(self, conn) -> None:
        try:
            with conn:
                if not _same_user(conn):
                    return
                data = _read_frame(conn, time.monotonic() + _SERVER_IO_TIMEOUT_S)
                conn.settimeout(_SERVER_IO_TIMEOUT_S)
                conn.sendall(self._answer(data))
        except (OSError, ValueError):
            pass  # a client that gave up, sent too much, or stalled: nobody to answer
        finally:
            self._slots.release()

    def _answer(self, data: bytes) -> bytes:
        try:
            request = _parse(data)
        except (ValueError, RecursionError):
            return _frame(_error("request is not a UTF-8 JSON object"))
        refusal = self._refusal(request)
        if refusal:
            return _frame(_error(refusal))
        until = request.get("until")
        if isinstance(until, (int, float)) and time.time() > until:
            return _frame(_error("too late: the asker stopped waiting"))
        body = {k: v for k, v in request.items() if k not in _RESERVED}
        try:
            reply = self.handler(body)
            if not isinstance(reply, dict):
                raise TypeError(f"handler returned {type(reply).__name__}, not dict")
            return _frame({"ok": True, **reply, "v": VERSION})
        except Exception as exc:  # a handler bug costs one reply, never the server
            return _frame(_error(f"{type(exc).__name__}: {exc}"))

    def _refusal(self, request: dict) -> str | None:
        import hmac

        if request.get("v") != VERSION:
            return f"protocol version {request.get('v')!r} not supported; server speaks {VERSION}"
        if self._token is not None:
            given = str(request.get("token", "")).encode("utf-8", "replace")
            if not hmac.compare_digest(given, self._token.encode()):
                return "bad token: read it from warm.token in the data home"
        return None


def _error(message: str) -> dict:
    return {"v": VERSION, "ok": False, "error": message[:2000]}


def _same_user(conn) -> bool:
    """Refuse other users where the kernel says who connected (Linux); dir modes do the rest."""
    if conn.family != getattr(_socket, "AF_UNIX", None) or not hasattr(_socket, "SO_PEERCRED"):
        return True
    creds = conn.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)  # pid, uid, gid
    return int.from_bytes(creds[4:8], sys.byteorder) == os.getuid()


def _runtime_dir(home: str) -> str:
    """A short private directory for the socket when the data home path is too long."""
    import hashlib
    import stat
    import tempfile

    base = os.environ.get("XDG_RUNTIME_DIR", "").strip() or tempfile.gettempdir()
    digest = hashlib.sha256(os.fsencode(home)).hexdigest()[:16]
    path = os.path.join(base, f"waymark-{os.getuid()}-{digest}")
    os.makedirs(path, 0o700, exist_ok=True)
    st = os.lstat(path)
    # In a shared /tmp another user could have made it first: use it only if ours and private.
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise PermissionError(f"{path} is not a private directory of yours; remove it and retry")
    return path


def _write_private(path: str, text: str) -> None:
    from waymark.base.files import write_atomic

    write_atomic(path, text.encode("utf-8"))  # readers see the old file or the new, never half


def _unlock(fd: int) -> None:
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    os.close(fd)


def _unlink(path: str) -> None:
    import contextlib

    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
