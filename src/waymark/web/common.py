"""What every dashboard page shares: one store connection per request, the base of the
page classes (rendering, a failure's page), and the small helpers of forms, links and
redirects."""

from __future__ import annotations

import os
from typing import Any

from waymark.errors import WaymarkError
from waymark.web import guard

PAGE = 50
HERE = os.path.dirname(os.path.realpath(__file__))  # beside its templates, as installed


class Pages:
    """The base of the page classes: the templates, and rendering with what every page
    needs (its CSRF token, where the live corner goes on from)."""

    def __init__(self, templates: Any) -> None:
        self.templates = templates

    def render(self, request: Any, name: str, status: int = 200, **values: Any) -> Any:
        from starlette.responses import HTMLResponse

        page = self.templates.get_template(name)
        values.setdefault("csrf", request.scope["state"]["csrf"])
        values.setdefault("error", None)
        if values.get("project") is not None and "feed_after" not in values:
            # the live corner goes on from what this page was drawn from: a write made
            # between drawing and connecting is not missed
            values["feed_after"] = last_seq()
        return HTMLResponse(page.render(**values), status_code=status)

    def failed(self, request: Any, exc: WaymarkError, status: int = 400) -> Any:
        return self.render(request, "error.html", status=status, code=exc.code,
                           message=exc.message, projects=[], project=None)  # fmt: skip


class Store:
    """One connection for one request (the request's thread), closed after it."""

    def __enter__(self) -> Store:
        from waymark.storage import connection as db

        self.conn = db.connect()
        return self

    def __exit__(self, *_: Any) -> None:
        self.conn.close()

    def projects(self, wanted: str | None) -> tuple[list[dict[str, Any]], Any]:
        """Every project (for the picker) and the one asked for (else the one with the
        newest session), as a Project."""
        from waymark.projects import manage
        from waymark.projects.resolve import resolve

        rows = manage.summaries(self.conn)
        if not rows:
            return rows, None
        row = (manage.find(self.conn, wanted) if wanted
               else max(rows, key=lambda r: r["last_session"] or ""))  # fmt: skip
        spec = row["name"] if row["kind"] == "name" else row["root"]
        return rows, resolve(self.conn, spec, create=False, bind=False)


def linked(text: str, project: Any) -> Any:
    """`text`, escaped, with each memory id in it a link to that memory's page (what an
    approval made, what a bulk action touched)."""
    import re

    from markupsafe import Markup, escape

    where = f"?project={project.id}" if project is not None else ""
    return Markup(re.sub(r"\b[0-9A-HJKMNP-TV-Z]{26}\b",
                         lambda m: f'<a href="/memories/{m.group(0)}{where}">{m.group(0)}</a>',
                         str(escape(text))))  # fmt: skip


def shown(value: Any) -> str:
    """A setting's value as `waymark config` prints it (JSON: true, 1750, "off")."""
    import json

    return json.dumps(value)


def page_links(total: int, offset: int, size: int) -> list[tuple[int, int, bool] | None]:
    """(number, offset, current) of the pages to link: the first, the last, and those near
    the current one (None between, for a gap)."""
    count = max(1, -(-total // size))
    here = offset // size
    wanted = sorted({0, count - 1, *range(max(0, here - 2), min(count, here + 3))})
    out: list[tuple[int, int, bool] | None] = []
    last = -1
    for n in wanted:
        if last >= 0 and n - last > 1:
            out.append(None)
        out.append((n + 1, n * size, n == here))
        last = n
    return out if count > 1 else []


def int_field(value: str | None, name: str) -> int:
    """A form's whole number (empty: 0), or a clear error naming the field."""
    from waymark.errors import InvalidArgument

    try:
        return int(value or 0)
    except ValueError:
        raise InvalidArgument(f"{name} takes a whole number (got {value!r})") from None


def int_arg(value: str | None, default: int) -> int:
    try:
        return max(0, int(value)) if value else default
    except ValueError:
        return default


async def read_form(request: Any) -> dict[str, str] | None:
    """The form of a write, or None when its CSRF token is missing or wrong."""
    raw = await request.form()
    form = {k: str(v) for k, v in raw.items()}
    if not guard.check_csrf(form.get("csrf"), request.scope["state"]["csrf"]):
        return None
    return form


async def run_sync(function: Any, *args: Any) -> Any:
    """A write's library call on a worker thread: the event loop never waits on SQLite."""
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(function, *args)


def forbidden() -> Any:
    from starlette.responses import PlainTextResponse

    return PlainTextResponse("missing or wrong CSRF token", status_code=403)


def see_other(location: str) -> Any:
    from starlette.responses import RedirectResponse

    return RedirectResponse(location, status_code=303)


def back(memory_id: str, form: dict[str, str], message: str) -> Any:
    return see_other(f"/memories/{memory_id}?project={form.get('project', '')}&error="
                      + quote(message))  # fmt: skip


def quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text[:1500])


def last_seq() -> int:
    from waymark.storage.events import last_seq

    with Store() as opened:
        return last_seq(opened.conn)
