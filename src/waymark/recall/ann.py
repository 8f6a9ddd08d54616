"""An approximate nearest-neighbour index beside `vectors`, for stores too large to scan.

Up to `AUTO_MIN` vectors the exact scan (`vectors.VectorIndex`) is fast (about 1 ms at
10,000) and stays the only method. At a million it costs ~50 ms a query, and building its
matrix on a fresh connection ~10 s; so `waymark index` and the MCP server keep an HNSW graph
of int8 copies of every vector in a file beside the database, which a process maps in
milliseconds and searches in a few.

The file is a cache, never a source: `vectors` stays canonical and deleting the folder costs
only a rebuild. A search's candidates are always checked against the database (status,
scope) and scored with their float32 vectors, so scores are exact and only which memories
become candidates is approximate (`bench/recall_latency.py` reports recall@10 against the
exact scan).

Its name says what it covers: `<database>-index/<model>-<dim>-v<V>-e<E>.usearch` holds every
vector with a rowid up to V, and leaves out every memory erased by an event up to E. A file is
written whole under a temporary name and renamed, so a reader never maps half of one; the
files it replaces are removed after. Vectors written since V are scanned exactly beside the
graph (see `vectors.VectorIndex`); erased memories have no vector row, so the check drops them.
`refresh` merges those into a new file once they pass `MERGE_MIN` rows, and at once after an
erase, so an erased memory's quantised vector leaves the disk too.

Why usearch: a maintained HNSW library with wheels for every platform Waymark installs on,
int8 storage (530 bytes a vector at 384 dimensions, graph included), incremental add and
remove, and a saved index it can map read-only without loading. sqlite-vec's quantised
columns still scan every row (no graph), which is the cost this index is here to avoid.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from typing import Any, NamedTuple

from waymark.storage import vectors as rows
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable

SETTING = "recall.vector_index"  # auto | exact | ann
AUTO_MIN = 50_000  # "auto" keeps a graph from this many vectors
MERGE_MIN = 5_000  # vectors written since the file: merged into a new one from here
PAGE = 20_000  # vectors read (and added) at a time while building
CONNECTIVITY = 16
EXPANSION_ADD = 128
# How wide a search looks (usearch widens it to the results asked for, 310 for recall's 200
# candidates). At a million (bench/recall_latency.py): 512 finds 0.89 of the exact top 10 in
# 5.5 ms (p95), 1,024 0.94 in 7.6, 2,048 0.96 in 11.5, 3,072 0.97 in 14.3.
EXPANSION_SEARCH = 2048
SUFFIX = ".usearch"
_NAME = re.compile(r"^(?P<model>.+)-(?P<dim>\d+)-v(?P<v>\d+)-e(?P<e>\d+)\.usearch$")

log = logging.getLogger("waymark.ann")
_build_lock = threading.Lock()  # one build or merge at a time in a process


class AnnFile(NamedTuple):
    path: str
    model: str  # the model's name as it appears in the file name
    dim: int
    vectors: int  # covers every vector with a rowid up to this
    events: int  # and leaves out every memory erased by an event up to this


def available() -> bool:
    """Whether usearch (and numpy) can be imported here."""
    import importlib.util

    return importlib.util.find_spec("usearch") is not None


def mode(conn: Connection) -> str:
    from waymark import settings

    return str(settings.get(conn, SETTING))


def folder_for(conn: Connection) -> str | None:
    """`<database>-index`, or None for a database with no file (in memory)."""
    path = conn.filename
    return f"{path}-index" if path else None


def _slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._]+", "_", model)


def current(conn: Connection, model: str, dim: int) -> AnnFile | None:
    """The newest index file for `model` and `dim`, if any."""
    folder = folder_for(conn)
    if folder is None:
        return None
    return _newest(folder, _slug(model), dim)


def _files(folder: str, slug: str, dim: int) -> list[AnnFile]:
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found = []
    for name in names:
        m = _NAME.match(name)
        if m and m["model"] == slug and int(m["dim"]) == dim:
            found.append(AnnFile(os.path.join(folder, name), slug, dim, int(m["v"]), int(m["e"])))
    return found


def _newest(folder: str, slug: str, dim: int) -> AnnFile | None:
    files = _files(folder, slug, dim)
    return max(files, key=lambda f: (f.vectors, f.events)) if files else None


def _index_class() -> Any:
    """usearch's Index, imported after onnxruntime: usearch 2.26.3 to 2.26.6 (at least) load
    a native library that makes a later `import onnxruntime` crash the process (SIGSEGV);
    the other order is safe. Checked in tests/test_vector_index.py."""
    import importlib.util

    if importlib.util.find_spec("onnxruntime") is not None:
        import onnxruntime  # noqa: F401  # first: see above

    from usearch.index import Index

    return Index


def open_view(found: AnnFile) -> Any:
    """The file mapped read-only: searchable at once, nothing loaded."""
    Index = _index_class()

    try:
        view = Index.restore(found.path, view=True)
    except (OSError, RuntimeError, ValueError) as exc:
        log.warning("cannot map %s: %s", found.path, exc)
        return None
    if view is not None:
        view.expansion_search = EXPANSION_SEARCH  # type: ignore[misc]  # it has a setter
    return view


def _load(found: AnnFile) -> Any:
    """The file loaded into memory, to change; None when it will not load."""
    Index = _index_class()

    try:
        return Index.restore(found.path, view=False)
    except (OSError, RuntimeError, ValueError) as exc:
        log.warning("cannot load %s: %s", found.path, exc)
        return None


def search(view: Any, query: Any, count: int) -> tuple[Any, Any]:
    """(keys, cosine distances) of `count` approximate neighbours of the unit `query`."""
    found = view.search(query, count)
    return found.keys, found.distances


def wanted(conn: Connection, model: str, dim: int) -> bool:
    """Whether this store should keep a graph for `model`: the setting, and in "auto" the
    number of vectors."""
    chosen = mode(conn)
    if chosen == "exact" or not available():
        return False
    if chosen == "ann" or current(conn, model, dim) is not None:  # kept once built
        return True
    return rows.count_vectors(conn, model, dim) >= AUTO_MIN


def refresh(
    conn: Connection,
    model: str,
    dim: int,
    *,
    threads: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Keep the store's graph for `model` as it should be, and say what was done: built (no
    file yet), merged (enough written since, or a memory erased), current, removed (the
    setting says exact), or none (a store below "auto"'s size)."""
    folder = folder_for(conn)
    if folder is None:
        return {"index": "none", "why": "the database has no file"}
    slug = _slug(model)
    if not wanted(conn, model, dim):
        stale = _files(folder, slug, dim)
        if stale and mode(conn) == "exact":
            for f in stale:
                _remove(f.path)
            return {"index": "removed", "why": f"{SETTING} is exact"}
        why = "usearch is not installed" if not available() else f"fewer than {AUTO_MIN:,} vectors"
        return {"index": "none", "why": f"exact search ({why})"}
    with _build_lock:
        base = _newest(folder, slug, dim)
        events = int(rows.generation(conn)[0] or 0)
        newest = rows.last_vector(conn)
        if base is not None and base.vectors > newest:  # another history (a restored backup)
            base = None
        if base is not None:
            pending = newest - base.vectors  # an upper bound: rowids only grow
            erased = rows.erased_after(conn, base.events)
            if pending < MERGE_MIN and not erased:
                return {"index": "current", "file": base.path, "pending": max(0, pending)}
        started = time.perf_counter()
        made, count = _write(conn, folder, slug, dim, model, base, newest, events, threads,
                             progress)  # fmt: skip
        for f in _files(folder, slug, dim):
            if f.path != made.path:
                _remove(f.path)
        seconds = round(time.perf_counter() - started, 2)
        log.info("%s the vector index (%d vectors) in %.1f s: %s",
                 "merged" if base else "built", count, seconds, made.path)  # fmt: skip
        return {
            "index": "merged" if base else "built",
            "file": made.path,
            "vectors": count,
            "seconds": seconds,
        }


