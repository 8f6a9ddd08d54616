"""`waymark proxy`: the memory proxy for agents without hooks, on loopback."""

from __future__ import annotations

import os

from waymark.base import origins
from waymark.cli.common import Context, add_command, bounded, emit
from waymark.errors import InvalidArgument

TYPE_CHECKING = False  # typing costs a command ~3 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any

TOKEN_FILE = "proxy.token"
DEFAULT_PORT = 8795


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(
        commands,
        "proxy",
        common,
        handler=cmd_proxy,
        help="the memory proxy: point an agent's base URL here (Anthropic Messages, OpenAI "
        "Responses and Chat Completions) and its requests carry this project's memory, its "
        "tool calls are recorded; loopback only, Ctrl-C stops it",
        example="waymark proxy --upstream http://127.0.0.1:11434/v1",
    )
    p.add_argument("--port", type=bounded(0, 65535),
                   help=f"the port (default proxy.port, {DEFAULT_PORT}; 0: a free one)")  # fmt: skip
    p.add_argument("--upstream", metavar="URL",
                   help="where every request goes (default: proxy.anthropic_upstream for "
                   "/v1/messages, proxy.openai_upstream for the rest)")  # fmt: skip
    p.add_argument("--anthropic-upstream", metavar="URL", help="where /v1/messages goes")
    p.add_argument("--openai-upstream", metavar="URL",
                   help="where /v1/responses, /v1/chat/completions and the rest go")  # fmt: skip
    p.add_argument("--api-key-env", metavar="NAME",
                   help="the environment variable holding the key for requests that carry "
                   "none (read at start, never stored)")  # fmt: skip
    p.add_argument(
        "--require-token",
        action="store_true",
        help="every request must carry x-waymark-token (`--print-token` shows it)",
    )
    p.add_argument("--print-token", action="store_true", help="print the token and exit")


def cmd_proxy(args: argparse.Namespace, ctx: Context) -> int:
    from waymark import home

    if args.print_token:
        emit({"token": home.secret(TOKEN_FILE)}, ctx.as_json, home.secret(TOKEN_FILE))
        return 0
    from waymark.proxy import app

    chosen = _settings(ctx)
    settings = app.Settings(
        cwd=os.getcwd(),
        project=args.project,
        anthropic=chosen["proxy.anthropic_upstream"],
        openai=chosen["proxy.openai_upstream"],
    )
    port = chosen["proxy.port"] if args.port is None else args.port
    for name, value in (("anthropic", args.anthropic_upstream or args.upstream),
                        ("openai", args.openai_upstream or args.upstream)):  # fmt: skip
        if value:
            url = origins.upstream_url(value)
            if url is None:
                raise InvalidArgument(
                    f"an upstream is an http(s) URL with a host (and a port 1-65535 where one "
                    f"is written), not {value!r}"
                )
            setattr(settings, name, url)
    if args.api_key_env:
        settings.api_key = os.environ.get(args.api_key_env) or None
        if settings.api_key is None:
            raise InvalidArgument(f"--api-key-env: {args.api_key_env} is not set")
    if args.require_token:
        settings.token = home.secret(TOKEN_FILE)
    import sys

    from waymark.cli import serving

    listener, port = serving.listen("127.0.0.1", port)
    url = f"http://127.0.0.1:{port}"

    def announce() -> None:
        emit({"url": url, "pid": os.getpid(), "anthropic": settings.anthropic,
              "openai": settings.openai, "token": bool(settings.token), "cwd": settings.cwd},
             ctx.as_json,
             f"the memory proxy: {url} (Anthropic base URL), {url}/v1 (OpenAI base URL)\n"
             f"upstream: {settings.anthropic} (Messages), {settings.openai} (the rest)\n"
             f"project: from x-waymark-project, else {settings.project or settings.cwd}\n"
         "(Ctrl-C stops it)")  # fmt: skip
        sys.stdout.flush()  # whoever started it reads the address now

    import threading

    built = app.build(settings)
    memory = built.state.memory
    stopping = threading.Event()
    threading.Thread(target=app.watch, args=(memory, stopping), daemon=True).start()
    try:
        serving.run(built, listener, "proxy", f"127.0.0.1:{port}", announce)
    finally:
        stopping.set()
        ended = memory.end_quiet(0)  # every conversation ends with the proxy
        if ended:
            serving.log("proxy", f"{ended} conversations ended at exit")
    return 0


def _settings(ctx: Context) -> dict[str, Any]:
    """The proxy's settings; their defaults when the store cannot be read, since the proxy
    must pass requests on without memory then, not refuse to start."""
    from waymark import settings as config
    from waymark.errors import WaymarkError

    keys = ("proxy.port", "proxy.anthropic_upstream", "proxy.openai_upstream")
    try:
        chosen = {key: config.get(ctx.conn, key) for key in keys}
    except WaymarkError as exc:
        from waymark.cli import serving

        serving.log("proxy", f"settings unread, defaults used: [{exc.code}] {exc.message}")
        chosen = {key: config.DEFAULTS[key] for key in keys}
    ctx.close()  # the proxy's threads open their own connections
    return chosen
