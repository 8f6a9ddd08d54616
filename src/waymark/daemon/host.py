"""What a long-lived process keeps warm: one connection, the model, the warm socket, the loops.

Any face that runs for a while starts a `Host`: the MCP server always (its tools recall with
the model), `waymark ui` and `waymark proxy` when no other process holds the data home's warm
socket (`start_if_free`), so hooks get warm answers from whichever of them runs. One owner of
the socket per data home; the others ask it (`waymark.warm`).

Tool handlers and the warm socket's workers run on threads of their own, so every use of the
connection goes through one lock. The model loads in the background; until it is ready
recall is lexical, and the warm socket says so at once instead of making a hook wait.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from waymark.errors import Int8Unavailable, WaymarkError
from waymark.projects.resolve import Project, resolve
from waymark.recall import ann, embed, quantize, semantic, vectors
from waymark.storage import connection as db
from waymark.storage.connection import Connection
from waymark.warm import server as warm

log = logging.getLogger("waymark.server")


class Host:
    def __init__(self, *, cwd: str | None = None, refusal: WaymarkError | None = None) -> None:
        # The database could not be opened at start: every use of the connection raises it.
        self.refusal = refusal
        self.cwd = cwd or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
        self._conn: Connection | None = None
        self._lock = threading.RLock()
        self.embedder: embed.Embedder | None = None
        self._graph_lock = threading.Lock()
        self._graph_running = False
        self._graph_again = False
        self.model_note = "not loaded"  # "loading" once the background starts it
        self._model_loading = threading.Lock()  # one load at a time: at start, or a switch
        self._model_tried = threading.Event()  # the first load ended: a model, or none
        self.warm: warm.WarmServer | None = None
        self.started = time.time()
        self._stopping = threading.Event()  # set by close(): background loops end

    @contextmanager
    def conn(self) -> Iterator[Connection]:
        with self._lock:
            if self._conn is None:
                if self.refusal is not None:
                    raise self.refusal
                self._conn = db.connect()
            yield self._conn

    def project(
        self, conn: Connection, spec: str | None, *, create: bool = True, bind: bool = True
    ) -> Project:
        return resolve(conn, spec, cwd=self.cwd, create=create, bind=bind)

    # Starting and stopping.

    def start_background(self) -> None:
        """Own the warm socket if nobody does, then load the model, index what is missing and
        run the loops."""
        try:
            self.warm = warm.start(self.answer_warm)
        except OSError as exc:
            log.warning("warm recall socket unavailable: %s", exc)
        self._start_work()

    def start_if_free(self) -> bool:
        """`start_background` when no other process holds the data home's warm socket (a
        dashboard or a proxy beside a running MCP server asks it instead); whether it did."""
        try:
            self.warm = warm.start(self.answer_warm)
        except OSError as exc:
            log.warning("warm recall socket unavailable: %s", exc)
            return False
        if self.warm is None:
            return False
        self._start_work()
        return True

    def _start_work(self) -> None:
        from waymark.daemon import loops

        self.model_note = "loading"
        threading.Thread(target=self._load_model, name="waymark-model", daemon=True).start()
        loops.start(self)

    def close(self) -> None:
        self._stopping.set()
        if self.warm is not None:
            self.warm.stop()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
        # Nothing is imported here: a close while the background threads still import (the
        # model's packages, a loop's modules) waited on their import locks for good (a
        # proxy stopped within a second of its start hung 1 time in 4). Team recall's kept
        # connection exists only where team recall ran, so its module is here already.
        team_recall = sys.modules.get("waymark.team.recall")
        if team_recall is not None:
            team_recall.close_kept()

    def stopping(self, seconds: float) -> bool:
        """Wait up to `seconds`; True once `close()` was called (a loop ends then)."""
        return self._stopping.wait(seconds)

    # The warm operations.

    def answer_warm(self, request: dict[str, Any]) -> dict[str, Any]:
        """A hook's request (the warm socket's, or the `hook` tool's): `{"ok": ...}`."""
        from waymark.daemon import answers

        return answers.answer(self, request)

    # The model.

    def semantic_for(
        self, conn: Connection, project: Project, query: str
    ) -> Callable[[], list[tuple[int, float]]] | None:
        """Neighbours from the loaded model, embedded while recall runs its lexical tiers;
        None (lexical) while the model is not ready."""
        embedder = self.embedder_for(conn)
        if embedder is None:
            return None
        return semantic.overlapped(conn, project.id, query, embedder)

    def embedder_for(self, conn: Connection) -> embed.Embedder | None:
        """The loaded model when it is the one the store's `recall.model` names; else None
        (lexical), and the chosen one loads in the background: vectors of two models are
        never compared, and a switch needs no restart."""
        embedder = self.embedder
        if embedder is None:
            return None
        if getattr(embedder, "spec", None) in (None, embed.chosen(conn)):  # None: a test double
            return embedder
        if not self._model_loading.locked():
            threading.Thread(target=self._load_model, name="waymark-model", daemon=True).start()
        return None

    def _load_model(self) -> None:
        if not self._model_loading.acquire(blocking=False):
            return  # loading already
        try:
            self._load_chosen()
        finally:
            self._model_tried.set()
            self._model_loading.release()

    def await_model(self, most_s: float) -> bool:
        """Wait up to `most_s` for the first model load to end (a recall just after start
        would otherwise rank by words only); True when a model is loaded. Call it holding
        no connection: the load reads the store's choice of model."""
        if self.embedder is None and self.model_note == "loading":
            self._model_tried.wait(most_s)
        return self.embedder is not None

    def meaning_note(self) -> str:
        """Why a recall ranked by words only, for its answer (meaning was not used)."""
        if self.model_note == "loading":
            return "words only: the embedding model is still loading; ask again in a few seconds"
        return f"words only: {self.model_note}"

    def _load_chosen(self) -> None:
        with self.conn() as conn:
            int8, spec = quantize.enabled(conn), embed.chosen(conn)
        embedder = embed.load_embedder(spec=spec, allow_download=False, int8_queries=int8)
        if embedder is None:
            self.model_note = embed.last_reason() or "no embedding model"
            log.info("semantic recall off: %s", self.model_note)
            return
        self.embedder = embedder  # queries go through the full model until the copy is in
        self.model_note = f"{embedder.model} loaded"
        self._model_tried.set()  # recalls waiting for it go on; the rest is the copy's
        if int8 and embedder.query_precision != "int8":
            try:
                quantize.attach(embedder, apart=True)  # once per model file: 2 s apart
            except Int8Unavailable as exc:
                log.warning("queries use the full model: %s", exc.message)
        self.model_note = f"{embedder.model} loaded, queries {embedder.query_precision}"
        self.index_missing()
        self._warm_up(embedder)

    def _warm_up(self, embedder: embed.Embedder) -> None:
        """Build this project's vector matrix now, not on the first prompt's deadline."""
        try:
            with self.conn() as conn:
                project = resolve(conn, None, cwd=self.cwd, bind=False)
                vectors.search(conn, project.id, embedder.embed_query("warm up"), 1, embedder.model)
        except WaymarkError:
            pass  # not a Waymark project yet: nothing to warm

    def index_missing(
        self, project_id: str | None = None, memory_ids: list[str] | None = None
    ) -> None:
        """Embed memories without a current vector (only `memory_ids` when given: what a
        tool just wrote), on a connection of its own; then keep the vector index current
        on a thread of its own."""
        if self.embedder is None:
            return
        conn = db.connect()
        try:
            embedder = self.embedder_for(conn)  # the chosen model's vectors, or none yet
            if embedder is None:
                return
            vectors.index_missing(conn, embedder, project_id, memory_ids=memory_ids)
        except Exception:  # background work: log, never take the server down
            log.exception("background indexing failed")
        finally:
            conn.close()
        self._refresh_graph()

    def _refresh_graph(self) -> None:
        """The approximate index of a large store: built, or merged once enough was written
        since (or a memory erased), on one background thread (a merge at a million takes
        seconds); a request while one runs makes it run once more after."""
        with self._graph_lock:
            if self._graph_running:
                self._graph_again = True
                return
            self._graph_running = True
        threading.Thread(target=self._graph_work, name="waymark-graph", daemon=True).start()

    def _graph_work(self) -> None:
        embedder = self.embedder
        while embedder is not None:
            with self._graph_lock:
                self._graph_again = False
            conn = db.connect()
            try:
                ann.refresh(conn, embedder.model, embedder.dim)
            except Exception:  # background work: log, never take the server down
                log.exception("the vector index could not be refreshed")
            finally:
                conn.close()
            with self._graph_lock:
                if not self._graph_again:
                    self._graph_running = False
                    return
