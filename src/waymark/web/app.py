"""The dashboard's pages (#26): server-rendered (Jinja2, everything escaped), a strict CSP,
no script needed to read or change anything. A face: each route asks the library and
renders what it says; every change goes through the library (one revision, audited).

    build(host, port) -> the ASGI app, behind `guard.Guard`
"""

from __future__ import annotations

import os
from typing import Any

from waymark.errors import WaymarkError
from waymark.web import guard

PAGE = 50
FEED_POLL_S = 1.0
HERE = os.path.dirname(os.path.realpath(__file__))  # beside its templates, as installed


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
    templates.filters["linked"] = _linked
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


class _Pages:
    def __init__(self, templates: Any) -> None:
        self.templates = templates

    # --- rendering ------------------------------------------------------------------

    def render(self, request: Any, name: str, status: int = 200, **values: Any) -> Any:
        from starlette.responses import HTMLResponse

        page = self.templates.get_template(name)
        values.setdefault("csrf", request.scope["state"]["csrf"])
        values.setdefault("error", None)
        if values.get("project") is not None and "feed_after" not in values:
            # the live corner goes on from what this page was drawn from: a write made
            # between drawing and connecting is not missed
            values["feed_after"] = _last_seq()
        return HTMLResponse(page.render(**values), status_code=status)

    def failed(self, request: Any, exc: WaymarkError, status: int = 400) -> Any:
        return self.render(request, "error.html", status=status, code=exc.code,
                           message=exc.message, projects=[], project=None)  # fmt: skip

    # --- pages ----------------------------------------------------------------------

    def home(self, request: Any) -> Any:
        from starlette.responses import RedirectResponse

        project = request.query_params.get("project")
        return RedirectResponse("/overview" + (f"?project={_quote(project)}" if project else ""),
                                status_code=303)  # fmt: skip

    def favicon(self, request: Any) -> Any:
        """The tab's icon, where a browser asks for it by its old name."""
        from starlette.responses import FileResponse

        return FileResponse(os.path.join(HERE, "static", "icon.svg"), media_type="image/svg+xml")

    async def sign_out(self, request: Any) -> Any:
        """This browser's session ends here (others stay; `waymark ui --new-token` ends all)."""
        from starlette.responses import HTMLResponse

        form = await _form(request)
        if form is None:
            return _forbidden()
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
        from waymark.installers import checks
        from waymark.storage import backup

        checked = doctor.last_check() or doctor.check_and_keep(checks.client_checks)
        findings = checked["findings"]
        with _Store() as opened:
            projects, project = opened.projects(request.query_params.get("project"))
        counts = {s: sum(1 for f in findings if f["status"] == s)
                  for s in (doctor.OK, doctor.WARN, doctor.FAIL)}  # fmt: skip
        hooks = fired.table({c: checks.wired(c) for c in ("claude-code", "codex")},
                            checks.installed_at())  # fmt: skip
        store = [(p, os.path.getsize(p)) for p in (home.db_path(), home.db_path() + "-wal")
                 if os.path.exists(p)]  # fmt: skip
        return self.render(request, "health.html", projects=projects, project=project,
                           findings=findings, counts=counts, healthy=not counts[doctor.FAIL],
                           hooks=hooks, installed_at=checks.installed_at(), store=store,
                           backups=backup.listing(limit=10), checked_at=checked["at"],
                           said=request.query_params.get("said"),
                           error=request.query_params.get("error"))  # fmt: skip

    async def export(self, request: Any) -> Any:
        """The project's records as `waymark export` writes them (JSONL, a digest at its
        end), kept under the data home's exports as the CLI keeps them, and downloaded."""
        form = await _form(request)
        if form is None:
            return _forbidden()
        return await _run_sync(self._export, form)

    def _export(self, form: dict[str, str]) -> Any:
        from starlette.responses import FileResponse

        from waymark.data import portable

        with _Store() as opened:
            try:
                _, project = opened.projects(form.get("project"))
                if project is None:
                    raise WaymarkError("no project here")
                made = portable.write_export(opened.conn, portable.default_path(project),
                                             project.id)  # fmt: skip
            except WaymarkError as exc:
                return _see_other(f"/health?project={_quote(form.get('project', ''))}&error="
                                  + _quote(exc.message))  # fmt: skip
        return FileResponse(made["path"], media_type="application/x-ndjson",
                            filename=os.path.basename(made["path"]),
                            headers={"x-waymark-digest": made["digest"]})  # fmt: skip

    async def recheck(self, request: Any) -> Any:
        """Run every check again (the page shows the last one kept)."""
        form = await _form(request)
        if form is None:
            return _forbidden()
        return await _run_sync(self._recheck, form)

    def _recheck(self, form: dict[str, str]) -> Any:
        from waymark.health import doctor
        from waymark.installers import checks

        doctor.check_and_keep(checks.client_checks)
        project = form.get("project")
        where = "/health?said=" + _quote("checked again just now")
        return _see_other(where + (f"&project={_quote(project)}" if project else ""))

    async def feed(self, request: Any) -> Any:
        """New audit events while the page is open (server-sent events): from the one the
        browser saw last (Last-Event-ID), else from now."""
        import asyncio
        import json

        from starlette.concurrency import run_in_threadpool
        from starlette.responses import StreamingResponse

        project_id = request.query_params.get("project")
        given = request.headers.get("last-event-id") or request.query_params.get("after")
        after = _int(given, -1) if given else await run_in_threadpool(_last_seq)

        async def stream() -> Any:
            nonlocal after
            idle = 0
            yield "retry: 2000\n\n"
            while not await request.is_disconnected():
                found = await run_in_threadpool(_events_after, project_id, after)
                for event in found:
                    after = event["seq"]
                    yield f"id: {after}\ndata: {json.dumps(event)}\n\n"
                idle = 0 if found else idle + 1
                if idle and idle % 15 == 0:
                    yield ": still here\n\n"
                await asyncio.sleep(FEED_POLL_S)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"x-accel-buffering": "no"})  # fmt: skip

    def overview(self, request: Any) -> Any:
        """The project at a glance, with its pictures."""
        from waymark.health.overview import overview
        from waymark.memories.kinds import TYPES
        from waymark.web import charts

        with _Store() as opened:
            try:
                projects, project = opened.projects(request.query_params.get("project"))
                seen = overview(opened.conn, project) if project is not None else None
            except WaymarkError as exc:
                return self.failed(request, exc)
        pictures = {}
        if seen is not None:
            states = ("active", "superseded", "archived", "erased")
            by = seen["memories"]
            pictures = {
                "tokens": charts.columns([(t["at"][5:16].replace("T", " "), t["tokens"])
                                          for t in seen["tokens"]]),
                "types": charts.rows([(kind, [(s, by.get(s, {}).get(kind, 0)) for s in states])
                                      for kind in TYPES
                                      if any(by.get(s, {}).get(kind) for s in states)]),
                "ages": charts.columns(charts.age_buckets(seen["waiting_since"], seen["now"]),
                                       height=110),
                "hooks": charts.rows([(f"{h['client']} {h['event']}",
                                       [("p50", h["p50"] or 0),
                                        ("p95", max(0, (h["p95"] or 0) - (h["p50"] or 0)),
                                         h["p95"] or 0)])
                                      for h in seen["hooks"]]),
            }  # fmt: skip
        return self.render(request, "overview.html", projects=projects, project=project,
                           seen=seen, pictures=pictures)  # fmt: skip

    def sessions(self, request: Any) -> Any:
        from waymark.packets import sessions

        offset = _int(request.query_params.get("offset"), 0)
        with _Store() as opened:
            try:
                projects, project = opened.projects(request.query_params.get("project"))
                listed = (sessions.listing(opened.conn, project, limit=PAGE, offset=offset)
                          if project is not None else {"sessions": [], "total": 0})  # fmt: skip
            except WaymarkError as exc:
                return self.failed(request, exc)
        return self.render(request, "sessions.html", projects=projects, project=project,
                           listed=listed, offset=offset, page_size=PAGE,
                           tools=sessions.tool_definitions())  # fmt: skip

    def session(self, request: Any) -> Any:
        from waymark.packets import sessions

        with _Store() as opened:
            try:
                projects, project = opened.projects(request.query_params.get("project"))
                if project is None:
                    raise WaymarkError("no project here")
                found = sessions.detail(opened.conn, project, request.path_params["session_id"])
            except WaymarkError as exc:
                return self.failed(request, exc, 404 if exc.code == "not_found" else 400)
        return self.render(request, "session.html", projects=projects, project=project,
                           s=found, tools=sessions.tool_definitions())  # fmt: skip

    def code_map(self, request: Any) -> Any:
        """The code map: what depends on a file or declaration (the impact answer, drawn),
        and what changed between two snapshots."""
        from waymark.codemap import changes, questions
        from waymark.errors import NotFound
        from waymark.memories import graph
        from waymark.web import charts

        q = request.query_params
        target, depth = (q.get("target") or "").strip(), min(_int(q.get("depth"), 2) or 2, 5)
        with _Store() as opened:
            try:
                projects, project = opened.projects(q.get("project"))
                if project is None:
                    raise WaymarkError("no project here")
                status = questions.status(opened.conn, project, limit=20)
                impact = picture = moved = None
                problem, notes = None, {}
                try:
                    if target:
                        impact = questions.impact(opened.conn, project, target, depth)
                        notes = graph.about(opened.conn, project, [impact["target"]] + [
                            d["at"] for d in impact["dependents"]])  # fmt: skip
                        picture = charts.graph(impact["target"], impact["dependents"],
                                               notes={p: len(m) for p, m in notes.items()})  # fmt: skip
                    if len(status["snapshots"]) >= 2 or q.get("from"):
                        moved = changes.changes(opened.conn, project, since=q.get("from") or None,
                                                until=q.get("to") or None)  # fmt: skip
                except (NotFound, WaymarkError) as exc:
                    problem = exc.message
            except WaymarkError as exc:
                return self.failed(request, exc)
        return self.render(request, "map.html", projects=projects, project=project,
                           mapped=status, target=target, depth=depth, impact=impact,
                           picture=picture, moved=moved, error=problem, notes=notes,
                           since=q.get("from") or "", until=q.get("to") or "")  # fmt: skip

    def learning(self, request: Any) -> Any:
        """The error log, the insights it proposed, and the rules they became, with how
        often each rule helped (`waymark errors`, `insights`, `rules`)."""
        from waymark.curation import learning, mistakes

        q = request.query_params
        with _Store() as opened:
            try:
                projects, project = opened.projects(q.get("project"))
                rules, insights, errors = [], [], []
                if project is not None:
                    rules = learning.listed(opened.conn, project, "rule")
                    insights = learning.listed(opened.conn, project, "insight")
                    errors = mistakes.log(opened.conn, project, days=ERROR_DAYS)
            except WaymarkError as exc:
                return self.failed(request, exc)
        counts: dict[str, int] = {}
        for e in errors:
            counts[e["category"] or "other"] = counts.get(e["category"] or "other", 0) + 1
        return self.render(request, "learning.html", projects=projects, project=project,
                           rules=rules, insights=insights, errors=errors[:ERROR_ROWS],
                           counts=counts, days=ERROR_DAYS,
                           error=q.get("error"), said=q.get("said"))  # fmt: skip

    async def learn(self, request: Any) -> Any:
        form = await _form(request)
        if form is None:
            return _forbidden()
        return await _run_sync(self._learn, form)

    def _learn(self, form: dict[str, str]) -> Any:
        """One vote, promotion, rating or retirement, as the CLI's `insights` and `rules`."""
        from waymark.curation import learning

        action, memory_id = form.get("action", ""), form.get("id", "")
        with _Store() as opened:
            try:
                _, project = opened.projects(form.get("project"))
                if project is None:
                    raise WaymarkError("no project here")
                conn = opened.conn
                done = {
                    "up": lambda: learning.vote(conn, project, memory_id, True),
                    "down": lambda: learning.vote(conn, project, memory_id, False),
                    "promote": lambda: learning.promote(conn, project, memory_id),
                    "helped": lambda: learning.rate(conn, project, memory_id, True),
                    "missed": lambda: learning.rate(conn, project, memory_id, False),
                    "retire": lambda: learning.retire(conn, project, memory_id),
                }.get(action)
                if done is None:
                    raise WaymarkError("vote up or down, promote, helped, missed or retire")
                row = done()
            except WaymarkError as exc:
                return _see_other(f"/learning?project={_quote(form.get('project', ''))}&error="
                                  + _quote(exc.message))  # fmt: skip
        said = {"up": "voted up", "down": "voted down", "promote": "promoted to a rule",
                "helped": "rated: it helped", "missed": "rated: it missed",
                "retire": "retired"}[action] + f": {row['memory_id']} is a {row['kind']}, {row['status']}"  # fmt: skip
        where = "#rules" if row["kind"] == "rule" else "#insights"
        return _see_other(f"/learning?project={project.id}&said={_quote(said)}{where}")

    def settings(self, request: Any) -> Any:
        """Every setting `waymark config` has: its value, default, range and what it does,
        each changed through the same check; the latest changes from the audit log."""
        from waymark import settings

        q = request.query_params
        with _Store() as opened:
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
                           groups=list(groups.items()), changes=changes, shown=_shown,
                           error=q.get("error"), said=q.get("said"))  # fmt: skip

    async def change_setting(self, request: Any) -> Any:
        form = await _form(request)
        if form is None:
            return _forbidden()
        return await _run_sync(self._change_setting, form)

    def _change_setting(self, form: dict[str, str]) -> Any:
        from waymark import settings

        key = form.get("key", "")
        back = "/settings" + (f"?project={_quote(form['project'])}&" if form.get("project")
                              else "?")  # fmt: skip
        with _Store() as opened:
            try:
                if key not in settings.DEFAULTS:
                    settings.get(opened.conn, key)  # the CLI's own error, naming the known keys
                given = (settings.DEFAULTS[key] if form.get("do") == "reset"
                         else settings.parse(form.get("value", "")))  # fmt: skip
                value = settings.set_value(opened.conn, key, given, via="dashboard")
            except WaymarkError as exc:
                return _see_other(f"{back}error={_quote(exc.message)}#{_quote(key)}")
        said = f"{key} = {_shown(value)}" + (f"; {settings.AFTER[key]}" if key in settings.AFTER
                                             else "")  # fmt: skip
        return _see_other(f"{back}said={_quote(said)}#{_quote(key)}")

    def graph(self, request: Any) -> Any:
        """The memory graph around one memory (links, revisions, files), explorable: each
        memory drawn opens the graph around it."""
        from waymark.memories import graph
        from waymark.web import charts

        q = request.query_params
        memory = (q.get("memory") or "").strip()
        depth = _int(q.get("depth"), 2) if q.get("depth") in ("1", "2", "3") else 2
        with _Store() as opened:
            try:
                projects, project = opened.projects(q.get("project"))
                seen = picture = None
                starts: list[Any] = []
                if project is not None:
                    if memory:
                        seen = graph.neighbourhood(opened.conn, project, memory, depth=depth)
                        picture = charts.network(seen["nodes"], seen["edges"])
                    else:
                        starts = graph.starts(opened.conn, project)
            except WaymarkError as exc:
                return self.failed(request, exc, 404 if exc.code == "not_found" else 400)
        named = {n["id"]: n for n in seen["nodes"]} if seen else {}
        return self.render(request, "graph.html", projects=projects, project=project,
                           seen=seen, picture=picture, memory=memory, depth=depth,
                           depths=graph.DEPTHS, starts=starts, named=named)  # fmt: skip

    def timeline(self, request: Any) -> Any:
        """Sessions, checkpoint saves, decisions and reverts on one time axis, a window at
        a time."""
        from waymark.base import clock
        from waymark.health import timeline
        from waymark.web import charts

        q = request.query_params
        window = q.get("window") if q.get("window") in timeline.WINDOWS else "week"
        before = q.get("before") or None
        with _Store() as opened:
            try:
                projects, project = opened.projects(q.get("project"))
                seen = picture = None
                if project is not None:
                    seen = timeline.timeline(opened.conn, project, days=timeline.WINDOWS[window],
                                             before=before)  # fmt: skip
                    picture = charts.timeline(seen["events"], seen["since"], seen["until"])
            except (WaymarkError, ValueError) as exc:
                message = exc.message if isinstance(exc, WaymarkError) else "a date as 2026-12-01"
                return self.failed(request, WaymarkError(message))
        return self.render(request, "timeline.html", projects=projects, project=project,
                           seen=seen, picture=picture, window=window, before=before or "",
                           windows=timeline.WINDOWS, most=timeline.MOST, now=clock.now(),
                           by_day=_by_day(seen["events"] if seen else []))  # fmt: skip

    def next_packet(self, request: Any) -> Any:
        """What the agent will see next: the SessionStart packet a new session of the
        chosen client would get, made as the hook makes it, nothing recorded."""
        return self._next(request, request.query_params, None)

    async def next_for_prompt(self, request: Any) -> Any:
        """The same, with the packet a typed prompt would bring (a POST: the prompt stays
        out of the address and the browser's history)."""
        form = await _form(request)
        if form is None:
            return _forbidden()
        return await _run_sync(self._next, request, form, form.get("prompt", ""))

    def _next(self, request: Any, given: Any, prompt: str | None) -> Any:
        from waymark.packets import preview

        client = given.get("client") or "claude-code"
        with _Store() as opened:
            try:
                projects, project = opened.projects(given.get("project"))
                start = asked = None
                problem = None
                if project is not None:
                    start = preview.next_start(opened.conn, project, client)
                    if prompt is not None:
                        try:
                            asked = preview.next_prompt(opened.conn, project, client, prompt)
                        except WaymarkError as exc:
                            problem = exc.message
            except WaymarkError as exc:
                return self.failed(request, exc)
        return self.render(request, "next.html", projects=projects, project=project,
                           clients=preview.CLIENTS, client=client, start=start, asked=asked,
                           prompt=prompt or "", error=problem)  # fmt: skip

    def memories(self, request: Any) -> Any:
        """The browse contract's filters: words, type, tag, scope (and its target), agent,
        branch, and whether archived and replaced ones show too."""
        from waymark.memories import browse, store
        from waymark.memories.kinds import TYPES
        from waymark.memories.scope import SCOPES

        q = request.query_params
        said = {k: (q.get(k) or "").strip() for k in FILTERS}
        with _Store() as opened:
            try:
                projects, project = opened.projects(q.get("project"))
                offset = _int(q.get("offset"), 0)
                page, sharing = None, {}
                total: int | None = 0
                if project is not None:
                    page = browse.list_memories(
                        opened.conn, project, query=said["q"] or None,
                        types=[said["type"]] if said["type"] else [],
                        tags=[said["tag"]] if said["tag"] else [],
                        scope=said["scope"] or None, target=said["target"] or None,
                        agent=said["agent"] or None, branch=said["branch"] or None,
                        include_inactive=said["inactive"] == "1", limit=PAGE, offset=offset,
                    )  # fmt: skip
                    sharing = store.sharing_of(opened.conn, project, page.results)
                    total = browse.count_memories(
                        opened.conn, project, query=said["q"] or None,
                        types=[said["type"]] if said["type"] else [],
                        tags=[said["tag"]] if said["tag"] else [],
                        scope=said["scope"] or None, target=said["target"] or None,
                        agent=said["agent"] or None, branch=said["branch"] or None,
                        include_inactive=said["inactive"] == "1",
                    )  # fmt: skip
            except WaymarkError as exc:
                return self.failed(request, exc)
            rows = [{"m": m, "sharing": sharing.get(m.id),
                     "pulled": (m.client or "").startswith("team:")}
                    for m in (page.results if page else [])]  # fmt: skip
            keep = "&".join(f"{k}={_quote(v)}" for k, v in said.items() if v)
            return self.render(
                request, "memories.html", projects=projects, project=project, rows=rows,
                page=page, said=said, types=TYPES, scopes=SCOPES, offset=offset, keep=keep,
                error=q.get("error"), total=total, capped=total is not None
                and total > browse.COUNT_CAP, size=PAGE,
                pages=_pages(min(total, browse.COUNT_CAP), offset, PAGE) if total else [],
            )  # fmt: skip

    async def create(self, request: Any) -> Any:
        """A new memory from the list page's form, through the library as `waymark
        remember` writes one: the same validation and errors, a flagged text held."""
        form = await _form(request)
        if form is None:
            return _forbidden()
        return await _run_sync(self._create, form)

    def _create(self, form: dict[str, str]) -> Any:
        from waymark.curation.agent_writes import Held, save
        from waymark.memories.draft import make_draft

        with _Store() as opened:
            project_spec = form.get("project", "")
            try:
                _, project = opened.projects(project_spec)
                if project is None:
                    raise WaymarkError("no project here")
                tags = [t.strip() for t in form.get("tags", "").split(",") if t.strip()]
                draft = make_draft(
                    project, type=form.get("type") or "note", content=form.get("content", ""),
                    title=form.get("title") or None, scope=form.get("scope") or "project",
                    target=form.get("target") or None, tags=tags,
                    priority=_int_field(form.get("priority"), "priority"),
                    pinned=form.get("pinned") == "1",
                    valid_until=form.get("valid_until") or None,
                    expiry_given=bool(form.get("valid_until")), actor="user",
                    client="dashboard", base_dir=project.files, check_symbol=True,
                )  # fmt: skip
                saved = save(opened.conn, project, draft)
            except WaymarkError as exc:
                return _see_other(f"/memories?project={_quote(project_spec)}&error="
                                  + _quote(exc.message))  # fmt: skip
            if isinstance(saved, Held):
                said = "held for review: " + "; ".join(saved.flags)
                return _see_other(f"/review?project={project.id}&said={_quote(said)}")
            said = "remembered" if saved.created else "already remembered: this is it"
            return _see_other(f"/memories/{saved.memory.id}?project={project.id}"
                              f"&said={_quote(said)}")  # fmt: skip

    def memory(self, request: Any) -> Any:
        from waymark.curation import feedback
        from waymark.memories import links, observations, store
        from waymark.memories.kinds import TYPES
        from waymark.memories.scope import SCOPES

        with _Store() as opened:
            try:
                projects, project = opened.projects(request.query_params.get("project"))
                m = store.get(opened.conn, request.path_params["memory_id"])
                chain = store.history(opened.conn, m.id)
                related = links.links_of(opened.conn, m.id)
                made = store.authorship(opened.conn, m.id)
                why = store.archived_why(opened.conn, m.id) if m.status == "archived" else None
                team = project is not None and store.is_team_memory(opened.conn, project, m)
                seen = (observations.history(opened.conn, project, m.id, limit=20)
                        if project is not None and m.project_id in (project.id, None)
                        else None)  # fmt: skip
                fresh = observations.evidence_state(m, project.files if project else None)
                verdicts = feedback.counts(opened.conn, m.id)
            except WaymarkError as exc:
                return self.failed(request, exc, 404 if exc.code == "not_found" else 400)
            return self.render(
                request, "memory.html", projects=projects, project=project, m=m,
                chain=chain, links=related, made=made, archived=why, team=team,
                observed=seen, fresh=fresh, verdicts=verdicts, verdict_names=feedback.VERDICTS,
                error=request.query_params.get("error"), said=request.query_params.get("said"),
                types=TYPES, scopes=SCOPES,
            )  # fmt: skip

    def diff(self, request: Any) -> Any:
        """How a revision differs from another of its chain (default: the one it replaced),
        word by word, title and text."""
        from waymark.memories import store

        with _Store() as opened:
            try:
                projects, project = opened.projects(request.query_params.get("project"))
                m = store.get(opened.conn, request.path_params["memory_id"])
                chain = store.history(opened.conn, m.id)
                other_id = request.query_params.get("with") or m.supersedes
                if not other_id:
                    raise WaymarkError("this is the first revision: nothing to compare with")
                other = store.get(opened.conn, other_id)
                if other.id not in {r.id for r in chain}:
                    raise WaymarkError(f"{other.id} is not a revision of this memory")
            except WaymarkError as exc:
                return self.failed(request, exc, 404 if exc.code == "not_found" else 400)
            older, newer = sorted((other, m), key=lambda r: r.created_at)
            return self.render(
                request, "diff.html", projects=projects, project=project, m=m, older=older,
                newer=newer, title=_words_diff(older.title, newer.title),
                content=_words_diff(older.content, newer.content), chain=chain,
            )  # fmt: skip

    async def change(self, request: Any) -> Any:
        """A change to one memory from its page (CHANGES), through the library: back to the
        memory it made, or to its page with what went wrong."""
        form = await _form(request)
        if form is None:
            return _forbidden()
        if request.path_params["change"] not in CHANGES:
            from starlette.responses import PlainTextResponse

            return PlainTextResponse("no such change", status_code=404)
        return await _run_sync(self._change, request, form)

    def _change(self, request: Any, form: dict[str, str]) -> Any:
        memory_id = request.path_params["memory_id"]
        with _Store() as opened:
            try:
                _, project = opened.projects(form.get("project"))
                if project is None:
                    raise WaymarkError("no project here")
                where = CHANGES[request.path_params["change"]](
                    opened.conn, project, memory_id, form
                )
            except WaymarkError as exc:
                return _back(memory_id, form, exc.message)
            joiner = "&" if "?" in where else "?"
            return _see_other(f"{where}{joiner}project={project.id}")

    def search(self, request: Any) -> Any:
        """Recall as the agent gets it (hybrid where the model is here), with each result's
        score breakdown."""
        from waymark.memories import store
        from waymark.projects import git
        from waymark.recall import ranked, semantic
        from waymark.recall.floor import asked_hits
        from waymark.recall.why import reasons

        query = (request.query_params.get("q") or "").strip()
        limit = SEARCH_MORE if request.query_params.get("more") == "1" else SEARCH_FIRST
        with _Store() as opened:
            try:
                projects, project = opened.projects(request.query_params.get("project"))
                hits, hybrid = [], False
                if project is not None and query:
                    near = semantic.neighbours(opened.conn, project, [query], mode="auto")
                    hybrid = near is not None
                    hits = ranked.recall(
                        opened.conn, project, query, limit=limit,
                        semantic=near[0] if near else None,
                        settings=ranked.settings_for(opened.conn),
                        current_branch=git.branch(project.files),
                    )  # fmt: skip
                    if hybrid and hits:
                        hits = asked_hits(hits)
                results = [{"hit": h, "made": store.authorship(opened.conn, h.memory.id),
                            "why": reasons(opened.conn, h, query),
                            "moved": [(n, v) for n, v in h.explain["multipliers"].items()
                                      if abs(v - 1.0) >= 0.0005]}  # what shows at 3 places
                           for h in hits]  # fmt: skip
            except WaymarkError as exc:
                return self.failed(request, exc)
            return self.render(request, "search.html", projects=projects, project=project,
                               q=query, results=results, hybrid=hybrid, limit=limit,
                               more=limit < SEARCH_MORE and len(results) >= limit)  # fmt: skip

    def checkpoints(self, request: Any) -> Any:
        from waymark.handoff import checkpoints

        with _Store() as opened:
            try:
                projects, project = opened.projects(request.query_params.get("project"))
                listed = (checkpoints.listing(opened.conn, project, limit=PAGE)
                          if project is not None else [])  # fmt: skip
            except WaymarkError as exc:
                return self.failed(request, exc)
            return self.render(request, "checkpoints.html", projects=projects,
                               project=project, listed=listed)  # fmt: skip

    def checkpoint(self, request: Any) -> Any:
        from waymark.handoff import checkpoints
        from waymark.handoff.revision import render_lesson

        with _Store() as opened:
            try:
                projects, project = opened.projects(request.query_params.get("project"))
                if project is None:
                    raise WaymarkError("no project here")
                found = checkpoints.get(opened.conn, project,
                                        request.path_params["checkpoint_id"])  # fmt: skip
                timeline = checkpoints.revisions(opened.conn, found.id)
                learned = [{"text": render_lesson(lesson), "historical": lesson["historical"]}
                           for lesson in checkpoints.lessons(opened.conn, found)]  # fmt: skip
            except WaymarkError as exc:
                return self.failed(request, exc, 404 if exc.code == "not_found" else 400)
            return self.render(request, "checkpoint.html", projects=projects, project=project,
                               c=found, timeline=timeline, lessons=learned)  # fmt: skip

    def review(self, request: Any) -> Any:
        from waymark.curation import candidates

        q = request.query_params
        kind, age = q.get("kind") or None, q.get("age") or None
        offset = _int(q.get("offset"), 0)
        with _Store() as opened:
            try:
                projects, project = opened.projects(q.get("project"))
                waiting, total = [], 0
                if project is not None:
                    waiting = candidates.pending(opened.conn, project, kind=kind, age=age,
                                                 limit=REVIEW_PAGE, offset=offset)  # fmt: skip
                    total = candidates.count(opened.conn, project, kind=kind, age=age)
            except WaymarkError as exc:
                return self.failed(request, exc)
            stale = candidates.stale(opened.conn, waiting)
            named = candidates.sources(opened.conn, waiting)
        keep = "&".join(f"{k}={_quote(v)}" for k, v in (("kind", kind), ("age", age)) if v)
        return self.render(request, "review.html", projects=projects, project=project,
                           waiting=waiting, stale=stale, named=named, error=q.get("error"),
                           said=q.get("said"), kinds=candidates.KINDS, kind=kind or "",
                           ages=AGES, age=age or "", offset=offset, total=total,
                           page=REVIEW_PAGE, keep=keep,
                           pages=_pages(total, offset, REVIEW_PAGE),
                           undo=[i for i in (q.get("undo") or "").split(",") if i][:REVIEW_PAGE])  # fmt: skip

    async def decide(self, request: Any) -> Any:
        from starlette.datastructures import FormData

        raw: FormData = await request.form()
        if not guard.check_csrf(str(raw.get("csrf") or ""), request.scope["state"]["csrf"]):
            return _forbidden()
        form = {k: str(v) for k, v in raw.items()}
        page = [str(v) for v in raw.getlist("page_id")]
        ids = page if form.get("decision", "").endswith("-page") else [
            str(v) for v in raw.getlist("id")]  # fmt: skip
        return await _run_sync(self._decide, form, ids)

    def _decide(self, form: dict[str, str], ids: list[str]) -> Any:
        from waymark.curation import candidates

        decision = form.get("decision", "").removesuffix("-page")
        if form.get("one"):  # a row's own button: that candidate alone
            decision, _, one = form["one"].partition(":")
            ids = [one]
        with _Store() as opened:
            try:
                _, project = opened.projects(form.get("project"))
                if project is None:
                    raise WaymarkError("no project here")
                if decision not in ("approve", "reject", "undo"):
                    raise WaymarkError("approve, reject or undo")
                if not ids:
                    raise WaymarkError("select a proposal first")
            except WaymarkError as exc:
                return _see_other(f"/review?project={_quote(form.get('project', ''))}&error="
                                  + _quote(exc.message))  # fmt: skip
            note = form.get("reason") or None
            done, skipped, undoable = [], [], []
            for candidate_id in ids[: REVIEW_PAGE * 5]:  # every one tried, each on its own
                try:
                    if decision == "approve":
                        made = candidates.approve(opened.conn, project, candidate_id,
                                                  actor="user", note=note, client="dashboard")  # fmt: skip
                        memory = made.get("memory") or {}
                        done.append(f"{candidate_id}" + (f" -> {memory['id']}" if memory else ""))
                        if made["candidate"]["action"] in candidates.UNDONE:
                            undoable.append(candidate_id)
                    elif decision == "reject":
                        candidates.reject(opened.conn, project, candidate_id, actor="user",
                                          note=note)  # fmt: skip
                        done.append(candidate_id)
                        undoable.append(candidate_id)
                    else:
                        back = candidates.undo(opened.conn, project, candidate_id, actor="user")
                        moved = [*back["archived"], *back["unarchived"]]
                        done.append(candidate_id + (f" ({', '.join(moved)} back as before)"
                                                    if moved else ""))  # fmt: skip
                except WaymarkError as exc:
                    skipped.append(f"{candidate_id}: {exc.message}")
            verb = {"approve": "approved", "reject": "rejected", "undo": "undid"}[decision]
            said = f"{verb} {len(done)}" + (f" ({', '.join(done)})" if done else "")
            if decision == "undo" and done:
                said += ": waiting for review again"
            if skipped:
                said += f"; skipped {len(skipped)}: " + "; ".join(skipped)
            where = f"/review?project={project.id}&said={_quote(said)}"
            if undoable:
                where += "&undo=" + ",".join(undoable)
            return _see_other(where)


