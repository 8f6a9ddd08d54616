"""The warm operations: what a hook (through the warm socket, or Codex's `hook` tool) asks the
long-lived process, by `op`. Each answers `{"ok": ...}` with what the hook would have made
itself, made here where everything is loaded.

- tool_result: what a tool call did (a failure's recall); needs no model.
- tool: before an edit or a command; needs no model.
- session_start: a SessionStart packet; needs no model.
- prompt: a prompt's packet; by words until the model is in.
- semantic: the neighbours of queries (an older hook's route, and `recall` in a process of
  its own); needs the model.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from waymark.recall.embed import Embedder
from waymark.storage.connection import Connection


class Host(Protocol):
    """What an answer needs of its host (`daemon.host.Host`)."""

    embedder: Embedder | None
    model_note: str

    def conn(self) -> AbstractContextManager[Connection]: ...
    def embedder_for(self, conn: Connection) -> Embedder | None: ...


def _tool_result(host: Host, conn: Connection, request: dict[str, Any]) -> dict[str, Any]:
    from waymark.packets import failure

    return failure.answer(conn, request)


def _tool(host: Host, conn: Connection, request: dict[str, Any]) -> dict[str, Any]:
    from waymark.packets import tool

    return tool.answer(conn, request)


def _session_start(host: Host, conn: Connection, request: dict[str, Any]) -> dict[str, Any]:
    from waymark.packets import session_start

    return session_start.answer(conn, request)


def _prompt(host: Host, conn: Connection, request: dict[str, Any]) -> dict[str, Any]:
    from waymark.packets import prompt

    return prompt.answer(conn, request, embedder=host.embedder_for(conn))


def _semantic(host: Host, conn: Connection, request: dict[str, Any]) -> dict[str, Any]:
    from waymark.recall import semantic

    return semantic.answer(conn, request)


Answer = Callable[[Host, Connection, dict[str, Any]], dict[str, Any]]
# op -> (its answer, whether it needs the model loaded)
OPS: dict[str, tuple[Answer, bool]] = {
    "tool_result": (_tool_result, False),
    "tool": (_tool, False),
    "session_start": (_session_start, False),
    "prompt": (_prompt, False),
}
FALLBACK: tuple[Answer, bool] = (_semantic, True)  # any other op: `semantic.answer` decides


def answer(host: Host, request: dict[str, Any]) -> dict[str, Any]:
    """The answer to one warm request, on the host's connection."""
    work, needs_model = OPS.get(str(request.get("op")), FALLBACK)
    if needs_model and host.embedder is None:
        return {"ok": False, "error": f"semantic recall not ready: {host.model_note}"}
    with host.conn() as conn:
        return work(host, conn, request)
