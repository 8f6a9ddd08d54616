"""What every request to the dashboard passes before a page sees it: a signed-in session,
the Host and Origin it names, a CSRF token on every write, and the headers every answer
carries (a strict Content-Security-Policy among them).

Getting in. `waymark ui` prints (and opens) a login link holding a one-time code: a random
string whose hash waits as an empty file in the data home (`ui-codes/`, owner-only) for at
most CODE_TTL_S. The first request that carries it deletes that file (so the code works
once, whichever request wins the race) and gets a session cookie: a separate random id,
HttpOnly and SameSite=Strict, neither the code nor the install secret; then a redirect to
the same page without the code, so neither the address bar nor the history keeps anything
that opens the dashboard again. A session ends after SESSION_IDLE_S without a request,
SESSION_MAX_S after its login, on Sign out, when the server stops, and for every session at
once on `waymark ui --new-token`, which renews the install secret (`ui.token`): the server
sees the file change on the next request. A session's cookie is replaced every ROTATE_S
(the one it replaces answers RETIRE_S more, for requests already on their way). Without a
session, a page says how to get in and nothing else.

Host must name the address the server listens on (DNS rebinding is refused), and a write
must come from the same origin with its form's CSRF token (derived from the install secret
and the session, never either itself).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from waymark import home
from waymark.base import origins

TOKEN_FILE = "ui.token"
CODES_DIR = "ui-codes"
COOKIE = "waymark_session"
CODE_TTL_S = 300  # a login link works once, within five minutes
SESSION_IDLE_S = 12 * 3600
SESSION_MAX_S = 7 * 86400
ROTATE_S = 3600
RETIRE_S = 60
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",  # no-referrer would make a form's Origin "null"
    "cache-control": "no-store",
}
WRITES = ("POST", "PUT", "PATCH", "DELETE")
PUBLIC = ("/static/",)  # the packaged stylesheet, script and icon: the login page uses them


def install_token() -> str:
    """This install's secret (made on first use, owner-only)."""
    return home.secret(TOKEN_FILE)


def new_token() -> None:
    """A new install secret: every session of a running dashboard ends on its next
    request, and every login link not used yet stops working."""
    home.secret(TOKEN_FILE, renew=True)
    folder = codes_folder()
    for name in _listing(folder):
        _unlink(os.path.join(folder, name))


def codes_folder() -> str:
    return os.path.join(home.data_home(), CODES_DIR)


def new_code() -> str:
    """A one-time login code (what the link `waymark ui` prints carries); those expired
    are cleared on the way."""
    folder = os.path.join(home.ensure_home(), CODES_DIR)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    now = time.time()
    for name in _listing(folder):
        path = os.path.join(folder, name)
        try:
            if now - os.stat(path).st_mtime > CODE_TTL_S:
                os.unlink(path)
        except OSError:
            pass
    code = secrets.token_urlsafe(32)
    os.close(os.open(os.path.join(folder, _digest(code)), os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                     0o600))  # fmt: skip
    return code


def redeem(code: str, folder: str, now: float) -> bool:
    """Whether `code` opens a session: it waits in `folder`, unexpired; it is gone after."""
    if not code or len(code) > 128:
        return False
    path = os.path.join(folder, _digest(code))
    try:
        made = os.stat(path).st_mtime
        os.unlink(path)  # one request wins; any other finds it gone
    except OSError:
        return False
    return -2 <= now - made <= CODE_TTL_S  # (a file's time may be a tick ahead)


def csrf_token(secret: str, key: str) -> str:
    """The token a session's forms carry for a write: derived, never the secret itself."""
    return hmac.new(secret.encode(), f"waymark-ui-csrf:{key}".encode(), "sha256").hexdigest()


@dataclass
class _Session:
    key: str  # stays for the session's life (its CSRF token derives from it)
    began: float
    seen: float
    issued: float  # when its cookie now in use was set


