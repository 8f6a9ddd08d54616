"""Questions to a dbt project's artifacts as read (`knowledge.dbt`): a node's lineage up and
down, the tests and their latest results, the sources' freshness, and the one line a packet
gives about an edited model (its downstream models and exposures, its failing tests).

Edges come from the manifest's parent map; tests hang off the node they test (a generic
test's `attached_node`, or any test that reads it). Ages are said from the artifact's own
time. Only `edit_lines` runs on a hook's path: a few index entries, nothing imported.
"""

from __future__ import annotations

from waymark.storage import dbt as rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection

DEPTH_MAX = 20
WALK_MAX = 500  # nodes one walk visits at most
FAILING = ("fail", "error", "runtime error")
NOT_FRESH = ("warn", "error", "runtime error")
DOWNSTREAM_KINDS = ("model", "snapshot", "exposure", "metric", "semantic_model", "saved_query",
                    "seed", "analysis")  # fmt: skip
SHOWN = 4


def walk(
    conn: Connection, project_id: str, start: str, *, down: bool, depth: int = DEPTH_MAX
) -> list[tuple[str, int]]:
    """(unique id, steps away) of every node up- or downstream of `start`, nearest first,
    tests left out; at most WALK_MAX."""
    seen = {start: 0}
    frontier = [start]
    for level in range(1, depth + 1):
        if not frontier or len(seen) > WALK_MAX:
            break
        nxt = []
        for _, other in rows.edges(conn, project_id, frontier, down=down):
            if other not in seen and not other.startswith(("test.", "unit_test.")):
                seen[other] = level
                nxt.append(other)
        frontier = sorted(nxt)
    return [(uid, d) for uid, d in seen.items() if uid != start][:WALK_MAX]


def find(conn: Connection, project: Project, name: str) -> dict[str, Any]:
    """The node `name` (a model's name, or any unique id) names; NotFound otherwise, with the
    names that come close."""
    found = rows.nodes_named(conn, project.id, name)
    built = [n for n in found if n["kind"] not in ("test", "unit_test")] or found
    if built:
        return built[0]
    from waymark.errors import NotFound

    if not rows.any_project(conn, project.id):
        raise NotFound("no dbt project read here: `waymark dbt refresh` reads target/")
    raise NotFound(f"no dbt node named {name!r}: `waymark dbt list` shows them")


def lineage(conn: Connection, project: Project, name: str, depth: int = DEPTH_MAX) -> dict:
    """{node, state, upstream, downstream, tests}: each related node with its kind, name,
    path and steps away; the node's tests with their latest results."""
    from waymark.knowledge.dbt import state_of

    node = find(conn, project, name)
    up = walk(conn, project.id, node["unique_id"], down=False, depth=depth)
    down = walk(conn, project.id, node["unique_id"], down=True, depth=depth)
    by_id = {
        n["unique_id"]: n for n in rows.nodes_by_id(conn, project.id, [u for u, _ in up + down])
    }

    def said(found: list[tuple[str, int]]) -> list[dict[str, Any]]:
        return [_brief(by_id.get(uid), uid) | {"depth": d} for uid, d in found]

    return {
        "node": _brief(node, node["unique_id"]) | {"description": node["description"]},
        "state": state_of(project, node),
        "upstream": said(up),
        "downstream": said(down),
        "tests": [_test(t) for t in rows.tests_on(conn, project.id, [node["unique_id"]])],
    }


def _brief(node: dict[str, Any] | None, uid: str) -> dict[str, Any]:
    if node is None:  # an edge to a node the manifest does not list (a disabled one)
        return {"unique_id": uid, "kind": uid.split(".", 1)[0], "name": uid.rsplit(".", 1)[-1],
                "path": None, "status": None}  # fmt: skip
    return {k: node[k] for k in ("unique_id", "kind", "name", "path", "status")}


def _test(t: dict[str, Any]) -> dict[str, Any]:
    return {k: t[k] for k in ("unique_id", "name", "column_name", "attached", "path", "status",
                              "message", "result_at")}  # fmt: skip


def tests(conn: Connection, project: Project, *, failing: bool = True) -> dict[str, Any]:
    """{tests: [...], counts: {status: n}}: every test's latest result (only the failing
    ones with `failing`), each with the node it tests."""
    found = rows.nodes_of_kind(conn, project.id, ("test", "unit_test"))
    counts: dict[str, int] = {}
    for t in found:
        counts[t["status"] or "not run"] = counts.get(t["status"] or "not run", 0) + 1
    chosen = [t for t in found if t["status"] in FAILING] if failing else found
    # A singular test has no attached node: it tests what it reads.
    singular = [t["unique_id"] for t in chosen if not t["attached"]]
    read = dict(rows.edges(conn, project.id, singular, down=False))
    tested = {t["unique_id"]: t["attached"] or read.get(t["unique_id"]) for t in chosen}
    names = {n["unique_id"]: n["name"] for n in rows.nodes_by_id(
        conn, project.id, sorted({u for u in tested.values() if u}))}  # fmt: skip
    return {
        "tests": [
            _test(t) | {"tests_node": names.get(tested[t["unique_id"]] or "")} for t in chosen
        ],
        "counts": counts,
    }