def _edit(conn: Any, project: Any, memory_id: str, form: dict[str, str]) -> str:
    """A new revision with the form's text, title, type, tags, scope and target, priority,
    pin and valid-until (those the form leaves out carry over); a flagged text waits in
    review. The same verb and errors as `waymark supersede`."""
    from waymark.curation.agent_writes import Held
    from waymark.curation.revising import revise

    changes: dict[str, Any] = {"content": form.get("content", ""),
                               "title": form.get("title") or None,
                               "pinned": form.get("pinned") == "1"}  # fmt: skip
    if form.get("type"):
        changes["type"] = form["type"]
    if "tags" in form:
        changes["tags"] = [t.strip() for t in form["tags"].split(",") if t.strip()]
    if form.get("scope"):
        changes["scope"] = form["scope"]
    if "target" in form:
        changes["target"] = form["target"] or None
    if "priority" in form:
        changes["priority"] = _int_field(form["priority"], "priority")
    if "valid_until" in form:
        changes["valid_until"] = form["valid_until"] or None
    saved = revise(conn, project, memory_id, changes, actor="user", client="dashboard")
    return "/review" if isinstance(saved, Held) else f"/memories/{saved.memory.id}"


def _archive(conn: Any, project: Any, memory_id: str, form: dict[str, str]) -> str:
    from waymark.memories import store

    store.archive(conn, project, memory_id, reason=form.get("reason") or None,
                  team=form.get("team") == "1")  # fmt: skip
    said = "archived: it reaches no packet and no recall; unarchive it below to undo"
    return f"/memories/{memory_id}?said={_quote(said)}"


