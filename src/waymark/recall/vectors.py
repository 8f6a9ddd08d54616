"""Stored embeddings and nearest-neighbour search over them.

`vectors` holds one packed little-endian float32 BLOB per (memory, model), tagged with the
sha256 of the exact text embedded, so unchanged text is never embedded twice. Search is an
exact numpy scan over a matrix cached per connection, or a sqlite-vec `vec0` table when asked;
in a store large enough to keep one, an approximate graph (`ann`) whose candidates are
checked and scored exactly here (see `VectorIndex`). All are rebuilt from `vectors`, which
stays canonical.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import threading
import weakref
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from waymark.errors import InvalidArgument, SearchUnavailable
from waymark.recall import ann
from waymark.storage import connection as db
from waymark.storage import vectors as rows
from waymark.storage.connection import Connection

INDEX_BATCH = 64
MAX_VEC0_K = 4096  # sqlite-vec's limit on k
ANN_WIDEN = 4  # an approximate search short of in-scope candidates asks for this many more
ANN_MAX_TRY = 5_000  # past this many candidates, a small scope in a large store scans exactly


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


def pack(vec: Any) -> bytes:
    """A vector (numpy row or sequence of floats) as little-endian float32 bytes."""
    if hasattr(vec, "astype"):
        return vec.astype("<f4", copy=False).tobytes()
    values = array("f", vec)
    if sys.byteorder == "big":
        values.byteswap()
    return values.tobytes()


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


_indexes: weakref.WeakKeyDictionary[Connection, VectorIndex] = weakref.WeakKeyDictionary()


def index_for(conn: Connection) -> VectorIndex:
    """The connection's VectorIndex, created on first use and dropped with the connection."""
    index = _indexes.get(conn)
    if index is None:
        index = _indexes[conn] = VectorIndex(conn)
    return index


def vec0_path() -> str | None:
    """sqlite-vec's loadable extension, found without importing the package (and numpy)."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(list(spec.submodule_search_locations)[0], "vec0")


def load_vec0(conn: Connection) -> bool:
    """Load sqlite-vec into `conn` by path; False when it is not installed or will not load."""
    path = vec0_path()
    return path is not None and rows.load_extension(conn, path)


@dataclass
class _Snapshot:
    """One scope's cached vectors: a numpy matrix, or a TEMP vec0 table."""

    keys: dict[int, str] = field(default_factory=dict)  # memory rowid -> text_hash held
    stamp: tuple[int, int] = (-1, -1)  # (data_version, total_changes) when last checked
    generation: tuple[Any, Any] = (None, None)  # (max events.seq, max vectors.rowid)
    rowids: Any = None  # numpy: int64 array, the matrix's row order
    matrix: Any = None  # numpy: (n, dim) float32, rows normalised
    dead: int = 0  # numpy: rows whose rowid is -1 (memory no longer active)
    table: str | None = None  # vec0: temp table name


@dataclass
class _Ann:
    """A graph file mapped read-only, and the vectors written since it (scanned exactly)."""

    file: ann.AnnFile
    view: Any
    stamp: tuple[int, int] = (-1, -1)
    after: int = 0  # vectors up to this rowid are in the graph or in `added`
    added: dict[int, bytes] = field(default_factory=dict)  # memory rowid -> newest vector
    rowids: Any = None  # numpy int64: `added`'s keys, the delta matrix's rows
    matrix: Any = None  # numpy (n, dim) float32, rows normalised


