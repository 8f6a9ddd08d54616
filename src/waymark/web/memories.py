"""The dashboard's memory pages: the list with its filters, total and pages; one memory
with its revisions, links and changes (each through the library); a word diff of two
revisions; search, ranked as recall ranks it, with why each result is there."""

from __future__ import annotations

from typing import Any

from waymark.errors import WaymarkError
from waymark.web.common import (
    PAGE,
    Pages,
    Store,
    back,
    forbidden,
    int_arg,
    int_field,
    page_links,
    quote,
    read_form,
    run_sync,
    see_other,
)

FILTERS = ("q", "type", "tag", "scope", "target", "agent", "branch", "inactive")

SEARCH_FIRST, SEARCH_MORE = 20, 50  # a search's results: as the agent's recall, then more


class MemoryPages(Pages):
    """The memory list, one memory and its changes, a diff, and search."""

    def memories(self, request: Any) -> Any:
        """The browse contract's filters: words, type, tag, scope (and its target), agent,
        branch, and whether archived and replaced ones show too."""
        from waymark.memories import browse, store
        from waymark.memories.kinds import TYPES
        from waymark.memories.scope import SCOPES

        q = request.query_params
        said = {k: (q.get(k) or "").strip() for k in FILTERS}
        with Store() as opened:
            try:
                projects, project = opened.projects(q.get("project"))
                offset = int_arg(q.get("offset"), 0)
                page, sharing = None, {}
                total: int | None = 0
                if project is not None:
                    filters: dict[str, Any] = {
                        "query": said["q"] or None,
                        "types": [said["type"]] if said["type"] else [],
                        "tags": [said["tag"]] if said["tag"] else [],
                        "scope": said["scope"] or None, "target": said["target"] or None,
                        "agent": said["agent"] or None, "branch": said["branch"] or None,
                        "include_inactive": said["inactive"] == "1",
                    }  # fmt: skip
                    page = browse.list_memories(opened.conn, project, **filters, limit=PAGE,
                                                offset=offset)  # fmt: skip
                    sharing = store.sharing_of(opened.conn, project, page.results)
                    total = browse.count_memories(opened.conn, project, **filters)
            except WaymarkError as exc:
                return self.failed(request, exc)
            rows = [{"m": m, "sharing": sharing.get(m.id),
                     "pulled": (m.client or "").startswith("team:")}
                    for m in (page.results if page else [])]  # fmt: skip
            keep = "&".join(f"{k}={quote(v)}" for k, v in said.items() if v)
            return self.render(
                request, "memories.html", projects=projects, project=project, rows=rows,
                page=page, said=said, types=TYPES, scopes=SCOPES, offset=offset, keep=keep,
                error=q.get("error"), total=total, capped=total is not None
                and total > browse.COUNT_CAP, size=PAGE,
                pages=page_links(min(total, browse.COUNT_CAP), offset, PAGE) if total else [],
            )  # fmt: skip

    async def create(self, request: Any) -> Any:
        """A new memory from the list page's form, through the library as `waymark
        remember` writes one: the same validation and errors, a flagged text held."""
        form = await read_form(request)
        if form is None:
            return forbidden()
        return await run_sync(self._create, form)

    def _create(self, form: dict[str, str]) -> Any:
        from waymark.curation.agent_writes import Held, save
        from waymark.memories.draft import make_draft

        with Store() as opened:
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
                    priority=int_field(form.get("priority"), "priority"),
                    pinned=form.get("pinned") == "1",
                    valid_until=form.get("valid_until") or None,
                    expiry_given=bool(form.get("valid_until")), actor="user",
                    client="dashboard", base_dir=project.files, check_symbol=True,
                )  # fmt: skip
                saved = save(opened.conn, project, draft)
            except WaymarkError as exc:
                return see_other(f"/memories?project={quote(project_spec)}&error="
                                  + quote(exc.message))  # fmt: skip
            if isinstance(saved, Held):
                said = "held for review: " + "; ".join(saved.flags)
                return see_other(f"/review?project={project.id}&said={quote(said)}")
            said = "remembered" if saved.created else "already remembered: this is it"
            return see_other(f"/memories/{saved.memory.id}?project={project.id}"
                              f"&said={quote(said)}")  # fmt: skip

    def memory(self, request: Any) -> Any:
        from waymark.curation import feedback
        from waymark.memories import links, observations, store
        from waymark.memories.kinds import TYPES
        from waymark.memories.scope import SCOPES

        with Store() as opened:
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

        with Store() as opened:
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
                newer=newer, title=words_diff(older.title, newer.title),
                content=words_diff(older.content, newer.content), chain=chain,
            )  # fmt: skip

    async def change(self, request: Any) -> Any:
        """A change to one memory from its page (CHANGES), through the library: back to the
        memory it made, or to its page with what went wrong."""
        form = await read_form(request)
        if form is None:
            return forbidden()
        if request.path_params["change"] not in CHANGES:
            from starlette.responses import PlainTextResponse

            return PlainTextResponse("no such change", status_code=404)
        return await run_sync(self._change, request, form)

    def _change(self, request: Any, form: dict[str, str]) -> Any:
        memory_id = request.path_params["memory_id"]
        with Store() as opened:
            try:
                _, project = opened.projects(form.get("project"))
                if project is None:
                    raise WaymarkError("no project here")
                where = CHANGES[request.path_params["change"]](
                    opened.conn, project, memory_id, form
                )
            except WaymarkError as exc:
                return back(memory_id, form, exc.message)
            joiner = "&" if "?" in where else "?"
            return see_other(f"{where}{joiner}project={project.id}")

    def search(self, request: Any) -> Any:
        """Recall as the agent gets it (hybrid where the model is here), with each result's
        score breakdown."""
        from waymark.memories import store
        from waymark.packets.asked import asked
        from waymark.recall import semantic
        from waymark.recall.why import reasons

        query = (request.query_params.get("q") or "").strip()
        limit = SEARCH_MORE if request.query_params.get("more") == "1" else SEARCH_FIRST
        with Store() as opened:
            try:
                projects, project = opened.projects(request.query_params.get("project"))
                hits, hybrid, below = [], False, 0
                if project is not None and query:
                    near = semantic.neighbours(opened.conn, project, [query], mode="auto")
                    hybrid = near is not None
                    got = asked(opened.conn, project, query, limit=limit,
                                semantic=near[0] if near else None, cited=False)  # fmt: skip
                    hits, below = got["hits"], got["below"]
                results = [{"hit": h, "made": store.authorship(opened.conn, h.memory.id),
                            "why": reasons(opened.conn, h, query),
                            "moved": [(n, v) for n, v in h.explain["multipliers"].items()
                                      if abs(v - 1.0) >= 0.0005]}  # what shows at 3 places
                           for h in hits]  # fmt: skip
            except WaymarkError as exc:
                return self.failed(request, exc)
            return self.render(request, "search.html", projects=projects, project=project,
                               q=query, results=results, hybrid=hybrid, limit=limit,
                               below=below,
                               more=limit < SEARCH_MORE and len(results) + below >= limit)  # fmt: skip


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
        changes["priority"] = int_field(form["priority"], "priority")
    if "valid_until" in form:
        changes["valid_until"] = form["valid_until"] or None
    saved = revise(conn, project, memory_id, changes, actor="user", client="dashboard")
    return "/review" if isinstance(saved, Held) else f"/memories/{saved.memory.id}"