def _unarchive(conn: Any, project: Any, memory_id: str, form: dict[str, str]) -> str:
    """An archived memory active again (what an archive, or a sweep, can undo)."""
    from waymark.memories import store

    store.unarchive(conn, project, memory_id, actor="user")
    return f"/memories/{memory_id}?said={_quote('unarchived: active again')}"


def _erase(conn: Any, project: Any, memory_id: str, form: dict[str, str]) -> str:
    """The text dropped for good, a tombstone kept: only with its confirmation ticked; the
    backups that still hold it named, as the CLI names them."""
    from waymark.curation import erasing

    if form.get("confirm") != "1":
        raise WaymarkError("tick the confirmation: an erase cannot be undone")
    done = erasing.erase(conn, project, memory_id, reason=form.get("reason", ""),
                         team=form.get("team") == "1")  # fmt: skip
    said = "erased: its text is gone, its tombstone kept"
    if done["backups_holding"]:
        said += "; " + erasing.backups_said(done["memory"].id, done["backups_holding"])
    return f"/memories/{done['memory'].id}?said={_quote(said)}"


def _feedback(conn: Any, project: Any, memory_id: str, form: dict[str, str]) -> str:
    """A verdict on the memory; stale or wrong proposes its archive for review."""
    from waymark.curation import feedback

    given = feedback.give(conn, project, memory_id, form.get("verdict", ""),
                          note=form.get("note") or None, actor="user")  # fmt: skip
    said = "proposed for archive: see Review" if given["candidate"] else "thanks: recorded"
    return f"/memories/{memory_id}?said={_quote(said)}"