def _write(
    conn: Connection,
    folder: str,
    slug: str,
    dim: int,
    model: str,
    base: AnnFile | None,
    newest: int,
    events: int,
    threads: int,
    progress: Callable[[int, int], None] | None,
) -> tuple[AnnFile, int]:
    """A new file covering vectors up to `newest` and erases up to `events`: the base file
    loaded with what changed since, or every vector."""
    import numpy as np

    Index = _index_class()

    index: Any = _load(base) if base is not None else None
    if index is not None and base is not None:
        erased = rows.erased_after(conn, base.events)
        if erased:
            gone = np.asarray(erased, dtype=np.uint64)
            index.remove(gone[index.contains(gone)])
        after = base.vectors
    else:  # none yet, or one that will not load: every vector
        index = Index(
            ndim=dim,
            metric="cos",
            dtype="i8",
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )
        after = 0
    total = max(0, newest - after)
    done = 0
    if progress is not None:
        progress(0, total)
    while after < newest:
        page = rows.vector_rows(conn, model, dim, after, PAGE)
        page = [r for r in page if r[0] <= newest]
        if not page:
            break
        after = page[-1][0]
        keys = np.fromiter((r[1] for r in page), dtype=np.uint64, count=len(page))
        # A memory embedded again (its text changed) appears once, with its newest vector.
        keys, last = np.unique(keys[::-1], return_index=True)
        blobs = [page[len(page) - 1 - i][2] for i in last]
        matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(-1, dim)
        held = np.asarray(index.contains(keys), dtype=bool)
        if held.any():
            index.remove(keys[held])
        index.add(keys, matrix, threads=threads)
        done = min(total, done + len(page))
        if progress is not None:
            progress(done, total)
    final = _save(index, folder, f"{slug}-{dim}-v{newest}-e{events}{SUFFIX}")
    return AnnFile(final, slug, dim, newest, events), len(index)


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("cannot remove %s: %s", path, exc)


