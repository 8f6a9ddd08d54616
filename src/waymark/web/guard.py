"""What every request to the dashboard passes before a page sees it: the per-install token,
the Host and Origin it names, a CSRF token on every write, and the headers every answer
carries (a strict Content-Security-Policy among them).

The token is a secret in the data home (`ui.token`, owner-only), made on first use. The
first request carries it in the URL (`/?token=...`, which `waymark ui` prints); the answer
sets it as a cookie (HttpOnly, SameSite=Strict) and redirects to the same page without it,
so it leaves the address bar. A request without the token, or with a wrong one, gets 401
and nothing else. Host must name the address the server listens on (DNS rebinding is
refused), and a write must come from the same origin with the CSRF token of its form.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

from waymark import home
from waymark.base import origins

TOKEN_FILE = "ui.token"
COOKIE = "waymark_ui"
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


def install_token() -> str:
    """This install's secret (made on first use, owner-only)."""
    return home.secret(TOKEN_FILE)


def csrf_token(token: str) -> str:
    """The token a form carries for a write: derived from the secret, never the secret."""
    return hmac.new(token.encode(), b"waymark-ui-csrf", "sha256").hexdigest()


class Guard:
    """ASGI middleware: the checks above, then the app; every answer gets HEADERS."""

    def __init__(self, app: Any, *, token: str, hosts: set[str]) -> None:
        self.app, self.token, self.hosts = app, token, hosts
        self.csrf = csrf_token(token)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if host not in self.hosts:
            await _plain(send, 421, "this dashboard answers on its own address only")
            return
        method = scope["method"]
        origin = headers.get("origin")
        if origin is not None and not origins.same_origin(origin, self.hosts):
            await _plain(send, 403, "cross-origin request refused")
            return
        given = _cookie(headers.get("cookie", ""), COOKIE)
        query = _query(scope)
        if given is None or not hmac.compare_digest(given, self.token):
            offered = query.get("token")
            if offered and method == "GET" and hmac.compare_digest(offered, self.token):
                await _enter(send, scope, query, self.token)
                return
            await _plain(send, 401, "unauthorized")
            return
        if method in WRITES and origin is None and headers.get("sec-fetch-site") not in (
            None, "same-origin"
        ):  # fmt: skip
            await _plain(send, 403, "cross-site write refused")
            return
        scope.setdefault("state", {})["csrf"] = self.csrf
        await self.app(scope, receive, _with_headers(send))


def _with_headers(send: Callable[[dict[str, Any]], Awaitable[None]]) -> Any:
    async def wrapped(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            names = {k.lower() for k, _ in message.get("headers", [])}
            extra = [
                (k.encode(), v.encode()) for k, v in HEADERS.items() if k.encode() not in names
            ]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return wrapped


async def _plain(send: Any, status: int, text: str) -> None:
    body = text.encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"),
               (b"content-length", str(len(body)).encode()),
               *[(k.encode(), v.encode()) for k, v in HEADERS.items()]]  # fmt: skip
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _enter(send: Any, scope: dict[str, Any], query: dict[str, str], token: str) -> None:
    """The tokened first request: the cookie, and the same page without the token."""
    rest = {k: v for k, v in query.items() if k != "token"}
    location = scope["path"] + (f"?{urlencode(rest)}" if rest else "")
    cookie = f"{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/"
    headers = [(b"location", location.encode()), (b"set-cookie", cookie.encode()),
               (b"content-length", b"0"),
               *[(k.encode(), v.encode()) for k, v in HEADERS.items()]]  # fmt: skip
    await send({"type": "http.response.start", "status": 303, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


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
