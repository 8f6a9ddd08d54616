"""The MCP recall tool's answer: its views of the hits, the session's context beside them,
and the whole fitted to the caller's token budget, every omission counted and named.

A packet the agent asked for: built here, beside the packets the hooks inject, so the tool
only translates its arguments and this answer.
"""

from __future__ import annotations

import json

from waymark.base import tokens
from waymark.memories import observations, store
from waymark.packets import briefing
from waymark.packets.render import within
from waymark.projects.resolve import Project
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any


def cost(obj: Any) -> int:
    """Tokens of `obj` as the tool's text answer carries it (compact JSON)."""
    return tokens.estimate(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))


def recall_answer(
    conn: Connection,
    project: Project,
    hits: list[Any],
    *,
    semantic: bool,
    detail: str,
    explain: bool,
    include_session: bool,
    paths: list[str],
    agent: str | None,
    budget: int,
    said: dict[str, Any] | None = None,
    session_id: str | None = None,
) -> dict[str, Any]:
    """The hits as views (`detail`), each priced, with RECHECK state below compact detail;
    with `include_session`, the active checkpoint (the one `session_id` works on), pinned
    rules and the memories of `paths`;
    all within `budget` tokens (`fit_answer`), `said` (what the answer must say) first."""
    out: dict[str, Any] = {"project": project.to_dict(), "semantic": semantic, **(said or {})}
    checks = (
        observations.checks(conn, project, [hit.memory for hit in hits])
        if detail != "compact"
        else {}
    )
    views = []
    for hit in hits:
        view = briefing.memory_view(hit.memory, detail) | {"score": round(hit.score, 5)}
        view |= checks.get(hit.memory.id, {})
        if isinstance(hit.explain, dict) and "outcome" in hit.explain:
            view["outcome"] = hit.explain["outcome"]  # held or reverted in git
        if explain:
            view["explain"] = hit.explain
            made = store.authorship(conn, hit.memory.id)
            if made:
                view["explain"] = {**hit.explain, "team": made}
        views.append(priced(view, hit.memory, detail))
    session: dict[str, Any] = {}
    if include_session:
        session = {
            "checkpoint": briefing.checkpoint_section(conn, project, session_id=session_id),
            "rules": [
                briefing.memory_view(m, "summary")
                for m in briefing.pinned_rules(conn, project, 10, agent)
            ],
            "file_memories": [
                briefing.memory_view(m, "summary")
                for m in briefing.file_memories(conn, project, paths, agent=agent)
            ],
        }
    return fit_answer(out, session, views, budget)


def asked_answer(
    conn: Connection,
    project: Project,
    got: dict[str, Any],
    *,
    semantic: bool,
    meaning: str | None,
    detail: str,
    explain: bool,
    include_session: bool,
    paths: list[str],
    agent: str | None,
    budget: int,
    session_id: str | None = None,
) -> dict[str, Any]:
    """The MCP recall tool's answer to an asked recall (`packets.asked`): `recall_answer` of
    its hits, saying how many fell below the relevance floor and, when meaning was not used,
    why (`meaning`); then the repository's notes it names, cited (read the file), and the dbt
    models it names, with their downstream and failing tests."""
    said: dict[str, Any] = {"below_relevance_floor": got["below"]} if got["below"] else {}
    if meaning:
        said["meaning"] = meaning
    told = recall_answer(
        conn, project, got["hits"], semantic=semantic, detail=detail, explain=explain,
        include_session=include_session, paths=paths, agent=agent, budget=budget, said=said,
        session_id=session_id,
    )  # fmt: skip
    if got["notes"]:
        keys = ("cite", "kind", "state", "snippet", "description")
        told["notes"] = [{k: n[k] for k in keys if n[k]} for n in got["notes"]]
    if got["dbt"]:
        told["dbt"] = [m["line"] for m in got["dbt"]]
    if got["notes"] or got["dbt"]:
        told["tokens"] = cost(told)
    if got["hits"]:
        _served(conn, project, session_id, len(told.get("results", ())))
    return told


def _served(conn: Connection, project: Project, session_id: str | None, shown: int) -> None:
    """An asked recall that answered with memories, counted (`stats --impact`): the event
    holds how many, never the query."""
    from waymark.storage import connection as db
    from waymark.storage.connection import read_only

    if shown and not read_only(conn):
        from waymark.storage.events import log_event

        with db.write(conn):
            log_event(conn, "recall.served", project_id=project.id, session_id=session_id,
                      actor="agent", shown=shown)  # fmt: skip


def browse_answer(project: Project, page: Any, *, detail: str) -> dict[str, Any]:
    """A page of memories newest first (`browse.Page`) as views at `detail`; a memory that is
    no longer active says what it is (archived, superseded)."""
    views = []
    for memory in page.results:
        view = briefing.memory_view(memory, detail)
        if memory.status != "active":
            view["status"] = memory.status
        views.append(view)
    out = {"project": project.to_dict(), "semantic": False, "results": views,
           "has_more": page.has_more, "next_offset": page.next_offset}  # fmt: skip
    return out | {"tokens": cost(out)}