def status(conn: Connection, model: str, dim: int) -> dict[str, Any]:
    """What `waymark status` says of the index for `model`."""
    found = current(conn, model, dim)
    if found is None:
        return {"method": "exact", "setting": mode(conn)}
    newest = rows.last_vector(conn)
    return {
        "method": "ann",
        "setting": mode(conn),
        "file": found.path,
        "bytes": os.path.getsize(found.path) if os.path.exists(found.path) else 0,
        "pending": max(0, newest - found.vectors),
    }


def scrub(conn: Connection) -> int:
    """Take the memories erased since each index file out of it now (a new file, the old
    one removed), so an erased memory's quantised vector leaves the disk with the erase;
    how many files were rewritten. Faces call it after an erase; `refresh` does the same."""
    folder = folder_for(conn)
    if folder is None or not available() or not os.path.isdir(folder):
        return 0
    rewritten = 0
    with _build_lock:
        events = int(rows.generation(conn)[0] or 0)
        for name in sorted(os.listdir(folder)):
            m = _NAME.match(name)
            if not m:
                continue
            old = AnnFile(os.path.join(folder, name), m["model"], int(m["dim"]),
                          int(m["v"]), int(m["e"]))  # fmt: skip
            erased = rows.erased_after(conn, old.events)
            if not erased:
                continue
            import numpy as np

            index = _load(old)
            if index is None:  # unreadable: a cache, rebuilt by the next `refresh`
                _remove(old.path)
                continue
            gone = np.asarray(erased, dtype=np.uint64)
            index.remove(gone[index.contains(gone)])
            _save(index, folder, f"{old.model}-{old.dim}-v{old.vectors}-e{events}{SUFFIX}")
            _remove(old.path)
            rewritten += 1
    return rewritten


def _save(index: Any, folder: str, name: str) -> str:
    """Write `index` whole under a temporary name, then rename it to `name`."""
    os.makedirs(folder, mode=0o700, exist_ok=True)
    final = os.path.join(folder, name)
    temporary = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    try:
        index.save(temporary)
        os.chmod(temporary, 0o600)  # like the database: the owner's alone
        os.replace(temporary, final)
    finally:
        if os.path.exists(temporary):
            _remove(temporary)
    return final


def note(conn: Connection, model: str, dim: int) -> str:
    """How vector search runs here, in one sentence for `waymark status`."""
    said = status(conn, model, dim)
    if said["method"] == "ann":
        size = said["bytes"] / 1e6
        return (
            f"approximate index, {size:,.1f} MB, {said['pending']:,} vectors written since"
            f" (scanned exactly until merged): {said['file']}"
        )
    why = f"{SETTING} is exact" if said["setting"] == "exact" else (
        f"an index is kept from {AUTO_MIN:,} vectors" if said["setting"] == "auto"
        else "no index file yet: `waymark index` builds it"
    )  # fmt: skip
    return f"exact scan ({why})"
