"""The MCP session's own state: the client session it serves, the recalls its feedback
refers to, and the tools' shared helpers. What the process keeps warm (the connection, the
model, the warm socket, the loops) is its `daemon.host.Host`.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, cast

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from waymark import errors
from waymark.daemon.host import Host
from waymark.errors import WaymarkError
from waymark.projects.resolve import Project
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


class State(Host):
    def __init__(self, *, cwd: str | None = None, refusal: WaymarkError | None = None) -> None:
        super().__init__(cwd=cwd, refusal=refusal)
        self._sessions: dict[str, str] = {}  # project id -> the client session this serves
        # memory id -> the query of the latest recall that returned it: feedback on a recalled
        # memory (status `review`) is feedback on that recall. Bounded, newest kept.
        self.recalled: dict[str, str] = {}
        self._start_checked = False  # `start_once` asked: never again in this process

    def start_once(self, client: str) -> str | None:
        """The session's start packet where its client ran no SessionStart hook
        (`preview.missed`), the first time a tool answers; else, and ever after, None.
        Not where the client was installed without hooks (`install --only mcp`: the tools
        alone, by choice). A failure costs the packet, never the tool's answer."""
        if self._start_checked:
            return None
        self._start_checked = True
        import os

        from waymark.installers import manifest
        from waymark.packets.preview import missed

        if client not in ("claude-code", "codex") or manifest.mode_of(client) == "mcp":
            return None  # a client without hooks (opencode: the proxy brings its packets), or
            # one installed without them (`--only mcp`): nothing on its own
        try:
            with self.conn() as conn:
                return missed(
                    conn, self.cwd or os.getcwd(), client, self.started - SESSION_WINDOW_S
                )
        except Exception as exc:
            log.warning("the start packet for a session without SessionStart failed: %r", exc)
            return None

    def note_recalled(self, query: str, memory_ids: list[str]) -> None:
        for memory_id in memory_ids:
            self.recalled.pop(memory_id, None)
            self.recalled[memory_id] = query
        while len(self.recalled) > RECALLED_KEPT:
            self.recalled.pop(next(iter(self.recalled)))

    def session_for(self, conn: Connection, project: Project) -> str | None:
        """The client session this server serves in `project`, when it is known: the one
        session of the project that opened (its SessionStart) around this server's start
        and is still open; of several, the one in this server's working tree (agents in
        worktrees of one repository). Still several: unknown, never a guess."""
        if project.id in self._sessions:
            return self._sessions[project.id]
        from waymark.base.clock import second
        from waymark.storage.sessions import open_sessions_since

        since = second(self.started - SESSION_WINDOW_S)
        found = open_sessions_since(conn, project.id, since)
        if len(found) > 1:
            found = [s for s in found if s[1] == project.tree]
        if len(found) == 1:
            self._sessions[project.id] = found[0][0]
            return found[0][0]
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
