"""The memory proxy: an agent without hooks points its base URL here; each model request
goes upstream with Waymark's packets in it, and the answer comes back as the upstream sent
it, streamed byte for byte.

Per request: the path says the protocol (`wire.PATHS`); other paths, and every request of a
conversation that belongs to no captured project, go upstream untouched. A conversation is
named by `x-waymark-session`, else by its protocol, system text and the user messages before
its first answer (a client may send its environment, the same for every conversation, before
the prompt); it is bound to `x-waymark-project` (a path or a project's name), else to the
folder the proxy was started in. What was injected into a conversation is kept (in memory,
and in the store once the answer has gone back, for a session resumed after the proxy
restarted), so every later request carries the same bytes in the same places and the
upstream's prompt cache stays warm. The tool calls a request's history holds are recorded
after the answer has gone back, never before its first byte. Any failure of Waymark's (a store it cannot open, a packet that fails) is a line
in server.log and the original request goes upstream: the agent never waits on Waymark.

Guarded: Host must be a loopback name (DNS rebinding), an Origin must be loopback too (a web
page cannot drive it), and with `--require-token` every request carries `x-waymark-token`.
The API key travels from the request (or the environment variable named at start) to the
upstream only; no body is kept, and no header is logged.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from waymark.base import origins
from waymark.proxy import wire

ANTHROPIC = "https://api.anthropic.com"
OPENAI = "https://api.openai.com"
DROPPED = frozenset(("host", "content-length", "connection", "keep-alive", "transfer-encoding",
                     "te", "trailer", "upgrade", "proxy-authorization", "proxy-connection",
                     "accept-encoding"))  # fmt: skip
BACK_DROPPED = frozenset(("connection", "keep-alive", "transfer-encoding", "te", "trailer",
                          "upgrade", "proxy-authenticate"))  # fmt: skip
KEPT_CONVERSATIONS = 500
BUSY_MS = 200  # a locked store: the request goes on without memory rather than wait
IDLE_S = 1800.0  # a conversation this long without a request has ended (SessionEnd)
ANSWER_MAX = 4 * 1024 * 1024  # of an answer's bytes kept in memory to read its text
CHAIN_SCAN = 64 * 1024  # a Responses answer names its id in its first bytes


@dataclass
class Conversation:
    session: str
    key: str = ""  # what it is kept under, in memory and in the store
    opening: str | None = None
    packets: dict[int, str] = field(default_factory=dict)
    asked: set[int] = field(default_factory=set)
    answered: bool = False
    project: Any = None  # where its ledger is kept, while it records
    last_seen: float = 0.0
    last_answer: str | None = None


@dataclass
class After:
    """What to record once an answer has gone back."""

    talk: Conversation
    api: str
    calls: list[dict[str, Any]]
    streamed: bool
    key: str = ""
    keep: bool = False  # what the conversation was sent changed: keep it (`record`)
    project: Any = None
    quiet: bool = False  # the turn's prompt said #no-capture: its end is not recorded


@dataclass
class Settings:
    cwd: str
    project: str | None = None  # a path or a project's name, when no header names one
    anthropic: str = ANTHROPIC
    openai: str = OPENAI
    token: str | None = None  # required in `x-waymark-token` when set
    api_key: str | None = None  # used when a request carries none


class Memory:
    """Waymark's side of the proxy: conversations, and one store connection per thread."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.conversations: OrderedDict[str, Conversation] = OrderedDict()
        self.lock = threading.Lock()
        self.local = threading.local()
        self.passed: set[str] = set()  # conversations already logged as passed through
        # A Responses answer's id -> its conversation: a request that continues it names only
        # `previous_response_id` and its new items.
        self.chains: OrderedDict[str, str] = OrderedDict()

    def chained(self, response_id: str, key: str) -> None:
        self.chains[response_id] = key
        while len(self.chains) > KEPT_CONVERSATIONS * 4:
            self.chains.popitem(last=False)

    def conn(self) -> Any:
        conn = getattr(self.local, "conn", None)
        if conn is None:
            from waymark.storage import connection as db

            conn = self.local.conn = db.connect(busy_ms=BUSY_MS, checkpoint_on_close=False)
        return conn

    def conversation(
        self, conn: Any, key: str, session: str | None, seen: dict[str, Any]
    ) -> tuple[Conversation, bool]:
        """The conversation this request continues (in memory, else kept in the store from
        before the proxy restarted), or a new one; True when it starts now (a retry of an
        opening request is the same conversation, not a new start)."""
        from waymark.packets import conversation as library

        # No answer yet: the conversation opens (a client may send several user messages
        # first: Codex its environment, then the prompt).
        opening = bool(seen["turns"]) and not seen["answered"] and not seen["continued"]
        with self.lock:
            found = self.conversations.get(key)
            if found is None and (before := library.kept(conn, key)) is not None:
                named, said, packets, answered = before
                found = Conversation(named, key, said, {n: t for n, t in packets.items() if t},
                                     set(packets), answered)  # fmt: skip
                self.conversations[key] = found
            if found is not None and opening and found.answered:
                found = None  # the same first words again: a new conversation
            if found is None:
                count = sum(k.startswith(key) for k in self.conversations)
                named = session or f"proxy-{key[:16]}" + (f"-{count}" if count else "")
                found = Conversation(named, key if not count else f"{key}-{count}")
                self.conversations[found.key] = found
                while len(self.conversations) > KEPT_CONVERSATIONS:
                    self.conversations.popitem(last=False)
                return found, opening
            self.conversations.move_to_end(key)
            return found, False

    def prepare(self, api: str, body: bytes, headers: dict[str, str]) -> tuple[bytes, Any]:
        """The body to send upstream, and what to record once the answer is back (or None)."""
        from waymark.packets import conversation as library

        data = json.loads(body)
        if not isinstance(data, dict):
            return body, None
        seen = wire.read(api, data)
        session = headers.get("x-waymark-session") or None
        key = session or self.chains.get(str(data.get("previous_response_id"))) or (
            hashlib.sha256(seen["opening"].encode("utf-8", "replace")).hexdigest())  # fmt: skip
        conn = self.conn()
        named = headers.get("x-waymark-project") or self.settings.project
        bound = library.bind(conn, named, self.settings.cwd, session)
        if bound is None or not bound[1]["enabled"]:
            self._passed(key, named or self.settings.cwd, bound)
            return body, None
        project, policy = bound
        talk, first = self.conversation(conn, key, session, seen)
        last = len(seen["turns"]) - 1
        # A turn whose prompt said #no-capture records nothing: not its calls, not its end.
        quiet = {n for n, said in enumerate(seen["turns"]) if library.quiet(said)}
        records = bool(policy["records"]) and last not in quiet
        new_turn = seen["last_is_prompt"] and last not in talk.asked
        changed = first or new_turn or (seen["answered"] and not talk.answered)
        if first or new_turn:
            opening, said = library.turn(
                conn, project, talk.session, first=first,
                prompt=seen["turns"][last] if new_turn else None, record=records,
                agent=headers.get("x-waymark-agent") or None,
            )  # fmt: skip
            if first:
                talk.opening = opening
            if new_turn:
                talk.asked.add(last)
                if said:
                    talk.packets[last] = said
        talk.answered = talk.answered or seen["answered"]
        talk.last_seen = time.monotonic()
        if policy["records"]:
            talk.project = project
        shown = dict(talk.packets) if not seen["continued"] else (
            {last: talk.packets[last]} if new_turn and last in talk.packets else {})  # fmt: skip
        opening = talk.opening if not seen["continued"] or first else None
        if not opening and not shown:
            sent = body
        else:
            sent = json.dumps(wire.inject(api, data, opening, shown), ensure_ascii=False).encode()
        streamed = bool(data.get("stream"))
        calls = [c for c in seen["calls"] if c["turn"] not in quiet]
        after = (After(talk, api, calls, streamed, key, changed, project, last in quiet)
                 if policy["records"] else None)  # fmt: skip
        return sent, after

    def record(self, after: After, answer: bytes | None) -> None:
        """What the conversation was sent, when that changed; the history's tool calls; and,
        when the answer asked for no tool (the agent's turn is over, where a client would run
        Stop), the summary candidate and measured use."""
        from waymark.handoff.closing import turn_ended
        from waymark.packets import conversation as library

        talk, conn = after.talk, self.conn()
        if after.keep:  # for a session resumed after the proxy restarted: the same bytes
            library.keep(conn, talk.key, after.project, talk.session, talk.opening,
                         {n: talk.packets.get(n, "") for n in talk.asked}, talk.answered)  # fmt: skip
        if after.calls:
            library.record_calls(conn, talk.project, talk.session, after.calls)
        said = wire.answer_of(after.api, answer, after.streamed) if answer is not None else None
        if said is None or said[1] or after.quiet:
            return
        talk.last_answer = said[0]
        for problem in turn_ended(conn, talk.project, talk.session, talk.project.files, said[0]):
            log(problem)

    def end_quiet(self, idle_s: float = IDLE_S) -> int:
        """End the conversations no request came for in `idle_s` (all of them with 0), as
        SessionEnd would: the ledger closed, a handoff marker where work changed unsaved."""
        from waymark.handoff.closing import session_ended

        now = time.monotonic()
        with self.lock:
            quiet = [(k, c) for k, c in self.conversations.items()
                     if c.project is not None and now - c.last_seen >= idle_s]  # fmt: skip
            for key, _ in quiet:
                del self.conversations[key]
        for _, talk in quiet:
            why = "proxy stopped" if idle_s <= 0 else "quiet"
            for problem in session_ended(self.conn(), talk.project, talk.session, "proxy", why,
                                         talk.last_answer):  # fmt: skip
                log(problem)
        return len(quiet)

    def _passed(self, key: str, where: str, bound: Any) -> None:
        if key in self.passed:
            return
        self.passed.add(key)
        why = "capture is off there" if bound is not None else "no Waymark project there"
        log(f"passed through untouched: {why} ({where})")