class VectorIndex:
    """Warm nearest-neighbour search over one connection's `vectors`.

    Freshness, checked before every search, cheapest first:
    1. `PRAGMA data_version` (moves when another connection commits) and `total_changes()`
       (moves when this one writes): both unchanged, the cache is current.
    2. The generation (max events.seq, max vectors.rowid), two index lookups: unchanged, no
       vector was written and no memory changed status, so unrelated writes (use counts,
       links) cost nothing more. It relies on two invariants: every status change (and so
       every erase, whose trigger deletes vectors) logs an event in its transaction, as
       `store` does; and `_store` gives each written vector a rowid above every existing one.
    3. The scope's (memory rowid, text_hash) pairs of active memories, compared with the
       cached ones; only rows that appeared, vanished or changed hash are (re)loaded. A hash
       names the exact text embedded, so equal pairs mean equal vectors.

    The vec0 table is TEMP, per connection: it is a rebuildable index, and keeping it out
    of the file means an erased memory leaves no derived copy behind. Searches from several
    threads are serialised by a lock.
    """

    def __init__(self, conn: Connection) -> None:
        # Weak, so the per-connection registry never keeps a closed connection alive.
        self._conn = weakref.ref(conn)
        self._snapshots: dict[tuple[str, str | None, str, int], _Snapshot] = {}
        self._graphs: dict[tuple[str, int], _Ann | None] = {}
        self._graph_stamp: dict[tuple[str, int], tuple[int, int]] = {}
        self._vec0: bool | None = None
        self._tables = 0
        self._lock = threading.Lock()  # the warm server searches from several threads

    @property
    def conn(self) -> Connection:
        conn = self._conn()
        if conn is None:
            raise ReferenceError("the connection of this VectorIndex is gone")
        return conn

    def search(
        self, project_id: str | None, query_vec: Any, k: int, model: str, method: str = "auto"
    ) -> list[tuple[int, float]]:
        if k < 1:
            raise InvalidArgument(f"k must be at least 1 (got {k})")
        with self._lock:
            if method in ("auto", "ann"):
                graph = self._graph(model, len(query_vec))
                if graph is None and method == "ann":
                    raise SearchUnavailable(
                        "no vector index file for this model; `waymark index` builds one"
                    )
                if graph is not None:
                    found = self._graph_top(graph, project_id, query_vec, k, model)
                    if found is not None:
                        return found
                    method = "numpy"  # a small scope in a large store: scanned exactly
            method = self._method(method)
            snap = self._fresh(method, project_id, model, len(query_vec))
            if method == "numpy":
                return _numpy_top(snap, query_vec, k)
            return self._vec0_top(snap, query_vec, k)

    def prepare(
        self, project_id: str | None, k: int, model: str, dim: int
    ) -> Callable[[Any], Callable[[], list[tuple[int, float]]]] | None:
        """Bring the scope's snapshot (or the store's graph) up to date now, on the caller's
        thread, and return `near(query_vec)` for a worker thread to run beside the caller's
        queries: no database there (the numpy scan, or the graph's search). `near` returns
        the function that finishes on the caller's thread, giving the top k: with a graph, its
        candidates checked against the database and scored exactly. None when the scan would
        be vec0's (that one reads the database)."""
        if k < 1:
            raise InvalidArgument(f"k must be at least 1 (got {k})")
        with self._lock:
            if self._method("auto") != "numpy":
                return None
            graph = self._graph(model, dim)
            snap = None if graph is not None else self._fresh("numpy", project_id, model, dim)

        def near(query_vec: Any) -> Callable[[], list[tuple[int, float]]]:
            if graph is None:
                assert snap is not None
                with self._lock:  # a refresh on another thread rewrites the snapshot
                    found = _numpy_top(snap, query_vec, k)
                return lambda: found
            query = _unit(query_vec)
            count = _first_count(graph, k)
            with self._lock:  # a refresh on another thread replaces the graph's matrices
                keys = _graph_keys(graph, query, count)
            return lambda: self._graph_finish(graph, project_id, query, k, model, count, keys)

        return near

    def _graph_finish(
        self, graph: _Ann, project_id: str | None, query: Any, k: int, model: str, count: int,
        keys: set[int],
    ) -> list[tuple[int, float]]:  # fmt: skip
        """`prepare`'s graph candidates, finished on the thread that owns the connection."""
        with self._lock:
            found = self._graph_checked(graph, project_id, query, k, model, count, keys)
            if found is None:  # a small scope in a large store: scanned exactly
                snap = self._fresh("numpy", project_id, model, len(query))
                found = _numpy_top(snap, query, k)
            return found

    def vec0_available(self) -> bool:
        if self._vec0 is None:
            self._vec0 = load_vec0(self.conn)
        return self._vec0

    def _method(self, method: str) -> str:
        if method == "auto":
            method = "numpy" if importlib.util.find_spec("numpy") else "vec0"
        if method not in ("numpy", "vec0"):
            raise InvalidArgument(f"unknown search method {method!r}; use auto, numpy or vec0")
        if method == "vec0" and not self.vec0_available():
            raise SearchUnavailable(
                "sqlite-vec is not installed or cannot be loaded; install waymark-agent-memory[semantic]"
            )
        return method

    def _fresh(self, method: str, project_id: str | None, model: str, dim: int) -> _Snapshot:
        key = (method, project_id, model, dim)
        snap = self._snapshots.get(key)
        stamp = db.generation(self.conn)
        if snap is not None and snap.stamp == stamp:
            return snap
        with db.savepoint(self.conn):  # one consistent read, nested in a caller's
            fresh = self._refreshed(snap, method, project_id, model, dim)
        self._snapshots[key] = fresh
        # Our own temp-table writes moved the change count: taken again, keeping the commit
        # generation read first, so a commit by another connection since shows next time.
        fresh.stamp = (stamp[0], db.generation(self.conn)[1])
        return fresh

    def _refreshed(
        self, snap: _Snapshot | None, method: str, project_id: str | None, model: str, dim: int
    ) -> _Snapshot:
        generation = rows.generation(self.conn)
        if snap is None:
            snap = self._new_snapshot(method, dim)
            self._apply(snap, dim, [], rows.active_vectors(self.conn, project_id, model, dim, True))
        elif generation != snap.generation:
            wanted = dict(rows.active_vectors(self.conn, project_id, model, dim, False))
            if wanted != snap.keys:
                self._sync(snap, model, dim, wanted)
        snap.generation = generation
        return snap

    def _new_snapshot(self, method: str, dim: int) -> _Snapshot:
        if method == "numpy":
            np = _numpy()
            empty = np.zeros(0, dtype=np.int64)
            return _Snapshot(rowids=empty, matrix=np.zeros((0, dim), dtype=np.float32))
        self._tables += 1
        table = f"temp.waymark_vec_{self._tables}"
        rows.create_knn_table(self.conn, table, dim)
        return _Snapshot(table=table)

    def _sync(self, snap: _Snapshot, model: str, dim: int, wanted: dict[int, str]) -> None:
        stale = [r for r, h in snap.keys.items() if wanted.get(r) != h]
        fresh = [r for r, h in wanted.items() if snap.keys.get(r) != h]
        self._apply(snap, dim, stale, rows.get_vectors(self.conn, model, dim, fresh))

    def _apply(
        self, snap: _Snapshot, dim: int, stale: list[int], fresh: list[tuple[int, str, bytes]]
    ) -> None:
        """Drop `stale` rowids, add `fresh` (rowid, text_hash, blob) rows."""
        if snap.table is not None:
            rows.replace_knn_rows(self.conn, snap.table, stale, [(r, b) for r, _, b in fresh])
        else:
            _apply_matrix(snap, stale, fresh, dim)
        for r in stale:
            del snap.keys[r]
        snap.keys.update((r, h) for r, h, _ in fresh)

    def _graph(self, model: str, dim: int) -> _Ann | None:
        """The store's graph for `model`, brought up to date; None when it has none (or
        numpy and usearch are missing, or the setting says exact)."""
        key = (model, dim)
        stamp = db.generation(self.conn)
        graph = self._graphs.get(key)
        if self._graph_stamp.get(key) == stamp:
            return graph
        self._graph_stamp[key] = stamp
        if not ann.available() or importlib.util.find_spec("numpy") is None:
            self._graphs[key] = None
            return None
        with db.savepoint(self.conn):
            graph = self._graphs[key] = self._graph_refreshed(graph, model, dim)
        return graph

    def _graph_refreshed(self, graph: _Ann | None, model: str, dim: int) -> _Ann | None:
        if ann.mode(self.conn) == "exact":
            return None
        found = ann.current(self.conn, model, dim)
        newest = rows.last_vector(self.conn)
        if found is None or found.vectors > newest:  # none, or made from another history
            return None
        if graph is None or graph.file != found:
            view = ann.open_view(found)
            if view is None:  # unreadable (logged): exact until `refresh` writes another
                return None
            graph = _Ann(file=found, view=view, after=found.vectors)
        if newest > graph.after:  # vectors written since the file: scanned exactly
            while True:
                page = rows.vector_rows(self.conn, model, dim, graph.after, ann.PAGE)
                for vrowid, memory_rowid, blob in page:
                    graph.added[memory_rowid] = blob  # by rowid: the newest wins
                    graph.after = vrowid
                if len(page) < ann.PAGE:
                    break
            graph.after = max(graph.after, newest)
            np = _numpy()
            graph.rowids = np.fromiter(graph.added, dtype=np.int64, count=len(graph.added))
            graph.matrix = _normalised(b"".join(graph.added.values()), dim)
        return graph

    def _graph_top(
        self, graph: _Ann, project_id: str | None, query_vec: Any, k: int, model: str
    ) -> list[tuple[int, float]] | None:
        """Top-k by the graph and the vectors written since, checked and scored exactly;
        None when the scope holds too few of the candidates (a small project in a large
        store), for the caller to scan exactly."""
        query = _unit(query_vec)
        count = _first_count(graph, k)
        keys = _graph_keys(graph, query, count)
        return self._graph_checked(graph, project_id, query, k, model, count, keys)

    def _graph_checked(
        self, graph: _Ann, project_id: str | None, query: Any, k: int, model: str, count: int,
        keys: set[int],
    ) -> list[tuple[int, float]] | None:  # fmt: skip
        """The candidates `keys` (from a search `count` wide) kept where the scope allows
        and scored with their float32 vectors; the search widened while too few are kept."""
        np = _numpy()
        dim = len(query)
        total = len(graph.view) + len(graph.added)
        while True:
            checked = rows.scoped_vectors(self.conn, project_id, model, dim, sorted(keys))
            if len(checked) >= k or count >= total:
                break
            if count >= ANN_MAX_TRY:
                return None
            count = min(total, count * ANN_WIDEN)
            keys = _graph_keys(graph, query, count)
        if not checked:
            return []
        matrix = _normalised(b"".join(blob for _, blob in checked), dim)
        scores = matrix @ query
        rowids = np.fromiter((r for r, _ in checked), dtype=np.int64, count=len(checked))
        order = np.lexsort((rowids, -scores))[:k]
        return [(int(rowids[i]), float(scores[i])) for i in order]

    def _vec0_top(self, snap: _Snapshot, query_vec: Any, k: int) -> list[tuple[int, float]]:
        assert snap.table is not None
        found = rows.knn(self.conn, snap.table, pack(query_vec), min(k, MAX_VEC0_K))
        return [(rowid, 1.0 - distance) for rowid, distance in found]


