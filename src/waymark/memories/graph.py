"""The memory graph around one memory: the memories its links reach (`relate`: related,
causes, solves, contradicts, depends_on, supersedes), its supersession chain, the files it
targets and the other memories about those files, a few steps out, bounded.

    neighbourhood(conn, project, memory_id, depth=2) -> {focus, nodes, edges, left_out}
    starts(conn, project) -> [(Memory, links)]: where a look may begin

A node is a memory ({id, kind: "memory", type, title, status, depth}) or a file ({id:
"file:<path>", kind: "file", title: path, depth}); an edge is {src, dst, kind}.
"""

from __future__ import annotations

from waymark.errors import InvalidArgument, NotFound
from waymark.memories.scope import PATH_SCOPES
from waymark.projects.resolve import Project
from waymark.storage import guidance
from waymark.storage import links as link_rows
from waymark.storage import memories as rows
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

MOST = 40  # nodes drawn: a busier neighbourhood says how many more it has
PER_FILE = 8  # memories about one file brought in
DEPTHS = (1, 2, 3)
FILE = "file:"


def neighbourhood(
    conn: Connection, project: Project, memory_id: str, *, depth: int = 2, most: int = MOST
) -> dict[str, Any]:
    """Everything `depth` steps or fewer from the memory, nearest first, `most` nodes at
    most (the rest counted in `left_out`)."""
    from waymark.memories.store import full_id

    if depth not in DEPTHS:
        raise InvalidArgument(f"depth is one of {', '.join(map(str, DEPTHS))}")
    focus = full_id(conn, memory_id)
    found = rows.get_memory(conn, focus)
    if found is None or found.project_id not in (project.id, None):
        raise NotFound(f"no memory {memory_id!r} in this project", id=memory_id)
    nodes: dict[str, dict[str, Any]] = {}
    edges: dict[tuple[str, str, str], dict[str, str]] = {}
    missed: set[str] = set()
    frontier = [focus]
    for step in range(depth + 1):
        memories = rows.get_memories(conn, [i for i in frontier if not i.startswith(FILE)])
        reached: list[tuple[str, str, str]] = []  # (from, to, kind) to nodes maybe new
        for node_id in frontier:
            if node_id in nodes:
                continue
            if len(nodes) >= most:
                missed.add(node_id)
                continue
            if node_id.startswith(FILE):
                nodes[node_id] = {"id": node_id, "kind": "file", "title": node_id[len(FILE):],
                                  "depth": step}  # fmt: skip
                continue
            m = memories.get(node_id)
            if m is None or m.project_id not in (project.id, None) or m.status == "erased":
                continue
            nodes[node_id] = {"id": m.id, "kind": "memory", "type": m.type, "title": m.title,
                              "status": m.status, "depth": step}  # fmt: skip
            if m.supersedes:
                reached.append((m.id, m.supersedes, "supersedes"))
            if m.superseded_by:
                reached.append((m.superseded_by, m.id, "supersedes"))
            if m.scope_type in PATH_SCOPES and m.scope_target:
                reached.append((m.id, FILE + m.scope_target.partition("::")[0], "targets"))
        if step == depth:
            break
        here = [i for i in frontier if i in nodes]
        for link in link_rows.links_among(conn, [i for i in here if not i.startswith(FILE)]):
            reached.append((link["src"], link["dst"], link["kind"]))
        files = [i[len(FILE) :] for i in here if i.startswith(FILE)]
        for path in files:
            for row in guidance.targeted(conn, project.id, [path], [path], limit=PER_FILE):
                reached.append((str(row[4]), FILE + path, "targets"))
        frontier = []
        for src, dst, kind in reached:
            edges[(src, dst, kind)] = {"src": src, "dst": dst, "kind": kind}
            for end in (src, dst):
                if end not in nodes and end not in frontier:
                    frontier.append(end)
        if not frontier:
            break
    kept = [e for e in edges.values() if e["src"] in nodes and e["dst"] in nodes]
    missed |= {end for e in edges.values() for end in (e["src"], e["dst"]) if end not in nodes}
    return {"focus": focus, "depth": depth, "nodes": list(nodes.values()), "edges": kept,
            "left_out": len(missed)}  # fmt: skip


def starts(conn: Connection, project: Project, limit: int = 12) -> list[tuple[Any, int]]:
    """The project's active memories with the most links, most first, with their count."""
    found = link_rows.most_linked(conn, project.id, limit)
    memories = rows.get_memories(conn, [i for i, _ in found])
    return [(memories[i], n) for i, n in found if i in memories]


def about(
    conn: Connection, project: Project, paths: list[str], per: int = PER_FILE
) -> dict[str, list[Any]]:
    """path -> the active memories about that file or a symbol in it (everyone's), the
    `per` a packet would rank first; paths with none are left out."""
    wanted = list(dict.fromkeys(p.partition("::")[0] for p in paths))[:GRAPH_PATHS]
    found: dict[str, list[str]] = {}
    for path in wanted:
        ids = [str(r[4]) for r in guidance.targeted(conn, project.id, [path], [path], limit=per)]
        if ids:
            found[path] = list(dict.fromkeys(ids))[:per]
    memories = rows.get_memories(conn, [i for ids in found.values() for i in ids])
    return {path: [memories[i] for i in ids if i in memories] for path, ids in found.items()}


GRAPH_PATHS = 60  # files asked about at once (a code map's impact draws 40)
