"""The dashboard's curation pages: the review queue (per row, a page, or selected; every
one tried and its outcome said; one-click undo) and Learning (the error log, insights,
rules and how often each helped)."""

from __future__ import annotations

from typing import Any

from waymark.errors import WaymarkError
from waymark.web import guard
from waymark.web.common import (
    Pages,
    Store,
    forbidden,
    int_arg,
    page_links,
    quote,
    read_form,
    run_sync,
    see_other,
)

REVIEW_PAGE = 20  # proposals on one review page

AGES = {"day": "under a day", "week": "1-7 days", "month": "1-4 weeks", "older": "older"}

ERROR_DAYS, ERROR_ROWS = 30, 200  # the error log on the Learning page


class ReviewPages(Pages):
    """The review queue and the Learning page."""

    def review(self, request: Any) -> Any:
        from waymark.curation import candidates

        q = request.query_params
        kind, age = q.get("kind") or None, q.get("age") or None
        offset = int_arg(q.get("offset"), 0)
        with Store() as opened:
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
        keep = "&".join(f"{k}={quote(v)}" for k, v in (("kind", kind), ("age", age)) if v)
        return self.render(request, "review.html", projects=projects, project=project,
                           waiting=waiting, stale=stale, named=named, error=q.get("error"),
                           said=q.get("said"), kinds=candidates.KINDS, kind=kind or "",
                           ages=AGES, age=age or "", offset=offset, total=total,
                           page=REVIEW_PAGE, keep=keep,
                           pages=page_links(total, offset, REVIEW_PAGE),
                           undo=[i for i in (q.get("undo") or "").split(",") if i][:REVIEW_PAGE])  # fmt: skip

    async def decide(self, request: Any) -> Any:
        from starlette.datastructures import FormData

        raw: FormData = await request.form()
        if not guard.check_csrf(str(raw.get("csrf") or ""), request.scope["state"]["csrf"]):
            return forbidden()
        form = {k: str(v) for k, v in raw.items()}
        page = [str(v) for v in raw.getlist("page_id")]
        ids = page if form.get("decision", "").endswith("-page") else [
            str(v) for v in raw.getlist("id")]  # fmt: skip
        return await run_sync(self._decide, form, ids)

    def _decide(self, form: dict[str, str], ids: list[str]) -> Any:
        from waymark.curation import candidates

        decision = form.get("decision", "").removesuffix("-page")
        if form.get("one"):  # a row's own button: that candidate alone
            decision, _, one = form["one"].partition(":")
            ids = [one]
        with Store() as opened:
            try:
                _, project = opened.projects(form.get("project"))
                if project is None:
                    raise WaymarkError("no project here")
                if decision not in ("approve", "reject", "undo"):
                    raise WaymarkError("approve, reject or undo")
                if not ids:
                    raise WaymarkError("select a proposal first")
            except WaymarkError as exc:
                return see_other(f"/review?project={quote(form.get('project', ''))}&error="
                                  + quote(exc.message))  # fmt: skip
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
            where = f"/review?project={project.id}&said={quote(said)}"
            if undoable:
                where += "&undo=" + ",".join(undoable)
            return see_other(where)

    def learning(self, request: Any) -> Any:
        """The error log, the insights it proposed, and the rules they became, with how
        often each rule helped (`waymark errors`, `insights`, `rules`)."""
        from waymark.curation import learning, mistakes

        q = request.query_params
        with Store() as opened:
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
        form = await read_form(request)
        if form is None:
            return forbidden()
        return await run_sync(self._learn, form)

    def _learn(self, form: dict[str, str]) -> Any:
        """One vote, promotion, rating or retirement, as the CLI's `insights` and `rules`."""
        from waymark.curation import learning

        action, memory_id = form.get("action", ""), form.get("id", "")
        with Store() as opened:
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
                return see_other(f"/learning?project={quote(form.get('project', ''))}&error="
                                  + quote(exc.message))  # fmt: skip
        said = {"up": "voted up", "down": "voted down", "promote": "promoted to a rule",
                "helped": "rated: it helped", "missed": "rated: it missed",
                "retire": "retired"}[action] + f": {row['memory_id']} is a {row['kind']}, {row['status']}"  # fmt: skip
        where = "#rules" if row["kind"] == "rule" else "#insights"
        return see_other(f"/learning?project={project.id}&said={quote(said)}{where}")
