"""The warm nearest-neighbour index over one connection's `vectors` (`VectorIndex`): an exact
numpy scan over a matrix cached per scope, a sqlite-vec `vec0` table when asked, or in a
store large enough to keep one the approximate graph (`ann`), whose candidates are checked
and scored exactly here. All are rebuilt from `vectors`, which stays canonical
(`recall.vectors`: what is stored and embedded).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import weakref
from array import array
from dataclasses import dataclass, field

from waymark.errors import InvalidArgument, SearchUnavailable
from waymark.recall import ann
from waymark.storage import connection as db
from waymark.storage import vectors as rows
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MAX_VEC0_K = 4096  # sqlite-vec's limit on k
ANN_WIDEN = 4  # an approximate search short of in-scope candidates asks for this many more
ANN_MAX_TRY = 5_000  # past this many candidates, a small scope in a large store scans exactly


def pack(vec: Any) -> bytes:
    """A vector (numpy row or sequence of floats) as little-endian float32 bytes."""
    if hasattr(vec, "astype"):
        return vec.astype("<f4", copy=False).tobytes()
    values = array("f", vec)
    if sys.byteorder == "big":
        values.byteswap()
    return values.tobytes()


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