def team_answer(
    project: Project, found: dict[str, Any], *, detail: str, budget: int
) -> dict[str, Any]:
    """The team store's best memories (`team.recall`) as the recall tool answers: views of
    the same shape, each with its author, within `budget` tokens."""
    from waymark.storage.memories import FIELDS, Memory

    out: dict[str, Any] = {"project": project.to_dict(), "semantic": found["semantic"],
                           "team": found["project_key"]}  # fmt: skip
    views = []
    for result in found["results"]:
        memory = Memory(**{k: result["memory"].get(k) for k in FIELDS})
        view = briefing.memory_view(memory, detail) | {"score": result["score"],
                                                       "author": result["author"]}  # fmt: skip
        views.append(priced(view, memory, detail))
    return fit_answer(out, {}, views, budget)


def priced(view: dict[str, Any], memory: Any, detail: str) -> dict[str, Any]:
    """`view` with what it costs here (`tokens`) and, below full detail, what asking for
    the full record would cost (`full_tokens`): progressive disclosure, priced."""
    view["tokens"] = cost(view)
    if detail != "full":
        view["full_tokens"] = cost(briefing.memory_view(memory, "full"))
    return view


def fit_answer(
    out: dict[str, Any], session: dict[str, Any], views: list[dict[str, Any]], budget: int
) -> dict[str, Any]:
    """The whole answer within `budget` tokens, as the client receives it: the active
    checkpoint first, then the results best first, then file memories and pinned rules;
    each list stops at the first item that does not fit, and every omission is counted."""
    out = dict(out)
    out["results"] = []
    out["tokens"] = 0
    spent = cost(out) + 40  # the omission note and the final counts
    omitted: dict[str, int] = {}
    omitted_ids: dict[str, list[str]] = {}
    checkpoint = session.get("checkpoint")
    if "checkpoint" in session:
        if checkpoint is None or spent + cost(checkpoint) <= budget:
            out["checkpoint"] = checkpoint
            spent += cost(checkpoint) + 4
        else:
            omitted["checkpoint"] = 1
    order = [
        ("results", views),
        ("file_memories", session.get("file_memories")),
        ("rules", session.get("rules")),
    ]
    for name, items in order:
        if items is None:
            continue
        kept, left = within(items, budget - spent, lambda item: cost(item) + 1)
        out[name] = kept
        spent += sum(cost(item) + 1 for item in kept) + len(name) // 3 + 2
        if left:
            omitted[name] = left
            omitted_ids[name] = [str(item["id"]) for item in items[len(kept) :] if "id" in item]
    _say_omitted(out, omitted, omitted_ids, budget)
    lists = [name for name, _ in reversed(order) if out.get(name)]
    while cost(out) > budget and lists:  # the note of omissions outgrew its allowance
        name = lists[0]
        dropped = out[name].pop()
        omitted[name] = omitted.get(name, 0) + 1
        if "id" in dropped:
            omitted_ids.setdefault(name, []).insert(0, str(dropped["id"]))
        if not out[name]:
            lists.pop(0)
        _say_omitted(out, omitted, omitted_ids, budget)
    out["tokens"] = cost(out)
    return out


def _say_omitted(
    out: dict[str, Any], omitted: dict[str, int], ids: dict[str, list[str]], budget: int
) -> None:
    if omitted:
        counts = ", ".join(f"{n} {name.replace('_', ' ')}" for name, n in omitted.items())
        out["omitted"] = f"left out to stay within {budget} tokens: {counts}"
        out["omitted_counts"] = omitted
        _name_omitted(out, ids, budget)


def _name_omitted(out: dict[str, Any], ids: dict[str, list[str]], budget: int) -> None:
    """`omitted_ids`: the ids of what was left out, best first, as many as the budget still
    holds (the counts say how many there were)."""
    named: dict[str, list[str]] = {name: [] for name in ids if ids[name]}
    if not named:
        return
    out["omitted_ids"] = named
    for name, found in ids.items():
        for memory_id in found:
            named[name].append(memory_id)
            if cost(out) + 8 > budget:
                named[name].pop()
                break
    out["omitted_ids"] = {name: kept for name, kept in named.items() if kept}
    if not out["omitted_ids"]:
        del out["omitted_ids"]


def map_answer(conn: Connection, project: Project, request: str, budget: int) -> dict[str, Any]:
    """A code map question (`impact TARGET`, `find WORDS`, `changes [PATH]`), its answer's
    lists cut to `budget` tokens with what was left out counted."""
    from waymark.codemap import changes, questions
    from waymark.errors import InvalidArgument

    verb, _, rest = request.strip().partition(" ")
    rest = rest.strip()
    if verb == "impact" and rest:
        answer = questions.impact(conn, project, rest)
        lists = ["dependents"]
    elif verb == "find" and rest:
        answer = questions.find(conn, project, rest)
        lists = ["results"]
    elif verb == "changes":
        answer = changes.changes(conn, project, path=rest or None)
        lists = ["added", "removed", "modified", "renamed"]
    else:
        raise InvalidArgument(
            "map is `impact PATH[::Qualified.name]`, `find WORDS` or `changes [PATH]`",
            fields=["map"],
        )
    for name in lists:
        kept, left = within(answer[name], budget - cost(answer), lambda item: cost(item) + 1)
        if left:
            answer[name] = kept
            answer.setdefault("omitted", {})[name] = left
    return answer
