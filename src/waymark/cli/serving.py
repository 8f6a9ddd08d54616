"""What the local web faces share when they start: a loopback listener bound before the
address is printed, uvicorn run on it with start, exit and crash as lines of server.log, and
the long-lived process's work (`daemon.host`) when no other process holds it."""

from __future__ import annotations

import os
import socket

from waymark.errors import InvalidArgument

TYPE_CHECKING = False  # typing costs a command ~3 ms
if TYPE_CHECKING:
    from typing import Any

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def listen(host: str, port: int) -> tuple[socket.socket, int]:
    """A listening socket on `host:port` (port 0: a free one) and the port it got."""
    if host not in LOOPBACK and host != "0.0.0.0" and not host.replace(".", "").isdigit():
        raise InvalidArgument(f"--host takes an address to listen on, not {host!r}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it: a page's headers and body go out at once, not 40 ms
    # apart (Nagle's wait for the delayed ACK of a kept-alive connection).
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise InvalidArgument(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    listener.listen(128)  # connections wait in the backlog from the moment the address shows
    return listener, listener.getsockname()[1]


def run(app: Any, listener: socket.socket, name: str, where: str, announce: Any) -> None:
    """Serve `app` until Ctrl-C or SIGTERM. `announce()` prints the address once the start is
    logged; whatever ends it (a signal before uvicorn takes over included), the exit is a
    line of server.log too, and a crash."""
    import signal

    import uvicorn

    # A SIGTERM before uvicorn takes over is noted, never raised from the handler: an
    # exception raised there can land in code that swallows it (an import's lock callback
    # did: the stop was lost and the server ran on), so it is acted on below, or by uvicorn
    # itself once the server exists (`should_exit`, which it reads after its start).
    stopped: list[int] = []
    made: list[Any] = []  # the uvicorn server, once there is one

    def stop(number: int, _frame: Any) -> None:
        stopped.append(number)
        for server in made:
            server.should_exit = True

    previous = signal.signal(signal.SIGTERM, stop)  # until uvicorn installs its own
    log(name, f"start pid={os.getpid()} {where}")
    host = None
    try:
        host = _host(name)
        if stopped:
            raise SystemExit(0)
        announce()
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                timeout_graceful_shutdown=2)  # an open stream must not hold it  # fmt: skip
        made.append(uvicorn.Server(config))
        if stopped:
            raise SystemExit(0)
        made[0].run(sockets=[listener])
    except Exception as exc:
        log(name, f"crash: {type(exc).__name__}: {exc}")
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
        listener.close()
        try:
            if host is not None:
                host.close()
        finally:  # the exit is logged whatever closing the host did
            log(name, f"exit pid={os.getpid()}")


def _host(name: str) -> Any:
    """The warm socket, the model and the background loops of the project here, when no other
    process (an MCP server, another dashboard or proxy) holds the data home's warm socket:
    then hooks get warm answers from this one. None when another holds it: this one asks it."""
    from waymark.daemon.host import Host

    host = Host(cwd=os.getcwd())
    if host.start_if_free():
        log(name, "holds the warm socket: hooks are answered here")
        return host
    host.close()
    return None


def log(name: str, message: str) -> None:
    from waymark.base import logfile

    logfile.append("server.log", name, message)
