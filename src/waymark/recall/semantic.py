"""Semantic neighbours for recall, from wherever they are cheapest.

A hook asks the warm MCP server (one socket round trip, hard deadline) and otherwise goes
lexical. The CLI may also load the model in-process when it is on disk; it never downloads
one for a query. The warm server answers with `answer`, the same code the CLI runs.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection

CANDIDATES = 200  # recall.Settings.semantic_candidates: the pool its min-max scale spans
WARM_DEADLINE_S = 0.05


class Neighbours(list):  # type: ignore[type-arg]
    """One query's nearest memories [(rowid, cosine)], best first, and the model whose
    vectors they are (`model`): a receipt names it."""

    def __init__(self, hits: Any = (), model: str | None = None) -> None:
        super().__init__(hits)
        self.model = model


def neighbours(
    conn: Connection,
    project: Project,
    queries: Sequence[str],
    *,
    mode: str = "auto",
    deadline_s: float = WARM_DEADLINE_S,
) -> list[list[tuple[int, float]]] | None:
    """Cosine neighbours per query, or None when no model is reachable.

    mode: "warm" (the server only: the hook path), "auto" (server, else an in-process model
    already on disk), "local" (in-process only), "off".
    """
    if mode == "off" or not queries:
        return None
    if mode in ("warm", "auto"):
        found = ask_warm(project, queries, deadline_s)()
        if found is not None or mode == "warm":
            return found
    return local(conn, project.id, queries)


def ask_warm(
    project: Project | None,
    queries: Sequence[str],
    deadline_s: float = WARM_DEADLINE_S,
    max_tokens: int | None = None,
    *,
    cwd: str | None = None,
) -> Callable[[], list[list[tuple[int, float]]] | None]:
    """Ask the warm server now; the returned function collects its answer (or None) later,
    so a hook can do its lexical work while the server embeds and searches. The project is
    `project`, or the one the server finds at `cwd` (a hook asks before it has opened the
    database) if capture is on there. `max_tokens` bounds what the server embeds of each
    query (its cost grows with the length)."""
    from waymark import warm

    request: dict[str, Any] = {"queries": list(queries), "k": CANDIDATES}
    if project is not None:
        request["project_id"] = project.id
    else:
        request["cwd"] = cwd
    if max_tokens is not None:
        request["max_tokens"] = int(max_tokens)
    pending = warm.send("semantic", request, deadline_s)

    def collect() -> list[list[tuple[int, float]]] | None:
        reply = pending.reply() if pending is not None else None
        if not reply or not reply.get("ok"):
            return None
        model = reply.get("model") if isinstance(reply.get("model"), str) else None
        return [Neighbours([(int(r), float(s)) for r, s in hits], model)
                for hits in reply["hits"]]  # fmt: skip

    return collect


def overlapped(
    conn: Connection, project_id: str, query: str, embedder: Any, max_tokens: int | None = None
) -> Callable[[], list[tuple[int, float]]]:
    """Embed `query` and scan the vectors on a thread now (onnxruntime and numpy run without
    the GIL); the returned function, which `recall` calls once its lexical tiers are done,
    collects the neighbours. In a warm process the semantic tier then costs little more than
    the lexical work it runs beside."""
    import threading

    from waymark.recall import vectors

    # The snapshot is refreshed here, on this thread: the worker never touches the database.
    scan = vectors.index_for(conn).prepare(project_id, CANDIDATES, embedder.model, embedder.dim)
    box: list[Any] = []

    def work() -> None:
        try:
            vec = (embedder.embed_query(query) if max_tokens is None
                   else embedder.embed_query(query, max_tokens=max_tokens))  # fmt: skip
            box.append(scan(vec) if scan is not None else vec)
        except Exception as exc:  # recall goes on without this tier; the server logs why
            import logging

            logging.getLogger("waymark.semantic").warning("query embedding failed: %r", exc)

    worker = threading.Thread(target=work, daemon=True)
    worker.start()

    def neighbours() -> list[tuple[int, float]]:
        worker.join()
        if not box:  # the embedding failed on its thread: recall stays lexical
            return []
        if scan is not None:
            return Neighbours(box[0](), embedder.model)  # a graph's candidates: checked here
        found = vectors.search(conn, project_id, box[0], CANDIDATES, embedder.model)
        return Neighbours(found, embedder.model)

    return neighbours


def local(
    conn: Connection,
    project_id: str,
    queries: Sequence[str],
    max_tokens: int | None = None,
) -> list[list[tuple[int, float]]] | None:
    """Embed in this process with a model already on disk; None if there is none."""
    from waymark.recall import embed, quantize, vectors

    embedder = embed.load_embedder(
        spec=embed.chosen(conn), allow_download=False, int8_queries=quantize.enabled(conn)
    )
    if embedder is None:
        return None
    matrix = embedder.embed_queries(list(queries), max_tokens or embed.QUERY_MAX_TOKENS)
    return [Neighbours(vectors.search(conn, project_id, row, CANDIDATES, embedder.model),
                       embedder.model) for row in matrix]  # fmt: skip


def answer(conn: Connection, request: dict[str, Any]) -> dict[str, Any]:
    """The warm server's reply to a `semantic` request."""
    if request.get("op") != "semantic":
        return {"ok": False, "error": f"unknown op {request.get('op')!r}"}
    queries = request.get("queries")
    project_id = request.get("project_id")
    if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
        return {"ok": False, "error": "queries must be a list of strings"}
    if project_id is None and isinstance(request.get("cwd"), str):
        project_id, why = _capturing_project(conn, request["cwd"])
        if project_id is None:
            return {"ok": False, "error": why}
    if not isinstance(project_id, str):
        return {"ok": False, "error": "project_id (or cwd) must be a string"}
    max_tokens = request.get("max_tokens")
    if max_tokens is not None and (
        isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 8
    ):
        return {"ok": False, "error": "max_tokens must be an integer of at least 8"}
    hits = local(conn, project_id, queries[:32], max_tokens)
    if hits is None:
        return {"ok": False, "error": "no embedding model loaded"}
    model = next((h.model for h in hits if isinstance(h, Neighbours)), None)
    return {"ok": True, "hits": [[[r, round(s, 6)] for r, s in h] for h in hits], "model": model}


def _capturing_project(conn: Connection, cwd: str) -> tuple[str | None, str]:
    """The id of the project at `cwd` when capture is on there; else None and why. Never
    binds or creates a project: that is the hook's decision, made with its own checks."""
    from waymark.errors import WaymarkError
    from waymark.projects.capture import policy
    from waymark.projects.resolve import resolve

    try:
        project = resolve(conn, None, cwd=cwd, bind=False)
    except WaymarkError as exc:
        return None, f"no Waymark project at {cwd}: {exc.message}"
    found = policy(conn, project)
    return (project.id, "") if found["enabled"] else (None, f"capture is off: {found['why']}")