def listing(conn: Connection, project: Project, kinds: tuple[str, ...]) -> dict[str, Any]:
    """{nodes: [...]}: the nodes of these kinds, by kind and name."""
    keys = ("unique_id", "kind", "name", "path", "materialized", "status", "description")
    found = rows.nodes_of_kind(conn, project.id, kinds)
    return {"nodes": [{k: n[k] for k in keys} for n in found]}


def status(conn: Connection, project: Project) -> dict[str, Any]:
    """{projects, counts, failing, stale}: what was read, nodes per kind, failing tests and
    sources not fresh."""
    return {
        "projects": rows.projects(conn, project.id),
        "counts": rows.counts(conn, project.id),
        "failing": len(rows.nodes_of_kind(conn, project.id, ("test", "unit_test"), FAILING)),
        "stale": sum(s["freshness"] in NOT_FRESH for s in rows.sources_checked(conn, project.id)),
    }


def freshness(conn: Connection, project: Project) -> dict[str, Any]:
    """{sources: [...]}: each checked source's freshness, the stale ones first."""
    found = rows.sources_checked(conn, project.id)
    found.sort(key=lambda s: (s["freshness"] not in NOT_FRESH, s["name"]))
    keys = ("unique_id", "name", "freshness", "loaded_at", "age_s", "checked_at")
    return {"sources": [{k: s[k] for k in keys} for s in found]}


def edit_lines(conn: Connection, project: Project, paths: list[str]) -> list[tuple[str, str]]:
    """(seen key, line) for each dbt model, seed or snapshot these files define (the line
    unfenced: the packet fences what it shows): what is
    downstream of it (the models, then exposures) and its failing tests. One index probe
    when the files define none. The key holds the latest result's time: a new run's
    failures are said again."""
    if not paths or not rows.any_project(conn, project.id):
        return []
    out = []
    for node in rows.nodes_at(conn, project.id, paths)[:2]:
        down = walk(conn, project.id, node["unique_id"], down=True, depth=DEPTH_MAX)
        by_id = {
            n["unique_id"]: n for n in rows.nodes_by_id(conn, project.id, [u for u, _ in down])
        }
        named = [_brief(by_id.get(u), u) for u, _ in down]
        failing = [t for t in rows.tests_on(conn, project.id, [node["unique_id"]])
                   if t["status"] in FAILING]  # fmt: skip
        if not named and not failing:
            continue
        latest = max([t["result_at"] or "" for t in failing] + [node["result_at"] or ""])
        out.append((f"dbt:{node['unique_id']}:{latest}", _edit_line(node, named, failing)))
    return out


def _edit_line(
    node: dict[str, Any], named: list[dict[str, Any]], failing: list[dict[str, Any]]
) -> str:
    parts = []
    models = [n for n in named if n["kind"] != "exposure"]
    exposures = [n for n in named if n["kind"] == "exposure"]
    if models:
        parts.append(f"downstream {_names(models)}")
    if exposures:
        parts.append(f"exposures {_names(exposures)}")
    if failing:
        tests_said = ", ".join(
            f"`{t['name']}` ({t['status']}"
            + (f": {t['message'][:80]}" if t["message"] else "")
            + ")"
            for t in failing[:SHOWN]
        ) + (f" and {len(failing) - SHOWN} more" if len(failing) > SHOWN else "")
        parts.append(f"failing tests {tests_said}")
    line = f"- dbt {node['kind']} `{node['name']}` ({node['path']}): " + "; ".join(parts)
    return line[:600]


def _names(nodes: list[dict[str, Any]]) -> str:
    said = ", ".join(f"`{n['name']}`" for n in nodes[:SHOWN])
    more = len(nodes) - SHOWN
    return f"{said} and {more} more" if more > 0 else said


def search(conn: Connection, project: Project, query: str, limit: int = 3) -> list[dict[str, Any]]:
    """The dbt nodes a query names by name or path (a word of it equal to a model's name),
    each with its downstream and failing tests, as `edit_lines` says them."""
    if not rows.any_project(conn, project.id):
        return []
    words = {w.strip("`'\".,:;()?!") for w in query.split()}
    found: dict[str, dict[str, Any]] = {}
    for word in sorted(w for w in words if len(w) >= 3):
        for node in rows.nodes_named(conn, project.id, word) + rows.nodes_at(
            conn, project.id, [word]
        ):
            if node["kind"] not in ("test", "unit_test"):
                found.setdefault(node["unique_id"], node)
    out = []
    for node in list(found.values())[:limit]:
        said = edit_lines(conn, project, [node["path"]]) if node["path"] else []
        line = said[0][1] if said else f"- dbt {node['kind']} `{node['name']}` ({node['path']})"
        out.append({"unique_id": node["unique_id"], "kind": node["kind"], "name": node["name"],
                    "path": node["path"], "line": line})  # fmt: skip
    return out