def _archive(conn: Any, project: Any, memory_id: str, form: dict[str, str]) -> str:
    from waymark.memories import store

    store.archive(conn, project, memory_id, reason=form.get("reason") or None,
                  team=form.get("team") == "1")  # fmt: skip
    said = "archived: it reaches no packet and no recall; unarchive it below to undo"
    return f"/memories/{memory_id}?said={quote(said)}"


def _unarchive(conn: Any, project: Any, memory_id: str, form: dict[str, str]) -> str:
    """An archived memory active again (what an archive, or a sweep, can undo)."""
    from waymark.memories import store

    store.unarchive(conn, project, memory_id, actor="user")
    return f"/memories/{memory_id}?said={quote('unarchived: active again')}"


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
    return f"/memories/{done['memory'].id}?said={quote(said)}"


def _feedback(conn: Any, project: Any, memory_id: str, form: dict[str, str]) -> str:
    """A verdict on the memory; stale or wrong proposes its archive for review."""
    from waymark.curation import feedback

    given = feedback.give(conn, project, memory_id, form.get("verdict", ""),
                          note=form.get("note") or None, actor="user")  # fmt: skip
    said = "proposed for archive: see Review" if given["candidate"] else "thanks: recorded"
    return f"/memories/{memory_id}?said={quote(said)}"


def words_diff(old: str, new: str) -> list[tuple[str, str]]:
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


CHANGES = {"edit": _edit, "archive": _archive, "unarchive": _unarchive, "erase": _erase,
           "feedback": _feedback}  # fmt: skip
