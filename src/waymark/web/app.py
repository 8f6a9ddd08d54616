"""The dashboard's pages (#26): server-rendered (Jinja2, everything escaped), a strict CSP,
no script needed to read or change anything. A face: each route asks the library and
renders what it says; every change goes through the library (one revision, audited).

    build(host, port) -> the ASGI app, behind `guard.Guard`
"""

from __future__ import annotations

import os
from typing import Any

from waymark.web import guard
from waymark.web.admin import AdminPages
from waymark.web.common import HERE, linked
from waymark.web.memories import MemoryPages
from waymark.web.review import ReviewPages
from waymark.web.views import ViewPages


def build(host: str, port: int, *, token: str | None = None) -> Any:
    """The app for the address `host:port` (Host is checked against it)."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    from starlette.applications import Starlette
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    templates = Environment(
        loader=FileSystemLoader(os.path.join(HERE, "templates")),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    templates.filters["linked"] = linked
    pages = _Pages(templates)
    app = Starlette(
        routes=[
            Route("/", pages.home),
            Route("/overview", pages.overview),
            Route("/sessions", pages.sessions),
            Route("/sessions/{session_id}", pages.session),
            Route("/map", pages.code_map),
            Route("/memories", pages.memories),
            Route("/memories", pages.create, methods=["POST"]),
            Route("/memories/{memory_id}", pages.memory),
            Route("/memories/{memory_id}/diff", pages.diff),
            Route("/memories/{memory_id}/{change}", pages.change, methods=["POST"]),
            Route("/search", pages.search),
            Route("/checkpoints", pages.checkpoints),
            Route("/checkpoints", pages.release, methods=["POST"]),
            Route("/checkpoints/{checkpoint_id}", pages.checkpoint),
            Route("/review", pages.review),
            Route("/review", pages.decide, methods=["POST"]),
            Route("/timeline", pages.timeline),
            Route("/learning", pages.learning),
            Route("/learning", pages.learn, methods=["POST"]),
            Route("/settings", pages.settings),
            Route("/settings", pages.change_setting, methods=["POST"]),
            Route("/graph", pages.graph),
            Route("/next", pages.next_packet),
            Route("/next", pages.next_for_prompt, methods=["POST"]),
            Route("/alive", pages.alive),
            Route("/favicon.ico", pages.favicon),
            Route("/health", pages.health),
            Route("/health", pages.recheck, methods=["POST"]),
            Route("/feed", pages.feed),
            Route("/export", pages.export, methods=["POST"]),
            Route("/signout", pages.sign_out, methods=["POST"]),
            Mount("/static", StaticFiles(directory=os.path.join(HERE, "static")), name="static"),
        ],
    )
    names = {f"{host}:{port}"}
    if host in ("127.0.0.1", "::1", "localhost"):
        names |= {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
    return guard.Guard(app, token=token, hosts=names)


class _Pages(MemoryPages, ReviewPages, ViewPages, AdminPages):
    """Every route's handler: the pages of each part of the dashboard, together."""
