"""`waymark ui`: the dashboard in a browser, for this user, on loopback."""

from __future__ import annotations

import json
import os

from waymark.cli.common import Context, add_command, bounded, emit

TYPE_CHECKING = False  # typing costs a command ~3 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any

RUNNING_FILE = "ui.json"  # {pid, host, port} of the dashboard that runs now


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(
        commands,
        "ui",
        common,
        handler=cmd_ui,
        help="the dashboard: browse, search, fix and review memory in a browser (loopback, "
        "this user only); Ctrl-C stops it",
        example="waymark ui --no-open",
    )
    p.add_argument("--port", type=bounded(0, 65535), default=0,
                   help="the port (default: a free one; a running dashboard is reused)")  # fmt: skip
    p.add_argument("--no-open", action="store_true", help="print the address, open no browser")
    p.add_argument("--new-token", action="store_true",
                   help="sign every browser out (a new install secret; links not used yet stop "
                   "working) and print a fresh login link")  # fmt: skip
    p.add_argument(
        "--host", default="127.0.0.1",
        help="listen elsewhere than loopback (the token is still required on every request)",
    )  # fmt: skip


def cmd_ui(args: argparse.Namespace, ctx: Context) -> int:
    from waymark import home
    from waymark.web import guard

    if args.new_token:
        guard.new_token()
    token = guard.install_token()
    here = ctx.read_project()  # the page opens on this directory's project (or --project's)
    args.opening = f"&project={here.id}" if here is not None else ""
    running = _running(home.data_home(), token)
    ended = " (every browser was signed out)" if args.new_token else ""
    if running is not None:
        url = _url(running["host"], running["port"], guard.new_code()) + args.opening
        emit({"url": url, "running": True, "pid": running["pid"],
              "signed_out": bool(args.new_token)}, ctx.as_json,
             f"the dashboard already runs (pid {running['pid']}){ended}; this link signs in "
             f"once, within 5 minutes:\n{url}")  # fmt: skip
        _open(url, args.no_open)
        return 0
    return _serve(args, ctx)


def _serve(args: argparse.Namespace, ctx: Context) -> int:
    import sys

    from waymark import home
    from waymark.cli import serving
    from waymark.web import app, guard

    host = args.host
    listener, port = serving.listen(host, args.port)
    shown = "127.0.0.1" if host in ("127.0.0.1", "localhost") else host
    url = _url(shown, port, guard.new_code()) + args.opening
    marker = os.path.join(home.ensure_home(), RUNNING_FILE)
    _write_running(marker, {"pid": os.getpid(), "host": shown, "port": port})

    def announce() -> None:
        emit({"url": url, "running": False, "pid": os.getpid(),
              "signed_out": bool(args.new_token)}, ctx.as_json,
             f"the dashboard (this link signs in once, within 5 minutes): {url}\n"
             "(Ctrl-C stops it; `waymark ui` again prints a fresh link)")  # fmt: skip
        sys.stdout.flush()  # whoever started it reads the address now
        _open(url, args.no_open)

    try:
        serving.run(app.build(shown, port), listener, "ui", f"{shown}:{port}", announce)
    finally:
        _drop_running(marker)
    return 0


def _url(host: str, port: int, code: str) -> str:
    name = f"[{host}]" if ":" in host else host
    return f"http://{name}:{port}/?code={code}"


def _open(url: str, no_open: bool) -> None:
    if no_open:
        return
    import contextlib
    import webbrowser

    with contextlib.suppress(Exception):  # no browser here: the printed address is enough
        webbrowser.open(url)


def _running(folder: str, token: str) -> dict[str, Any] | None:
    """The dashboard that answers now, from its marker file (a stale one is dropped)."""
    marker = os.path.join(folder, RUNNING_FILE)
    try:
        with open(marker, encoding="utf-8") as handle:
            found = json.load(handle)
    except (OSError, ValueError):
        return None
    import httpx

    try:
        answer = httpx.get(f"http://{found['host']}:{found['port']}/alive", timeout=1.0,
                           headers={"authorization": f"Bearer {token}"})  # fmt: skip
        if answer.status_code == 200 and answer.json().get("ok"):
            return dict(found)
    except (httpx.HTTPError, ValueError, KeyError):
        pass
    _drop_running(marker)
    return None


def _write_running(path: str, data: dict[str, Any]) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle)


def _drop_running(path: str) -> None:
    try:
        with open(path, encoding="utf-8") as handle:
            if json.load(handle).get("pid") != os.getpid():
                return
        os.unlink(path)
    except (OSError, ValueError):
        pass
