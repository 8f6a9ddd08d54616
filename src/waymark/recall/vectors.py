"""Stored embeddings and nearest-neighbour search over them.

`vectors` holds one packed little-endian float32 BLOB per (memory, model), tagged with the
sha256 of the exact text embedded, so unchanged text is never embedded twice. Search goes
through the connection's warm index (`vector_index.VectorIndex`: an exact numpy scan, a
sqlite-vec `vec0` table when asked, or an approximate graph checked exactly), rebuilt from
`vectors`, which stays canonical.
"""

from __future__ import annotations

import hashlib
import json
import sys
from array import array

# The warm index lives in `vector_index`; these names are read here and by callers of this
# module (a vector's bytes, the connection's index, sqlite-vec's extension).
from waymark.recall.vector_index import index_for, load_vec0, pack, vec0_path  # noqa: F401
from waymark.storage import connection as db
from waymark.storage import vectors as rows
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

INDEX_BATCH = 64


def embed_text(title: str, content: str, tags: Iterable[str]) -> str:
    """What gets embedded: the title (unless the content starts with it), content, tags."""
    parts = [] if content.lstrip().startswith(title.rstrip("…")) else [title]
    parts.append(content)
    tags = list(tags)
    if tags:
        parts.append(" ".join(tags))
    return "\n".join(p for p in parts if p)


# A vector's text hash: 16 hex digits (64 bits: says whether the text changed, nothing
# more), in its row and in the index every embedding check reads. Vectors stored before held
# all 64; the first 16 of those are compared, so none is embedded again for it.
TEXT_HASH_DIGITS = 16


def text_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return digest[:TEXT_HASH_DIGITS]


def unpack(blob: bytes, dim: int | None = None) -> list[float]:
    """The floats of a packed vector, checking its length when `dim` is given."""
    values = array("f")
    values.frombytes(blob)
    if sys.byteorder == "big":
        values.byteswap()
    if dim is not None and len(values) != dim:
        raise ValueError(f"vector has {len(values)} floats, expected {dim}")
    return values.tolist()


def _scan(
    conn: Connection, model: str, project_id: str | None, memory_ids: list[str] | None = None
) -> tuple[list[tuple[int, str, int | None]], int]:
    """Active memories needing a vector for `model` (rowid, text, the tokens to cut it at or
    None for the model's own), and how many are active:
    in the scope, or among `memory_ids` (what a write just made: no scan of the store)."""
    found = rows.embedding_state(conn, model, project_id, memory_ids)
    context = _contexts(conn, found, memory_ids is None)
    todo = []
    for rowid, title, content, tags, stored, _ in found:
        text = context.get(rowid) or embed_text(title, content, json.loads(tags))
        if stored is None or stored[:TEXT_HASH_DIGITS] != text_hash(text):
            todo.append((rowid, text, CONTEXT_MAX_TOKENS if rowid in context else None))
    return todo, len(found)


# An imported conversation turn ("Mel: Yes, last week!") says little alone: it is embedded
# with up to this many turns of its session either side, after its own text, the whole cut
# at CONTEXT_MAX_TOKENS (a cut loses neighbours first). Development set (bench/retrieval.py),
# hybrid R@10 0.697 before: 0.737 with 2 turns and 128 tokens (nDCG@10 0.543 -> 0.565),
# 0.735 at the model's 256 tokens (and `waymark index` of the set 54 s, not 34), 0.724 at
# 96; in a first trial across sessions, 1 turn gave 0.708 and 3 gave 0.707 where 2 gave
# 0.726. A turn is embedded again when a neighbour changes (its text hash).
CONTEXT_TURNS = 2
CONTEXT_MAX_TOKENS = 128


def _contexts(conn: Connection, found: list[tuple[Any, ...]], whole: bool) -> dict[int, str]:
    """rowid -> the text to embed for each imported turn among `found` (`with_context`). The
    turns of its session come from `found` when it is a whole scope (every active memory of
    the project is in it), else from the database."""
    wanted = {(turn[0], turn[1]) for *_, turn in found if turn is not None}
    if not wanted:
        return {}
    if whole:
        listed = sorted(
            (turn, rowid, title, content, tags)
            for rowid, title, content, tags, _, turn in found
            if turn is not None
        )
        turns = [(turn[0], turn[1], rowid, t, c, g) for turn, rowid, t, c, g in listed]
    else:
        turns = rows.session_turns(conn, sorted(wanted))
    return with_context(turns, CONTEXT_TURNS)