class Guard:
    """ASGI middleware: the checks above, then the app; every answer gets HEADERS.

    `token` fixes the install secret (tests); without it the secret is `ui.token`, read
    again whenever that file changes. `clock` is the time (tests move it)."""

    def __init__(self, app: Any, *, hosts: set[str], token: str | None = None,
                 clock: Callable[[], float] = time.time) -> None:  # fmt: skip
        self.app, self.hosts, self.clock = app, hosts, clock
        self.sessions: dict[str, tuple[_Session, float | None]] = {}  # digest -> (s, retire)
        self.fixed = token is not None
        self.secret = token if token is not None else install_token()
        self.stamp = self._stamp()
        self.folder = codes_folder()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if host not in self.hosts:
            await _plain(send, 421, "this dashboard answers on its own address only")
            return
        method, path = scope["method"], scope["path"]
        origin = headers.get("origin")
        if origin is not None and not origins.same_origin(origin, self.hosts):
            await _plain(send, 403, "cross-origin request refused")
            return
        if method == "GET" and path.startswith(PUBLIC):
            await self.app(scope, receive, _with_headers(send))
            return
        self._follow_secret()
        now = self.clock()
        query = _query(scope)
        if method == "GET" and "code" in query:
            if redeem(query["code"], self.folder, now):
                await self._enter(send, path, query, now)
            else:
                await _login_page(send, "That link has been used already or has expired: "
                                        "each works once, within five minutes.")  # fmt: skip
            return
        if path == "/alive" and self._bearer(headers):
            await self.app(scope, receive, _with_headers(send))
            return
        given = _cookie(headers.get("cookie", ""), COOKIE)
        found, why, retiring = self._session(given, now)
        if found is None:
            if method == "GET":
                await _login_page(send, why)
            else:
                await _plain(send, 401, "unauthorized: sign in through the link `waymark ui` "
                                        "prints")  # fmt: skip
            return
        if method in WRITES and origin is None and headers.get("sec-fetch-site") not in (
            None, "same-origin"
        ):  # fmt: skip
            await _plain(send, 403, "cross-site write refused")
            return
        state = scope.setdefault("state", {})
        state["csrf"] = csrf_token(self.secret, found.key)
        state["sign_out"] = lambda: self._end(found)
        extra = []
        if given and not retiring and method == "GET" and now - found.issued >= ROTATE_S:
            extra.append(("set-cookie", self._rotate(found, given, now)))
        await self.app(scope, receive, _with_headers(send, extra))

    # --- sessions -------------------------------------------------------------------

    def _session(self, given: str | None, now: float) -> tuple[_Session | None, str, bool]:
        """The live session a cookie names, why there is none ("" when no cookie came),
        and whether that cookie is one already replaced (it is not replaced again)."""
        if not given:
            return None, "", False
        held = self.sessions.get(_digest(given))
        ended = "That session has ended. Sign in again:"
        if held is None:
            return None, ended, False
        found, retire = held
        if now - found.seen > SESSION_IDLE_S or now - found.began > SESSION_MAX_S:
            self._end(found)
            return None, ended, False
        if retire is not None and now > retire:
            del self.sessions[_digest(given)]
            return None, ended, False
        found.seen = now
        return found, "", retire is not None

    async def _enter(self, send: Any, path: str, query: dict[str, str], now: float) -> None:
        """A redeemed code: a new session's cookie, and the same page without the code."""
        self._prune(now)
        found = _Session(key=secrets.token_urlsafe(24), began=now, seen=now, issued=now)
        rest = {k: v for k, v in query.items() if k != "code"}
        location = path + (f"?{urlencode(rest)}" if rest else "")
        headers = [(b"location", location.encode()),
                   (b"set-cookie", self._cookie_for(found).encode()),
                   (b"content-length", b"0"),
                   *[(k.encode(), v.encode()) for k, v in HEADERS.items()]]  # fmt: skip
        await send({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    def _cookie_for(self, found: _Session) -> str:
        value = secrets.token_urlsafe(32)
        self.sessions[_digest(value)] = (found, None)
        return f"{COOKIE}={value}; HttpOnly; SameSite=Strict; Path=/"

    def _rotate(self, found: _Session, old: str, now: float) -> str:
        """A new cookie for the session; the old one answers RETIRE_S more."""
        self.sessions[_digest(old)] = (found, now + RETIRE_S)
        found.issued = now
        return self._cookie_for(found)

    def _prune(self, now: float) -> None:
        """Forget the cookies of sessions that ended and those replaced a while ago."""
        for digest, (s, retire) in list(self.sessions.items()):
            if (now - s.seen > SESSION_IDLE_S or now - s.began > SESSION_MAX_S
                    or (retire is not None and now > retire)):  # fmt: skip
                del self.sessions[digest]

    def _end(self, found: _Session) -> None:
        for digest in [d for d, (s, _) in self.sessions.items() if s is found]:
            del self.sessions[digest]

    def _follow_secret(self) -> None:
        """A renewed install secret (`waymark ui --new-token`) ends every session."""
        if self.fixed:
            return
        stamp = self._stamp()
        if stamp != self.stamp:
            self.secret, self.stamp = install_token(), self._stamp()
            self.sessions.clear()

    def _stamp(self) -> tuple[int, int, int] | None:
        if self.fixed:
            return None
        try:
            st = os.stat(os.path.join(home.data_home(), TOKEN_FILE))
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _bearer(self, headers: dict[str, str]) -> bool:
        """The install secret itself (what `waymark ui` sends to find a running dashboard)."""
        scheme, _, given = headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip(), self.secret)


def sign_out_cookie() -> str:
    return f"{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"


def login_page(reason: str, *, good: bool = False) -> str:
    """The page for a browser without a session: how to get in, and nothing else."""
    from html import escape

    kind = "said" if good else "error"
    said = f'<p class="{kind}" role="status">{escape(reason)}</p>' if reason else ""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>Sign in · Waymark</title>"
        '<link rel="stylesheet" href="/static/style.css">'
        '<link rel="icon" href="/static/icon.svg" type="image/svg+xml"></head>\n'
        '<body><header><span class="brand">Waymark</span></header>\n<main class="login">'
        f"<h1>Sign in</h1>{said}<p>This dashboard opens through a one-time link. In a "
        "terminal on this machine, run</p><pre>waymark ui</pre><p>It prints a fresh link "
        "and opens it in your browser. Each link works once, within five minutes; the "
        "browser then stays signed in until you sign out, stop using it for 12 hours, or "
        "the dashboard stops. <code>waymark ui --new-token</code> signs every browser out."
        "</p></main></body></html>\n"
    )


