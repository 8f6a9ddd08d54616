"""The dashboard's own pages: signing out, the live feed, Health (the last check kept, the
export), Settings, and what a second `waymark ui` asks."""

from __future__ import annotations

import os
from typing import Any

from waymark.errors import WaymarkError
from waymark.web import guard
from waymark.web.common import (
    HERE,
    Pages,
    Store,
    forbidden,
    int_arg,
    last_seq,
    quote,
    read_form,
    run_sync,
    see_other,
    shown,
)

FEED_POLL_S = 1.0


class AdminPages(Pages):
    """Sign-out, the feed, Health and its export, Settings."""

    def home(self, request: Any) -> Any:
        from starlette.responses import RedirectResponse

        project = request.query_params.get("project")
        return RedirectResponse("/overview" + (f"?project={quote(project)}" if project else ""),
                                status_code=303)  # fmt: skip

    def favicon(self, request: Any) -> Any:
        """The tab's icon, where a browser asks for it by its old name."""
        from starlette.responses import FileResponse

        return FileResponse(os.path.join(HERE, "static", "icon.svg"), media_type="image/svg+xml")

    async def sign_out(self, request: Any) -> Any:
        """This browser's session ends here (others stay; `waymark ui --new-token` ends all)."""
        from starlette.responses import HTMLResponse

        form = await read_form(request)
        if form is None:
            return forbidden()
        request.scope["state"]["sign_out"]()
        answer = HTMLResponse(guard.login_page("Signed out.", good=True), status_code=200)
        answer.headers["set-cookie"] = guard.sign_out_cookie()
        return answer

    def alive(self, request: Any) -> Any:
        """That this dashboard answers (a second `waymark ui` asks)."""
        from starlette.responses import JSONResponse

        from waymark import __version__

        return JSONResponse({"ok": True, "waymark": __version__, "pid": os.getpid()})

    def health(self, request: Any) -> Any:
        """`waymark doctor`'s checks, as a page: the store, the clients' hooks, the model,
        the warm server, a timed hook, the team store."""
        from waymark import home
        from waymark.health import doctor, fired
        from waymark.installers import checks, wiring
        from waymark.storage import backup

        checked = doctor.last_check() or doctor.check_and_keep(checks.client_checks)
        findings = checked["findings"]
        with Store() as opened:
            projects, project = opened.projects(request.query_params.get("project"))
        counts = {s: sum(1 for f in findings if f["status"] == s)
                  for s in (doctor.OK, doctor.WARN, doctor.FAIL)}  # fmt: skip
        hooks = fired.table({c: wiring.wired(c) for c in ("claude-code", "codex")},
                            wiring.installed_at())  # fmt: skip
        store = [(p, os.path.getsize(p)) for p in (home.db_path(), home.db_path() + "-wal")
                 if os.path.exists(p)]  # fmt: skip
        return self.render(request, "health.html", projects=projects, project=project,
                           findings=findings, counts=counts, healthy=not counts[doctor.FAIL],
                           hooks=hooks, installed_at=wiring.installed_at(), store=store,
                           backups=backup.listing(limit=10), checked_at=checked["at"],
                           said=request.query_params.get("said"),
                           error=request.query_params.get("error"))  # fmt: skip

    async def export(self, request: Any) -> Any:
        """The project's records as `waymark export` writes them (JSONL, a digest at its
        end), kept under the data home's exports as the CLI keeps them, and downloaded."""
        form = await read_form(request)
        if form is None:
            return forbidden()
        return await run_sync(self._export, form)

    def _export(self, form: dict[str, str]) -> Any:
        from starlette.responses import FileResponse

        from waymark.data import portable

        with Store() as opened:
            try:
                _, project = opened.projects(form.get("project"))
                if project is None:
                    raise WaymarkError("no project here")
                made = portable.write_export(opened.conn, portable.default_path(project),
                                             project.id)  # fmt: skip
            except WaymarkError as exc:
                return see_other(f"/health?project={quote(form.get('project', ''))}&error="
                                  + quote(exc.message))  # fmt: skip
        return FileResponse(made["path"], media_type="application/x-ndjson",
                            filename=os.path.basename(made["path"]),
                            headers={"x-waymark-digest": made["digest"]})  # fmt: skip

    async def recheck(self, request: Any) -> Any:
        """Run every check again (the page shows the last one kept)."""
        form = await read_form(request)
        if form is None:
            return forbidden()
        return await run_sync(self._recheck, form)

    def _recheck(self, form: dict[str, str]) -> Any:
        from waymark.health import doctor
        from waymark.installers import checks

        doctor.check_and_keep(checks.client_checks)
        project = form.get("project")
        where = "/health?said=" + quote("checked again just now")
        return see_other(where + (f"&project={quote(project)}" if project else ""))

    async def feed(self, request: Any) -> Any:
        """New audit events while the page is open (server-sent events): from the one the
        browser saw last (Last-Event-ID), else from now."""
        import asyncio
        import json

        from starlette.concurrency import run_in_threadpool
        from starlette.responses import StreamingResponse

        project_id = request.query_params.get("project")
        given = request.headers.get("last-event-id") or request.query_params.get("after")
        after = int_arg(given, -1) if given else await run_in_threadpool(last_seq)

        async def stream() -> Any:
            nonlocal after
            idle = 0
            yield "retry: 2000\n\n"
            while not await request.is_disconnected():
                found = await run_in_threadpool(events_after, project_id, after)
                for event in found:
                    after = event["seq"]
                    yield f"id: {after}\ndata: {json.dumps(event)}\n\n"
                idle = 0 if found else idle + 1
                if idle and idle % 15 == 0:
                    yield ": still here\n\n"
                await asyncio.sleep(FEED_POLL_S)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"x-accel-buffering": "no"})  # fmt: skip

    def settings(self, request: Any) -> Any:
        """Every setting `waymark config` has: its value, default, range and what it does,
        each changed through the same check; the latest changes from the audit log."""
        from waymark import settings

        q = request.query_params
        with Store() as opened:
            try:
                projects, project = opened.projects(q.get("project"))
            except WaymarkError as exc:
                return self.failed(request, exc)
            values, changes = settings.all_values(opened.conn), settings.changes(opened.conn)
        groups: dict[str, list[str]] = {}
        for key in settings.DEFAULTS:
            groups.setdefault(key.partition(".")[0].capitalize(), []).append(key)
        return self.render(request, "settings.html", projects=projects, project=project,
                           values=values, defaults=settings.DEFAULTS, help=settings.HELP,
                           choices=settings.CHOICES, ranges=settings.RANGES,
                           groups=list(groups.items()), changes=changes, shown=shown,
                           error=q.get("error"), said=q.get("said"))  # fmt: skip

    async def change_setting(self, request: Any) -> Any:
        form = await read_form(request)
        if form is None:
            return forbidden()
        return await run_sync(self._change_setting, form)

    def _change_setting(self, form: dict[str, str]) -> Any:
        from waymark import settings

        key = form.get("key", "")
        back = "/settings" + (f"?project={quote(form['project'])}&" if form.get("project")
                              else "?")  # fmt: skip
        with Store() as opened:
            try:
                if key not in settings.DEFAULTS:
                    settings.get(opened.conn, key)  # the CLI's own error, naming the known keys
                given = (settings.DEFAULTS[key] if form.get("do") == "reset"
                         else settings.parse(form.get("value", "")))  # fmt: skip
                value = settings.set_value(opened.conn, key, given, via="dashboard")
            except WaymarkError as exc:
                return see_other(f"{back}error={quote(exc.message)}#{quote(key)}")
        said = f"{key} = {shown(value)}" + (f"; {settings.AFTER[key]}" if key in settings.AFTER
                                             else "")  # fmt: skip
        return see_other(f"{back}said={quote(said)}#{quote(key)}")


def events_after(project_id: str | None, after: int) -> list[dict[str, Any]]:
    """The audit events after seq `after` of a project (and the store-wide ones), oldest
    first, as the feed shows them."""
    from waymark.storage.events import query_events
    from waymark.storage.memories import get_memories

    with Store() as opened:
        found = query_events(opened.conn, project_id=project_id, everywhere=project_id is None,
                             ops=(), since=None, limit=100, after_seq=after)  # fmt: skip
        named = get_memories(opened.conn, [e["memory_id"] for e in found if e["memory_id"]])
    out = []
    for e in reversed(found):
        m = named.get(e["memory_id"] or "")
        out.append({"seq": e["seq"], "at": e["at"], "op": e["op"], "memory_id": e["memory_id"],
                    "actor": e["actor"], "type": m.type if m else None,
                    "title": m.title if m and m.status != "erased" else None})  # fmt: skip
    return out