def log(message: str) -> None:
    from waymark.base import logfile

    logfile.append("server.log", "proxy", message)


def upstream_for(settings: Settings, request: Request) -> str:
    chosen = request.headers.get("x-waymark-upstream")
    if chosen and chosen.startswith(("http://", "https://")):
        return chosen.rstrip("/")
    path = request.url.path
    anthropic = path.startswith("/v1/messages") or "anthropic-version" in request.headers
    return (settings.anthropic if anthropic else settings.openai).rstrip("/")


def target(base: str, request: Request) -> str:
    path = request.url.path
    if base.endswith("/v1") and path.startswith("/v1/"):
        path = path[3:]
    query = request.url.query
    return f"{base}{path}" + (f"?{query}" if query else "")


def outgoing(settings: Settings, request: Request) -> dict[str, str]:
    headers = {k: v for k, v in request.headers.items()
               if k not in DROPPED and not k.startswith("x-waymark-")}  # fmt: skip
    headers["accept-encoding"] = "identity"  # the bytes pass through as the upstream sent them
    if settings.api_key and "authorization" not in headers and "x-api-key" not in headers:
        if request.url.path.startswith("/v1/messages"):
            headers["x-api-key"] = settings.api_key
        else:
            headers["authorization"] = f"Bearer {settings.api_key}"
    return headers


