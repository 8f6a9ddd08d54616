"""A conversation that reaches Waymark through the memory proxy rather than through hooks:
which project it belongs to, what to inject at its start and at each new user turn, and what
its tool calls did.

The same library the hooks call, under the same rules: the session packet
(`packets.session_start`) at a conversation's first request, the prompt packet
(`packets.prompt`) for each new user turn, each with its receipt; the tool calls the model
made and their results (read from the next request, which carries them) recorded as the
PostToolUse hook records them (`handoff.ledger.record_tool`: redacted before anything is
written, once per call by its delivery key). The prompt is used for ranking and never stored.
"""

from __future__ import annotations

import os

from waymark.projects.resolve import Project
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

CLIENT = "proxy"


def bind(
    conn: Connection, spec: str | None, cwd: str, session_id: str | None
) -> tuple[Project, dict[str, Any]] | None:
    """The project a conversation belongs to and its capture policy, or None where hooks would
    not capture (then it passes through untouched). `spec` is the `x-waymark-project` header
    (a path or a named project); else the proxy's working directory."""
    from waymark.projects.capture import hook_project, policy

    if spec and not os.path.isabs(spec) and os.path.isdir(os.path.join(cwd, spec)):
        spec = os.path.abspath(os.path.join(cwd, spec))  # a folder, from where the proxy runs
    if spec and not os.path.isabs(spec):
        from waymark.errors import NotFound
        from waymark.projects.resolve import resolve

        try:
            project = resolve(conn, spec, create=False)
        except NotFound:
            return None
        return project, policy(conn, project, session_id)
    return hook_project(conn, spec or cwd, session_id)


def quiet(prompt: str) -> bool:
    """Whether a user turn said `#no-capture`: nothing of that turn is recorded."""
    from waymark.packets.prompt import asks_no_capture

    return asks_no_capture(prompt)


def turn(
    conn: Connection,
    project: Project,
    session_id: str,
    *,
    first: bool,
    prompt: str | None,
    record: bool,
    agent: str | None = None,
) -> tuple[str | None, str | None]:
    """(session packet, prompt packet) for one request: the session packet on the
    conversation's first request, the prompt packet when it carries a new user turn (with
    `agent`'s own memories too, as a subagent's recall reads them). Neither for a prompt
    that says `#no-recall` (a first one: the conversation goes without a session packet)."""
    from waymark.packets import prompt as prompts
    from waymark.packets.session_start import start_session

    if prompt and prompts.asks_no_recall(prompt):
        return None, None

    opening = (
        start_session(conn, project, session_id, CLIENT, "startup", record=record)
        if first
        else None
    )
    said = None
    if prompt and prompt.strip():
        neighbours = prompts.ask_neighbours(prompt, project.files or os.getcwd())
        said = prompts.prompt_packet(conn, project, session_id, CLIENT, prompt, neighbours,
                                     record=record, agent=agent)  # fmt: skip
    return opening, said


def record_calls(
    conn: Connection, project: Project, session_id: str, calls: list[dict[str, Any]]
) -> int:
    """Record tool calls with their results: each {id, tool, command, paths, failed,
    exit_code, error}; once each (a call's id is its delivery key). How many were new."""
    from waymark.handoff.ledger import record_tool

    done = 0
    for call in calls:
        kept = record_tool(
            conn, project, session_id, CLIENT,
            paths=call.get("paths") or (), command=call.get("command"),
            failed=call.get("failed"), tool_name=call.get("tool"),
            exit_code=call.get("exit_code"), error=call.get("error"),
            cwd=project.files, key=f"proxy-{session_id}-{call['id']}",
        )  # fmt: skip
        done += kept
    return done


KEPT_DAYS = 30  # a conversation not seen for this long is not resumed: its packets go


def kept(conn: Connection, key: str) -> tuple[str, str | None, dict[int, str], bool] | None:
    """What was put into the conversation named `key` before (the proxy restarted since, or
    forgot it): (session, session packet, each turn's packet by ordinal, "" where the turn
    was asked and nothing said, whether it has an answer), or None."""
    from waymark.storage import conversations

    return conversations.get(conn, key)


def keep(
    conn: Connection,
    key: str,
    project: Project,
    session_id: str,
    opening: str | None,
    packets: dict[int, str],
    answered: bool,
) -> None:
    """Keep what was put into the conversation, redacted again (a packet can carry a line
    read from the repository, which no store redacted); conversations unseen for
    `KEPT_DAYS` go at the same time."""
    from waymark.base import clock
    from waymark.base.redact import scrub
    from waymark.storage import connection as db
    from waymark.storage import conversations

    stamp = clock.now()
    clean = {n: scrub(text)[0] for n, text in packets.items()}
    with db.write(conn):
        conversations.put(conn, key, project.id, session_id,
                          scrub(opening)[0] if opening else None, clean, answered, stamp)  # fmt: skip
        conversations.forget_before(conn, clock.later(-KEPT_DAYS * 86400))
