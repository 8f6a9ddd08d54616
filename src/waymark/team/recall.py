"""Team recall: the best of a shared project's team memories for a query, searched on the
server (full text and pgvector, `teamstore.search`), with who wrote each. Its own process
(the CLI, the MCP server), never a hook; the hooks read what `sync` has pulled."""

from __future__ import annotations

from typing import Any

from waymark.errors import InvalidArgument, TeamNotConnected
from waymark.projects.resolve import Project
from waymark.storage.connection import Connection
from waymark.storage.match import tokens
from waymark.team import link
from waymark.team.sync import project_key
from waymark.teamstore import connection as team_db
from waymark.teamstore import memories as team_memories
from waymark.teamstore import search

# The query's first words only: an OR of two dozen words, common ones among them, made the
# server rank most of the store (p95 176 -> 86 ms at 30,000 memories, bench/team.py's queries).
LEXICAL_TERMS = 8


def team_recall(
    conn: Connection, project: Project, query: str, *, limit: int = 10, semantic: bool = True
) -> dict[str, Any]:
    """{project_key, semantic, results: [{memory, score, author, machine}]} best first."""
    if not query.strip():
        raise InvalidArgument("give a query")
    found = link.configured()
    if found is None:
        raise TeamNotConnected("no team store here: `waymark team connect postgresql://...`")
    key = project_key(conn, project)
    vector = _query_vector(query) if semantic else None
    pg = team_db.connect(found[0], migrate=False)
    try:
        words = tokens(query, limit=LEXICAL_TERMS)
        matches = search.team_matches(pg, key, words, vector, limit)
        results = []
        for memory_id, score in matches:
            record = team_memories.get_memory(pg, memory_id)
            if record is None:
                continue
            author, machine = record.pop("_author"), record.pop("_machine")
            record.pop("_project_key", None)
            results.append({"memory": record, "score": round(score, 5), "author": author,
                            "machine": machine})  # fmt: skip
    finally:
        pg.close()
    return {"project_key": key, "semantic": vector is not None, "results": results}


def _query_vector(query: str) -> list[float] | None:
    """The query's embedding where a model is on this machine (else recall is lexical)."""
    from waymark.recall import embed

    model = embed.load_embedder()
    if model is None:
        return None
    return [float(x) for x in model.embed_query(query)]