def with_context(turns: Sequence[tuple[Any, ...]], width: int) -> dict[int, str]:
    """rowid -> a turn's own text, then up to `width` turns before it and `width` after it in
    its session; `turns` is (project, session, rowid, title, content, tags as JSON) in each
    session's order."""
    texts = [embed_text(t, c, json.loads(g)) for _, _, _, t, c, g in turns]
    out: dict[int, str] = {}
    start = 0
    for end in range(1, len(turns) + 1):
        if end < len(turns) and turns[end][:2] == turns[start][:2]:
            continue
        for i in range(start, end):  # one session: turns[start:end]
            near = texts[max(start, i - width) : i] + texts[i + 1 : min(end, i + 1 + width)]
            out[turns[i][2]] = "\n".join([texts[i], *near])
        start = end
    return out


def missing(conn: Connection, model: str, project_id: str | None = None) -> list[tuple[int, str]]:
    """(rowid, text) of active memories whose `model` vector is absent or stale."""
    return [(rowid, text) for rowid, text, _ in _scan(conn, model, project_id)[0]]


def index_missing(
    conn: Connection,
    embedder: Any,
    project_id: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    batch: int = INDEX_BATCH,
    memory_ids: list[str] | None = None,
) -> dict[str, int]:
    """Embed what is missing, committing batch by batch so an interrupted run resumes; only
    among `memory_ids` when given (a million memories take seconds to check).

    `embedder` has `.model`, `.dim` and `.embed(texts) -> (n, dim)`. `progress(done, todo)`
    is called before the first batch and after each committed one. Returns counts: embedded,
    skipped (already current), total (active memories in scope).
    """
    todo, total = _scan(conn, embedder.model, project_id, memory_ids)
    # batches of like lengths pad least (embed.py); a turn with its context, cut at
    # CONTEXT_MAX_TOKENS, in batches of its own
    todo.sort(key=lambda item: (item[2] is not None, len(item[1])))
    done = 0
    if progress is not None and todo:
        progress(0, len(todo))
    start = 0
    while start < len(todo):
        cap = todo[start][2]
        chunk = [item for item in todo[start : start + batch] if item[2] == cap]
        texts = [text for _, text, _ in chunk]
        matrix = embedder.embed(texts) if cap is None else embedder.embed(texts, cap)
        if len(matrix) != len(chunk):
            raise ValueError(f"embedder returned {len(matrix)} vectors for {len(chunk)} texts")
        with db.write(conn):
            for (rowid, text, _), vec in zip(chunk, matrix, strict=True):
                _store(conn, rowid, embedder.model, embedder.dim, text_hash(text), pack(vec))
        done += len(chunk)
        start += len(chunk)
        if progress is not None:
            progress(done, len(todo))
    return {"embedded": done, "skipped": total - len(todo), "total": total}


def adopt(conn: Connection, model: str, dim: int, given: dict[str, bytes]) -> int:
    """Store vectors another machine made with this `model` (`given`, by memory id: a team
    pull) for those memories without a current one, under the hash of the text this machine
    would embed: what it would have computed, without the work. An imported turn is left
    to be embedded here (its text takes in its neighbours). How many were stored; inside the
    caller's transaction."""
    from waymark.storage.memories import rowids_of

    if not given:
        return 0
    ids = {rowid: memory_id for memory_id, rowid in rowids_of(conn, list(given)).items()}
    stored = 0
    for rowid, title, content, tags, held, turn in rows.embedding_state(
        conn, model, None, list(given)
    ):
        blob = given.get(ids.get(rowid, ""))
        if turn is not None or blob is None or len(blob) != 4 * dim:
            continue
        digest = text_hash(embed_text(title, content, json.loads(tags)))
        if held is None or held[:TEXT_HASH_DIGITS] != digest:
            rows.put_vector(conn, rowid, model, dim, digest, blob)
            stored += 1
    return stored


def _store(conn: Connection, rowid: int, model: str, dim: int, digest: str, blob: bytes) -> None:
    if len(blob) != 4 * dim:
        raise ValueError(f"vector of {len(blob) // 4} floats for a {dim}-dimension model")
    rows.put_vector(conn, rowid, model, dim, digest, blob)


def search(
    conn: Connection,
    project_id: str | None,
    query_vec: Sequence[float] | Any,
    k: int = 10,
    model: str | None = None,
    method: str = "auto",
) -> list[tuple[int, float]]:
    """Top-k active memories by cosine similarity: [(memory rowid, score)], best first.

    The scope is the project's memories plus the global ones (every project's when
    `project_id` is None). `method` is "numpy" (exact scan of a cached matrix), "vec0"
    (sqlite-vec) or "auto" (numpy when importable, else vec0).
    """
    if model is None:
        from waymark.recall.embed import ENGLISH

        model = ENGLISH.id
    return index_for(conn).search(project_id, query_vec, k, model, method)