def _unit(query_vec: Any) -> Any:
    np = _numpy()
    query = np.asarray(query_vec, dtype=np.float32)
    norm = float(np.linalg.norm(query))
    return query / norm if norm else query


def _first_count(graph: _Ann, k: int) -> int:
    """How many candidates a graph search asks for first: k and half again, and a few."""
    return min(len(graph.view) + len(graph.added), k + k // 2 + 10)


def _graph_keys(graph: _Ann, query: Any, count: int) -> set[int]:
    """The rowids nearest the unit `query` in the graph and among the vectors written
    since (scanned exactly): no database."""
    np = _numpy()
    keys: set[int] = set()
    if len(graph.view):
        keys.update(int(r) for r in ann.search(graph.view, query, count)[0])
    if graph.added:
        scores = graph.matrix @ query
        near = np.argpartition(-scores, count - 1)[:count] if count < len(scores) else None
        keys.update((graph.rowids if near is None else graph.rowids[near]).tolist())
    return keys


def _numpy() -> Any:
    # BLAS threads make a 10k x 384 scan ten times slower (8 ms vs 0.7 ms) on 2 cores, and
    # an idle pool can spin in a warm process. Only effective before numpy's first import.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import numpy

    return numpy


def _normalised(blob: bytes, dim: int) -> Any:
    """Packed float32 rows as an (n, dim) matrix of unit rows (the embedder's already are)."""
    np = _numpy()
    matrix = np.frombuffer(blob, dtype="<f4").reshape(-1, dim)
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))[:, None]
    if not np.allclose(norms, 1, atol=1e-4):
        matrix = matrix / np.where(norms == 0, 1, norms)
    return matrix


