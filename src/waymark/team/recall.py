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

# The server ranks every memory that holds any query word, so the words asked are the
# query's rarest by the server's own counts, as many as keep the memories to rank under
# LEXICAL_ROWS (a word the counts do not list is rarer than all they do), LEXICAL_TERMS at
# most, the rarest always. Common words carry little in an OR; they only cost (p95 at
# 100,000 memories: 168 ms for the first 8 words, 26 ms for the rarest, bench/team.py).
LEXICAL_TERMS = 8
LEXICAL_ROWS = 5_000


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
        words = lexical_terms(pg, query)
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


def lexical_terms(pg: Any, query: str) -> list[str]:
    """The words of `query` team recall asks the server for (see LEXICAL_ROWS)."""
    shares, rarest, rows = search.lexeme_shares(pg)
    unlisted = rarest / 2
    words = sorted(tokens(query), key=lambda w: shares.get(w, unlisted))  # stable: in order
    chosen: list[str] = []
    expected = 0.0
    for word in words:
        cost = shares.get(word, unlisted) * rows
        if chosen and (expected + cost > LEXICAL_ROWS or len(chosen) == LEXICAL_TERMS):
            break
        chosen.append(word)
        expected += cost
    return chosen


def _query_vector(query: str) -> list[float] | None:
    """The query's embedding where a model is on this machine (else recall is lexical)."""
    from waymark.recall import embed

    model = embed.load_embedder(embed.ENGLISH)  # the team store's one model (team/sync.py)
    if model is None:
        return None
    return [float(x) for x in model.embed_query(query)]
