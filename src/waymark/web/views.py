"""The dashboard's views of a project: the overview's charts, sessions and their receipts,
checkpoints, the code map, the memory graph, the timeline, and the next packet."""

from __future__ import annotations

from typing import Any

from waymark.errors import WaymarkError
from waymark.web.common import PAGE, Pages, Store, forbidden, int_arg, read_form, run_sync

IMPACT_DAYS = 28  # the Overview's "what it led to": the last four weeks


class ViewPages(Pages):
    """What a project did and holds, drawn: overview, sessions, checkpoints, code map, graph, timeline, next packet."""

    def overview(self, request: Any) -> Any:
        """The project at a glance, with its pictures."""
        from waymark.health.overview import overview
        from waymark.memories.kinds import TYPES
        from waymark.packets.impact import impact
        from waymark.projects.client_files import claude_config_dir, codex_home
        from waymark.web import charts

        with Store() as opened:
            try:
                projects, project = opened.projects(request.query_params.get("project"))
                seen = overview(opened.conn, project) if project is not None else None
                led = (impact(opened.conn, project, days=IMPACT_DAYS,
                              claude_dir=claude_config_dir(), codex_dir=codex_home())
                       if project is not None else None)  # fmt: skip
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
                           seen=seen, pictures=pictures, led=led)  # fmt: skip

    def sessions(self, request: Any) -> Any:
        from waymark.packets import sessions

        offset = int_arg(request.query_params.get("offset"), 0)
        with Store() as opened:
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

        with Store() as opened:
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
        target, depth = (q.get("target") or "").strip(), min(int_arg(q.get("depth"), 2) or 2, 5)
        with Store() as opened:
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

    def graph(self, request: Any) -> Any:
        """The memory graph around one memory (links, revisions, files), explorable: each
        memory drawn opens the graph around it."""
        from waymark.memories import graph
        from waymark.web import charts

        q = request.query_params
        memory = (q.get("memory") or "").strip()
        depth = int_arg(q.get("depth"), 2) if q.get("depth") in ("1", "2", "3") else 2
        with Store() as opened:
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
        with Store() as opened:
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
                           by_day=by_day(seen["events"] if seen else []))  # fmt: skip

    def next_packet(self, request: Any) -> Any:
        """What the agent will see next: the SessionStart packet a new session of the
        chosen client would get, made as the hook makes it, nothing recorded."""
        return self._next(request, request.query_params, None)

    async def next_for_prompt(self, request: Any) -> Any:
        """The same, with the packet a typed prompt would bring (a POST: the prompt stays
        out of the address and the browser's history)."""
        form = await read_form(request)
        if form is None:
            return forbidden()
        return await run_sync(self._next, request, form, form.get("prompt", ""))

    def _next(self, request: Any, given: Any, prompt: str | None) -> Any:
        from waymark.packets import preview

        client = given.get("client") or "claude-code"
        with Store() as opened:
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

    def checkpoints(self, request: Any) -> Any:
        """The board of tasks agents work on at once (who holds each, its lease, its
        definition of done), then every checkpoint."""
        from waymark.handoff import checkpoints, tasks

        query = request.query_params
        with Store() as opened:
            try:
                projects, project = opened.projects(query.get("project"))
                listed = (checkpoints.listing(opened.conn, project, limit=PAGE)
                          if project is not None else [])  # fmt: skip
                board = tasks.board(opened.conn, project) if project is not None else []
                board = board if tasks.at_once(board) else []  # else the list says it all
            except WaymarkError as exc:
                return self.failed(request, exc)
            from waymark.base import clock

            return self.render(request, "checkpoints.html", projects=projects,
                               project=project, listed=listed, board=board, now=clock.now(),
                               said=query.get("said"), error=query.get("error"))  # fmt: skip

    async def release(self, request: Any) -> Any:
        form = await read_form(request)
        if form is None:
            return forbidden()
        return await run_sync(self._release, form)

    def _release(self, form: dict[str, str]) -> Any:
        """A person opens a task for the taking (its holder died, or should stop): a
        release revision, as `waymark task release` without a session."""
        from urllib.parse import quote

        from waymark.handoff import checkpoints, tasks
        from waymark.web.common import see_other

        with Store() as opened:
            try:
                _, project = opened.projects(form.get("project"))
                if project is None:
                    raise WaymarkError("no project here")
                origin = checkpoints.Origin(actor="user", client="dashboard")
                done = tasks.release(opened.conn, project, form.get("id", ""),
                                     form.get("revision", ""), {}, origin)  # fmt: skip
            except WaymarkError as exc:
                return see_other(f"/checkpoints?project={quote(form.get('project', ''))}&error="
                                  + quote(exc.message))  # fmt: skip
        said = f"task {done.id} is open for the taking (revision {done.revision.id})"
        return see_other(f"/checkpoints?project={project.id}&said={quote(said)}")

    def checkpoint(self, request: Any) -> Any:
        from waymark.handoff import checkpoints
        from waymark.handoff.revision import render_lesson

        with Store() as opened:
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


def by_day(events: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(day, its events newest first), newest day first."""
    import itertools

    newest = sorted(events, key=lambda e: e["at"], reverse=True)
    return [(day, list(group)) for day, group in itertools.groupby(newest, lambda e: e["at"][:10])]