FILTERS = ("q", "type", "tag", "scope", "target", "agent", "branch", "inactive")
REVIEW_PAGE = 20  # proposals on one review page
ERROR_DAYS, ERROR_ROWS = 30, 200  # the error log on the Learning page
SEARCH_FIRST, SEARCH_MORE = 20, 50  # a search's results: as the agent's recall, then more
AGES = {"day": "under a day", "week": "1-7 days", "month": "1-4 weeks", "older": "older"}
CHANGES = {"edit": _edit, "archive": _archive, "unarchive": _unarchive, "erase": _erase,
           "feedback": _feedback}  # fmt: skip


class _Store:
    """One connection for one request (the request's thread), closed after it."""

    def __enter__(self) -> _Store:
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


def _words_diff(old: str, new: str) -> list[tuple[str, str]]:
    """(kind, text) pieces, kind one of same, gone, added: the words two texts share, and
    those each has alone, in reading order (the template escapes every piece)."""
    import difflib
    import re

    a, b = re.findall(r"\S+|\s+", old), re.findall(r"\S+|\s+", new)
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("same", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("gone", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(("added", "".join(b[j1:j2])))
    return out


def _linked(text: str, project: Any) -> Any:
    """`text`, escaped, with each memory id in it a link to that memory's page (what an
    approval made, what a bulk action touched)."""
    import re

    from markupsafe import Markup, escape

    where = f"?project={project.id}" if project is not None else ""
    return Markup(re.sub(r"\b[0-9A-HJKMNP-TV-Z]{26}\b",
                         lambda m: f'<a href="/memories/{m.group(0)}{where}">{m.group(0)}</a>',
                         str(escape(text))))  # fmt: skip


def _last_seq() -> int:
    from waymark.storage.events import last_seq

    with _Store() as opened:
        return last_seq(opened.conn)


def _events_after(project_id: str | None, after: int) -> list[dict[str, Any]]:
    """The audit events after seq `after` of a project (and the store-wide ones), oldest
    first, as the feed shows them."""
    from waymark.storage.events import query_events
    from waymark.storage.memories import get_memories

    with _Store() as opened:
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


def _shown(value: Any) -> str:
    """A setting's value as `waymark config` prints it (JSON: true, 1750, "off")."""
    import json

    return json.dumps(value)


def _by_day(events: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(day, its events newest first), newest day first."""
    import itertools

    newest = sorted(events, key=lambda e: e["at"], reverse=True)
    return [(day, list(group)) for day, group in itertools.groupby(newest, lambda e: e["at"][:10])]


def _pages(total: int, offset: int, size: int) -> list[tuple[int, int, bool] | None]:
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


def _int_field(value: str | None, name: str) -> int:
    """A form's whole number (empty: 0), or a clear error naming the field."""
    from waymark.errors import InvalidArgument

    try:
        return int(value or 0)
    except ValueError:
        raise InvalidArgument(f"{name} takes a whole number (got {value!r})") from None


def _int(value: str | None, default: int) -> int:
    try:
        return max(0, int(value)) if value else default
    except ValueError:
        return default


async def _form(request: Any) -> dict[str, str] | None:
    """The form of a write, or None when its CSRF token is missing or wrong."""
    raw = await request.form()
    form = {k: str(v) for k, v in raw.items()}
    if not guard.check_csrf(form.get("csrf"), request.scope["state"]["csrf"]):
        return None
    return form


async def _run_sync(function: Any, *args: Any) -> Any:
    """A write's library call on a worker thread: the event loop never waits on SQLite."""
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(function, *args)


def _forbidden() -> Any:
    from starlette.responses import PlainTextResponse

    return PlainTextResponse("missing or wrong CSRF token", status_code=403)


def _see_other(location: str) -> Any:
    from starlette.responses import RedirectResponse

    return RedirectResponse(location, status_code=303)


def _back(memory_id: str, form: dict[str, str], message: str) -> Any:
    return _see_other(f"/memories/{memory_id}?project={form.get('project', '')}&error="
                      + _quote(message))  # fmt: skip


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text[:1500])
