"""Team recall: the best of a shared project's team memories for a query, searched on the
server (full text and pgvector, `teamstore.search`), with who wrote each. Its own process
(the CLI, the MCP server), never a hook; the hooks read what `sync` has pulled."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
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
    conn: Connection,
    project: Project,
    query: str,
    *,
    limit: int = 10,
    semantic: bool = True,
    embedder: Any = None,
    keep: bool = False,
) -> dict[str, Any]:
    """{project_key, semantic, results: [{memory, score, author, machine}]} best first.
    `embedder`: a loaded model to embed the query with (the team's one model; else it is
    loaded). `keep`: a long-lived process (the MCP server) keeps its connection, and with it
    the server's statistics it read, for the next recall."""
    if not query.strip():
        raise InvalidArgument("give a query")
    found = link.configured()
    if found is None:
        raise TeamNotConnected("no team store here: `waymark team connect postgresql://...`")
    key = project_key(conn, project)
    vector = _query_vector(query, embedder) if semantic else None
    with _connection(found[0], keep) as pg:
        words = lexical_terms(pg, query)
        matches = search.team_matches(pg, key, words, vector, limit)
        records = team_memories.get_memories(pg, [memory_id for memory_id, _ in matches])
    results = []
    for memory_id, score in matches:
        record = records.get(memory_id)
        if record is None:
            continue
        author, machine = record.pop("_author"), record.pop("_machine")
        record.pop("_project_key", None)
        results.append({"memory": record, "score": round(score, 5), "author": author,
                        "machine": machine})  # fmt: skip
    return {"project_key": key, "semantic": vector is not None, "results": results}


_kept: dict[str, Any] = {}  # conninfo -> the connection a long-lived process keeps
_kept_lock = threading.Lock()


def close_kept() -> None:
    """Close the connections `keep` left open (the process is ending)."""
    with _kept_lock:
        for pg in _kept.values():
            pg.close()
        _kept.clear()


@contextmanager
def _connection(conninfo: str, keep: bool) -> Iterator[Any]:
    """A connection to the team store for one recall: a new one closed after, or (`keep`)
    the process's kept one, used by one recall at a time and opened again when broken."""
    if not keep:
        pg = team_db.connect(conninfo, migrate=False)
        try:
            yield pg
        finally:
            pg.close()
        return
    with _kept_lock:
        pg = _kept.get(conninfo)
        if pg is None or pg.closed or pg.broken:
            pg = _kept[conninfo] = team_db.connect(conninfo, migrate=False)
        try:
            yield pg
        except BaseException:
            pg.close()  # a failed recall may have left it mid-protocol: the next opens anew
            _kept.pop(conninfo, None)
            raise


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


def _query_vector(query: str, embedder: Any = None) -> list[float] | None:
    """The query's embedding where a model is on this machine (else recall is lexical)."""
    from waymark.recall import embed

    if embedder is not None and getattr(embedder, "spec", None) == embed.ENGLISH:
        return [float(x) for x in embedder.embed_query(query)]
    model = embed.load_embedder(embed.ENGLISH)  # the team store's one model (team/sync.py)
    if model is None:
        return None
    return [float(x) for x in model.embed_query(query)]
