"""The MCP server's process state: one database connection, the model, warm recall.

Tool handlers run on worker threads and the warm socket serves hooks on its own threads, so
every use of the connection goes through one lock. The model loads in the background; until
it is ready, recall is lexical and the warm socket says so at once instead of making a hook
wait.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, TypeVar, cast

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from waymark import errors, warm
from waymark.errors import WaymarkError
from waymark.projects.resolve import Project, resolve
from waymark.recall import ann, embed, quantize, semantic, vectors
from waymark.storage import connection as db
from waymark.storage import faults
from waymark.storage.connection import Connection

log = logging.getLogger("waymark.server")

# Honest hints for the model and the client (hints, not security). Nothing here reaches
# beyond this machine, so no tool is open-world.
READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
ADDS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)  # same call twice: same state (dedup, keys)
WRITES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
DESTROYS = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
T = TypeVar("T")
SESSION_WINDOW_S = 120.0  # a client starts its MCP server within this of its SessionStart
# Every tool's optional `project` argument.
ProjectArg = Annotated[str | None, Field()]  # default: the working directory's project


RECALLED_KEPT = 1000


FIRST_MAP_TRIES = 10  # the project may appear with the client's SessionStart, just after
FIRST_MAP_WAIT_S = 1.0
OUTCOMES_FIRST_S = 5.0  # after the start: the tools and the first map go first
OUTCOMES_S = 1800.0  # then every half hour while the server runs
DBT_S = 60.0  # how soon a dbt run's results reach the packets


class State:
    def __init__(self, *, cwd: str | None = None, refusal: WaymarkError | None = None) -> None:
        # The database could not be opened at start: every tool call answers this error.
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
        self._sessions: dict[str, str] = {}  # project id -> the client session this serves
        # memory id -> the query of the latest recall that returned it: feedback on a recalled
        # memory (status `review`) is feedback on that recall. Bounded, newest kept.
        self.recalled: dict[str, str] = {}
        self._stopping = threading.Event()  # set by close(): background loops end

    def note_recalled(self, query: str, memory_ids: list[str]) -> None:
        for memory_id in memory_ids:
            self.recalled.pop(memory_id, None)
            self.recalled[memory_id] = query
        while len(self.recalled) > RECALLED_KEPT:
            self.recalled.pop(next(iter(self.recalled)))

    @contextmanager
    def conn(self) -> Iterator[Connection]:
        with self._lock:
            if self._conn is None:
                if self.refusal is not None:
                    raise self.refusal
                self._conn = db.connect()
            yield self._conn

    def project(self, conn: Connection, spec: str | None, *, create: bool = True) -> Project:
        return resolve(conn, spec, cwd=self.cwd, create=create)

    def session_for(self, conn: Connection, project: Project) -> str | None:
        """The client session this server serves in `project`, when it is known: the one
        session of the project that opened (its SessionStart) around this server's start
        and is still open. Several such sessions: unknown, never a guess."""
        if project.id in self._sessions:
            return self._sessions[project.id]
        from waymark.base.clock import second
        from waymark.storage.sessions import open_sessions_since

        since = second(self.started - SESSION_WINDOW_S)
        found = open_sessions_since(conn, project.id, since)
        if len(found) == 1:
            self._sessions[project.id] = found[0]
            return found[0]
        return None

    def queues_writes(self, conn: Connection, project: Project) -> bool:
        """Before any write of an agent's tool: True when it goes to the review queue (capture
        confirm); CaptureRefused when capture is read-only or off for this session."""
        from waymark.projects.capture import agent_write

        return agent_write(conn, project, self.session_for(conn, project))

    def origin(self, conn: Connection, project: Project) -> dict[str, str | None]:
        """What an agent's write records about where it came from: session and branch."""
        from waymark.projects.locate import git_branch

        return {
            "session_id": self.session_for(conn, project),
            "git_branch": git_branch(project.files) if project.files else None,
        }

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

    def start_background(self) -> None:
        """Own the warm socket if nobody does, then load the model and index what is missing."""
        try:
            self.warm = warm.start(self.answer_warm)
        except OSError as exc:
            log.warning("warm recall socket unavailable: %s", exc)
        self.model_note = "loading"
        threading.Thread(target=self._load_model, name="waymark-model", daemon=True).start()
        threading.Thread(target=self._check_file, name="waymark-check", daemon=True).start()
        threading.Thread(target=self._scheduled_sweep, name="waymark-sweep", daemon=True).start()
        threading.Thread(target=self._first_map, name="waymark-map", daemon=True).start()
        threading.Thread(target=self._team_sync, name="waymark-team", daemon=True).start()
        threading.Thread(target=self._outcomes, name="waymark-outcomes", daemon=True).start()
        threading.Thread(target=self._dbt, name="waymark-dbt", daemon=True).start()

    def _first_map(self) -> None:
        """A captured project's first code map, built here so no hook waits for it
        (`map.server_builds_first`); the hooks keep it up to date from then on. Its own
        connection, behind the hooks: a long first map holds no tool call or hook up. A
        project the client's SessionStart has not created yet is waited for a little."""
        from waymark.base.launch import behind_the_hooks
        from waymark.codemap.freshness import freshen

        behind_the_hooks()
        conn = None
        try:
            conn = db.connect()
            for _ in range(FIRST_MAP_TRIES):
                try:
                    project = self.project(conn, None, create=False)
                    break
                except errors.NotFound:
                    time.sleep(FIRST_MAP_WAIT_S)
            else:
                return  # no project here: nothing to map
            said = freshen(conn, project, "first")
            if said.startswith("failed"):
                log.warning("the first code map could not be built: %s", said)
            elif said.startswith("built"):
                log.info("first code map %s", said)
        except Exception as exc:  # background work: log, never take the server down
            log.warning("the first code map could not be built: %s", exc)
        finally:
            if conn is not None:
                conn.close()

    def _scheduled_sweep(self) -> None:
        """The retention sweep the user scheduled (`retention.schedule`), when it is due."""
        from waymark.curation import retention

        try:
            with self.conn() as conn:
                try:
                    project = self.project(conn, None, create=False)
                except errors.NotFound:
                    return  # no project here: nothing to sweep
                if retention.due(conn, project):
                    done = retention.sweep(conn, project, actor="schedule")
                    log.info(
                        "scheduled sweep: %d archived, %d purged",
                        len(done["archive"]), len(done["purge"]),
                    )  # fmt: skip
        except Exception as exc:  # background work: log, never take the server down
            log.warning("scheduled sweep could not run: %s", exc)

    def _outcomes(self) -> None:
        """What the repository says, read at each start and every OUTCOMES_S after: what
        became of the changes the project's decisions, lessons and checkpoints led to
        (`curation.outcomes`), and its notes' index (`knowledge.notes`)."""
        from waymark.curation import outcomes
        from waymark.knowledge import notes

        def work(conn: Connection, project: Project) -> None:
            done = outcomes.refresh(conn, project)
            if done["changed"]:
                log.info("outcomes: %d changed (%d held, %d reverted)",
                         done["changed"], done["held"], done["reverted"])  # fmt: skip
            read = notes.refresh(conn, project)
            if read["added"] or read["changed"] or read["removed"]:
                log.info("notes: %d added, %d changed, %d removed (%d sections)",
                         read["added"], read["changed"], read["removed"],
                         read["sections"])  # fmt: skip

        self._every(OUTCOMES_S, "outcomes could not be read from git", work)

    def _dbt(self) -> None:
        """What dbt last wrote (`knowledge.dbt`): read at start and again within DBT_S of each
        dbt run (a stat of each artifact when nothing changed), so the packets name the
        failing tests of the latest run."""
        from waymark.knowledge import dbt

        def work(conn: Connection, project: Project) -> None:
            for found in dbt.refresh(conn, project)["projects"]:
                if found["read"] or found["problems"]:
                    log.info("dbt %s: read %s%s", found["root"] or ".",
                             ", ".join(found["read"]) or "nothing",
                             "; " + "; ".join(found["problems"]) if found["problems"] else "")  # fmt: skip

        self._every(DBT_S, "dbt artifacts could not be read", work)

    def _every(
        self, seconds: float, failed: str, work: Callable[[Connection, Project], None]
    ) -> None:
        """Run `work` on this server's project OUTCOMES_FIRST_S after the start, then every
        `seconds` (every 30 s while there is no project yet) until the server stops: on a
        connection of its own, at a lower priority than the tools and the hooks; a failure
        is a log line, never the server's end."""
        from waymark.base.launch import behind_the_hooks

        behind_the_hooks()
        wait = OUTCOMES_FIRST_S
        while not self._stopping.wait(wait):
            wait = seconds
            conn = None
            try:
                conn = db.connect()
                work(conn, self.project(conn, None, create=False))
            except errors.NotFound:
                wait = min(seconds, 30.0)  # no project here yet
            except Exception as exc:  # background work: log, never take the server down
                log.warning("%s: %s", failed, exc)
            finally:
                if conn is not None:
                    conn.close()

    def _team_sync(self) -> None:
        """The team sync the user scheduled (`team.sync_minutes`), when it is due: its own
        connection, so no tool call waits on the network."""
        from waymark.base.launch import behind_the_hooks
        from waymark.team import sync

        behind_the_hooks()  # this thread only: the tools and the hooks go first
        wait = 1.0
        while not self._stopping.wait(wait):
            conn = None
            try:
                conn = db.connect()
                wait = sync.poll_seconds(conn)
                project = self.project(conn, None, create=False)
                done = sync.run_scheduled(conn, project)
                if done is not None:
                    log.info("team sync: %d sent, %d applied, %d conflicts",
                             done["pushed"], done["applied"], done["conflicts"])  # fmt: skip
            except errors.NotFound:
                wait = 10.0  # no project here yet: its first session makes one
                continue
            except Exception as exc:  # background work: log, never take the server down
                log.warning("team sync could not run: %s", exc)
            finally:
                if conn is not None:
                    conn.close()

    def _check_file(self) -> None:
        """Read every page once per session, in the background: damage no query has touched
        yet stops writes now, not after more work has gone into a failing file. Behind the
        hooks: at a million memories it reads 3 GB for 7 s, the session's first prompts."""
        from waymark.base.launch import behind_the_hooks

        behind_the_hooks()
        try:
            problem = db.scan_for_damage()
        except Exception as exc:  # background work: log, never take the server down
            log.warning("database check could not run: %s", exc)
            return
        if problem:
            log.error("the database is damaged (%s); writes are stopped", problem)

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
            except errors.Int8Unavailable as exc:
                log.warning("queries use the full model: %s", exc.message)
        self.model_note = f"{embedder.model} loaded, queries {embedder.query_precision}"
        self.index_missing()
        self._warm_up(embedder)

    def _warm_up(self, embedder: embed.Embedder) -> None:
        """Build this project's vector matrix now, not on the first prompt's deadline."""
        from waymark.errors import WaymarkError

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

    def answer_warm(self, request: dict[str, Any]) -> dict[str, Any]:
        """A hook's request (the warm socket's, or the `hook` tool's): `{"ok": ...}`."""
        if request.get("op") == "tool_result":  # what a tool call did: needs no model
            from waymark.packets import failure

            with self.conn() as conn:
                return failure.answer(conn, request)
        if request.get("op") == "tool":  # before an edit or a command: needs no model
            from waymark.packets import tool

            with self.conn() as conn:
                return tool.answer(conn, request)
        if request.get("op") == "session_start":  # a SessionStart hook's: needs no model
            from waymark.packets import session_start

            with self.conn() as conn:
                return session_start.answer(conn, request)
        if request.get("op") == "prompt":  # a prompt hook's packet: lexical until the model is in
            from waymark.packets import prompt

            with self.conn() as conn:
                return prompt.answer(conn, request, embedder=self.embedder_for(conn))
        if self.embedder is None:
            return {"ok": False, "error": f"semantic recall not ready: {self.model_note}"}
        with self.conn() as conn:
            return semantic.answer(conn, request)

    def close(self) -> None:
        self._stopping.set()
        if self.warm is not None:
            self.warm.stop()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
        from waymark.team.recall import close_kept

        close_kept()


def state_of(ctx: Context) -> State:
    """The process's State, which `app.build_server` hands the SDK as its lifespan context."""
    return cast(State, ctx.request_context.lifespan_context)


def tool_errors(fn: Callable[..., T]) -> Callable[..., T]:
    """Turn Waymark's errors into tool errors carrying {code, message, details}."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except WaymarkError as exc:
            raise ToolError(json.dumps({"error": exc.to_dict()}, default=str)) from exc
        except ToolError:
            raise
        except Exception as exc:  # never a bare "Error executing tool": say code and cause
            mapped = faults.translate(exc)
            if mapped is None:
                log.exception("tool %s failed", fn.__name__)
                mapped = errors.InternalError(
                    f"internal error: {exc!r}; the server's log has the traceback",
                    cause=repr(exc),
                )
            raise ToolError(json.dumps({"error": mapped.to_dict()}, default=str)) from exc

    return wrapper