def refused(request: Request, settings: Settings) -> str | None:
    host, _ = origins.host_of(request.headers.get("host") or "")
    if not origins.is_loopback(host):
        return f"Host {host or '(none)'} is not this machine's loopback address"
    origin = request.headers.get("origin")
    if origin is not None and not origins.loopback_origin(origin):
        return "a request from a web page is refused"
    if settings.token:
        given = request.headers.get("x-waymark-token") or ""
        if not hmac.compare_digest(given.encode(), settings.token.encode()):
            return "x-waymark-token is missing or wrong (`waymark proxy --print-token`)"
    return None


def build(settings: Settings) -> Starlette:
    memory = Memory(settings)
    client = httpx.AsyncClient(timeout=httpx.Timeout(600.0, connect=15.0), follow_redirects=False)

    async def forward(request: Request) -> Response:
        why = refused(request, settings)
        if why is not None:
            status = 401 if why.startswith("x-waymark-token") else 403
            return JSONResponse({"error": {"type": "waymark_proxy", "message": why}}, status)
        body = await request.body()
        api = wire.PATHS.get(request.url.path) if request.method == "POST" else None
        sent, after = body, None
        if api is not None:
            lowered = {k.lower(): v for k, v in request.headers.items()}
            try:
                sent, after = await anyio.to_thread.run_sync(memory.prepare, api, body, lowered)
            except Exception as exc:  # fail open: the request goes as the agent sent it
                log(f"{api}: sent without memory: {type(exc).__name__}: {exc}")
                sent, after = body, None
        upstream = client.build_request(
            request.method, target(upstream_for(settings, request), request),
            headers=outgoing(settings, request), content=sent,
        )  # fmt: skip
        try:
            answer = await client.send(upstream, stream=True)
        except httpx.HTTPError as exc:
            log(f"upstream unreachable: {type(exc).__name__}: {exc}")
            return JSONResponse(
                {"error": {"type": "waymark_proxy", "message": f"upstream unreachable: {exc}"}},
                502,
            )
        headers = {k: v for k, v in answer.headers.items() if k.lower() not in BACK_DROPPED}

        kept: list[bytes] | None = [] if after is not None and answer.status_code == 200 else None

        async def relay() -> Any:
            size, named = 0, api != "responses" or after is None
            async for chunk in answer.aiter_raw():
                if kept is not None and size < ANSWER_MAX:
                    kept.append(chunk)
                    size += len(chunk)
                if not named and kept is not None:  # before the agent can name it back
                    found = wire.response_id(b"".join(kept)[:CHAIN_SCAN])
                    if found and after is not None:
                        memory.chained(found, after.key)
                    named = bool(found) or size >= CHAIN_SCAN
                yield chunk

        async def done() -> None:
            await answer.aclose()
            if after is not None:
                whole = b"".join(kept) if kept is not None else None
                try:
                    await anyio.to_thread.run_sync(memory.record, after, whole)
                except Exception as exc:  # a failed capture is a log line, never an error
                    log(f"{api}: not recorded: {type(exc).__name__}: {exc}")

        return StreamingResponse(relay(), status_code=answer.status_code, headers=headers,
                                 background=BackgroundTask(done))  # fmt: skip

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    app = Starlette(routes=[Route("/{path:path}", forward, methods=methods)])
    app.state.memory = memory
    return app


def watch(memory: Memory, stopping: threading.Event, every_s: float = 60.0) -> None:
    """End quiet conversations every `every_s` until `stopping` is set (a thread of its own)."""
    while not stopping.wait(every_s):
        try:
            memory.end_quiet()
        except Exception as exc:  # background work: a log line, never the proxy's end
            log(f"quiet conversations not ended: {type(exc).__name__}: {exc}")
