"""`waymark mcp`: the MCP stdio server, and the one warm process of a session.

Five tools (recall, remember, checkpoint, forget, status; eight at most), each a thin adapter
over the library, their definitions kept short: every model request carries them. Nothing but the protocol is written to stdout: logs go
to stderr. The server exits when its client closes stdin, and its warm-recall threads with it.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal, cast

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from pydantic import Field

from waymark import __version__
from waymark.errors import InvalidArgument, WaymarkError
from waymark.health import status
from waymark.server import checkpoint_tool, hook_tool, lifecycle, memory_tools
from waymark.server.results import Status
from waymark.server.sdk import Server
from waymark.server.state import ADDS, READ_ONLY, ProjectArg, State, state_of, tool_errors
from waymark.storage import connection as db

INSTRUCTIONS = "Waymark: this project's memory across sessions."


def build_server(state: State | None = None) -> tuple[Server, State]:
    """The server and the State its tools share (created here unless given)."""
    state = state or State()

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[State]:
        yield state

    server = Server("waymark", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan)
    for fn, name, hints in (*memory_tools.TOOLS, *checkpoint_tool.TOOLS, *TOOLS):
        server.tool(name=name, annotations=hints)(fn)
    # plain text out: what a command hook prints
    server.tool(name="hook", annotations=READ_ONLY, structured_output=False)(hook_tool.hook)
    server.waymark_state = state  # what every call's answer may add to (`Server.call_tool`)
    return server, state


@tool_errors
def status_tool(
    ctx: Context,
    capture: Literal["on", "confirm", "read-only", "off"] | None = None,  # this session's mode
    review: Annotated[
        dict[str, Literal["approve", "reject", "helpful", "not_helpful", "stale", "wrong"]] | None,
        Field(description="{cand_ID: approve|reject, ID: helpful|not_helpful|stale|wrong}"),
    ] = None,
    project: ProjectArg = None,
) -> Status:
    """Counts, handoff, candidates; sets capture mode, reviews, takes feedback."""
    state = state_of(ctx)
    with state.conn() as conn:
        proj = state.project(conn, project)
        session = state.session_for(conn, proj)
        if review:
            state.queues_writes(conn, proj)  # read-only or off: refused; confirm decides
        for given, decision in (review or {}).items():
            _review(conn, proj, given, decision, session, state.recalled.get(given))
        if capture is not None:
            if session is None:
                raise InvalidArgument(
                    "this server cannot tell which session it serves; run `waymark capture "
                    f"{capture} --session ID` (the session id is in the client's hook input)"
                )
            from waymark.projects.capture import set_mode

            set_mode(conn, proj, capture, session_id=session, client="mcp")
        report = status.report(conn, proj, session_id=session)
        report["semantic"]["server"] = state.model_note
        return cast(Status, report)


def _review(
    conn: Any, proj: Any, given: str, decision: str, session: str | None, query: str | None
) -> None:
    """One entry of status's `review`: a candidate approved or rejected, or feedback on a
    memory (on the recall of `query` that returned it, when this server answered one)."""
    from waymark.curation import candidates, feedback

    if given.lower().startswith(candidates.PREFIX):
        if decision not in ("approve", "reject"):
            raise InvalidArgument(f"a candidate is approved or rejected, not {decision!r}")
        decide = candidates.approve if decision == "approve" else candidates.reject
        decide(conn, proj, given, actor="agent", session_id=session)
    elif decision in ("approve", "reject"):
        raise InvalidArgument(f"{given} is not a candidate (cand_...): give feedback instead")
    else:
        feedback.give(conn, proj, given, decision, query=query, actor="agent", session_id=session)


TOOLS = [(status_tool, "status", ADDS)]


def main(before_exit: Callable[[], None] | None = None) -> int:
    """Serve MCP on stdio until the client leaves; `before_exit` runs last (the front's
    final flush), since the process then ends with os._exit.

    A database that cannot be opened does not stop the server: it serves every tool call
    with that stable error (`database_corrupt`, `schema_too_new`, ...), so the client hears
    why, and leaves at end of input like any other. Start, exit and crash are lines of
    `server.log` in the data folder (`waymark doctor` shows the last ones)."""
    logging.basicConfig(
        stream=sys.stderr,
        level=os.environ.get("WAYMARK_LOG_LEVEL", "WARNING"),
        format="waymark-mcp %(levelname)s %(message)s",
    )
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # an idle BLAS pool spins in a daemon
    life = lifecycle.Life(before_exit)
    life.trap_signals()
    try:
        refusal = None
        try:
            db.connect().close()  # a newer or corrupt database: every tool call says so
        except WaymarkError as exc:
            refusal = exc
            logging.getLogger("waymark.server").error("[%s] %s", exc.code, exc.message)
            life.note(f"refusing every tool call: [{exc.code}] {exc.message}")
        server, state = build_server(State(refusal=refusal))
        life.state = state
        if refusal is None:
            state.start_background()
        server.run("stdio")
        life.leave(0, "end of input")
    except BaseException as exc:  # KeyboardInterrupt included: say why, then leave
        life.crashed(exc)
    return 1  # not reached: leave() ends the process


__all__ = ["build_server", "main"]