def _apply_matrix(
    snap: _Snapshot, stale: list[int], fresh: list[tuple[int, str, bytes]], dim: int
) -> None:
    np = _numpy()
    dead = np.isin(snap.rowids, np.asarray(stale, dtype=np.int64))
    if not fresh and 4 * (snap.dead + len(stale)) < len(snap.rowids):
        # A few memories archived or superseded: mark their rows dead instead of copying
        # the whole matrix; `_numpy_top` skips them. Compacted on the next addition.
        snap.rowids = np.where(dead, -1, snap.rowids)
        snap.dead += int(dead.sum())
        return
    keep = ~dead & (snap.rowids >= 0)
    added = np.frombuffer(b"".join(blob for _, _, blob in fresh), dtype="<f4").reshape(-1, dim)
    norms = np.sqrt(np.einsum("ij,ij->i", added, added))[:, None]  # no n x dim temporary
    if not np.allclose(norms, 1, atol=1e-4):  # the embedder normalises; others may not
        added = added / np.where(norms == 0, 1, norms)
    n_keep = int(keep.sum())
    if n_keep == 0:
        matrix = added
    else:  # one allocation: this matrix can be hundreds of MB
        matrix = np.empty((n_keep + len(added), dim), dtype=np.float32)
        np.compress(keep, snap.matrix, axis=0, out=matrix[:n_keep])
        matrix[n_keep:] = added
    new_rowids = np.fromiter((r for r, _, _ in fresh), dtype=np.int64, count=len(fresh))
    snap.matrix, snap.dead = matrix, 0
    snap.rowids = np.concatenate([snap.rowids[keep], new_rowids])


def _numpy_top(snap: _Snapshot, query_vec: Any, k: int) -> list[tuple[int, float]]:
    np = _numpy()
    n = len(snap.rowids)
    if n == snap.dead:
        return []
    query = np.asarray(query_vec, dtype=np.float32)
    norm = float(np.linalg.norm(query))
    scores = snap.matrix @ (query / norm if norm else query)
    want = k + snap.dead  # dead rows may take places; they are dropped below
    top = np.argpartition(-scores, want - 1)[:want] if want < n else np.arange(n)
    top = top[snap.rowids[top] >= 0]
    rowids, best = snap.rowids[top], scores[top]
    order = np.lexsort((rowids, -best))[:k]
    return [(int(rowids[i]), float(best[i])) for i in order]