def _with_headers(send: Callable[[dict[str, Any]], Awaitable[None]],
                  extra: list[tuple[str, str]] | None = None) -> Any:  # fmt: skip
    async def wrapped(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            names = {k.lower() for k, _ in message.get("headers", [])}
            more = [(k.encode(), v.encode()) for k, v in HEADERS.items()
                    if k.encode() not in names]  # fmt: skip
            more += [(k.encode(), v.encode()) for k, v in extra or []]
            message = {**message, "headers": [*message.get("headers", []), *more]}
        await send(message)

    return wrapped


async def _plain(send: Any, status: int, text: str) -> None:
    await _answer(send, status, text.encode(), b"text/plain; charset=utf-8")


async def _login_page(send: Any, reason: str) -> None:
    await _answer(send, 401, login_page(reason).encode(), b"text/html; charset=utf-8")


async def _answer(send: Any, status: int, body: bytes, kind: bytes) -> None:
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode()),
               *[(k.encode(), v.encode()) for k, v in HEADERS.items()]]  # fmt: skip
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _listing(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


def _query(scope: dict[str, Any]) -> dict[str, str]:
    from urllib.parse import parse_qsl

    return dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))


def check_csrf(form_token: str | None, expected: str) -> bool:
    return bool(form_token) and hmac.compare_digest(str(form_token), expected)
