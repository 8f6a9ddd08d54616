"""The warm socket's server: the long-lived process (`waymark.daemon.host`) owns it.

Its modules are imported inside functions: the client (`waymark.warm`) is what hooks import,
and the server is loaded only in the process that serves. See `waymark.warm` for the endpoint,
ownership, wire and lifetime.
"""

from __future__ import annotations

import _socket
import atexit  # built in: free
import os
import sys
import time

from waymark.base import jsonlite as json
from waymark.home import ensure_home
from waymark.warm import (
    ADDR_FILE,
    LOCK_FILE,
    MAX_MESSAGE,
    SOCK_FILE,
    TOKEN_FILE,
    VERSION,
    _frame,
    _parse,
    _remaining,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Handler = Callable[[dict], dict]

MAX_CONNECTIONS = 8  # a burst beyond this is refused at once, so clients fall back without waiting
_UNIX_PATH_MAX = 100  # sun_path holds 104 bytes on macOS/BSD, 108 on Linux, NUL included
_SERVER_IO_TIMEOUT_S = 2.0  # bounds how long a silent or slow client holds a worker
# `until`: the wall-clock second past which the asker has stopped waiting. A request the
# server reaches later (busy starting, or other requests first) is refused unanswered, so a
# hook that has moved on to doing the work itself never finds it half done by the server.
_RESERVED = ("v", "token", "until")


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
