"""What an agent would see next, asked without being an agent: the SessionStart packet a
new session of `client` would start with now, and the packet a prompt would bring, made by
the calls the hooks make (`session_start.packet`, `prompt.prompt_packet`) with nothing
recorded: no session opened, no injection, no receipt. Each comes with its tokens, its
budget, the hook's output as the client reads it, and its receipt lines (what each line is
and why it is there; what the budget left out, and why).

    next_start(conn, project, client) -> Preview
    next_prompt(conn, project, client, prompt) -> Preview
    missed(conn, cwd, client, since) -> the start packet of a session whose client ran no
        SessionStart hook (the MCP server gives it with the first tool answer)
"""

from __future__ import annotations

from waymark.base.hookout import context_output
from waymark.base.tokens import estimate
from waymark.packets.render import receipts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection

# A session id no session has: the packet is the one a new session gets (every earlier
# session is "the last one"; nothing was shown in this one yet).
PREVIEW_SESSION = "preview-not-a-session"
CLIENTS = ("claude-code", "codex")


def next_start(conn: Connection, project: Project, client: str) -> dict[str, Any]:
    """The packet a new session of `client` would start with now (SessionStart, startup)."""
    from waymark import settings
    from waymark.packets.session_start import packet
    from waymark.projects import git

    _check(client)
    root = project.files
    status = git.start_dirty(root)
    text, (_, parts) = packet(
        conn, project, PREVIEW_SESSION, full=True, head=git.head(root),
        dirty=lambda: git.finish_dirty(status, root), branch=git.branch(root), client=client,
    )  # fmt: skip
    budget = settings.get(conn, "packet.session_start_tokens")
    return _preview(conn, project, "SessionStart", text, parts, budget)


def next_prompt(conn: Connection, project: Project, client: str, prompt: str) -> dict[str, Any]:
    """The packet `prompt` would bring as the first prompt of a new session of `client`
    (UserPromptSubmit), by words and paths: the meaning tier needs the model the warm
    server holds, which this process does not load for a look."""
    from waymark import settings
    from waymark.errors import InvalidArgument
    from waymark.packets.prompt import prompt_packet

    _check(client)
    if not prompt.strip():
        raise InvalidArgument("type a prompt to see the packet it would bring")
    parts: list[Any] = []
    text = prompt_packet(conn, project, PREVIEW_SESSION, client, prompt, record=False,
                         sections_out=parts)  # fmt: skip
    budget = settings.get(conn, "packet.prompt_tokens")
    return _preview(conn, project, "UserPromptSubmit", text or "", parts, budget)


def _preview(
    conn: Connection, project: Project, event: str, text: str, parts: list[Any], budget: int
) -> dict[str, Any]:
    from waymark.packets.receipts import source_of

    lines = [{"section": section, "item": item, "why": why, "tokens": tokens, "text": said,
              **(source_of(conn, project, item) if item else {})}
             for section, item, why, tokens, said in receipts(text, parts)]  # fmt: skip
    return {
        "event": event,
        "text": text,
        "tokens": estimate(text) if text else 0,
        "budget": budget,
        "output": context_output(event, text) if text else "",
        "lines": lines,
        "left_out": sum(1 for line in lines if line["tokens"] == 0),
    }


def _check(client: str) -> None:
    from waymark.errors import InvalidArgument

    if client not in CLIENTS:
        raise InvalidArgument(f"unknown client {client!r}; one of {', '.join(CLIENTS)}")


def missed(conn: Connection, cwd: str, client: str, since: float) -> str | None:
    """The packet a session start would have given, for a client that ran no SessionStart
    hook since `since` (epoch seconds; any hook's run is in `hookruns`): Codex's `exec` with
    hooks not trusted, its desktop app. None where one ran, or where hooks never capture.
    Read only: no session opened, nothing recorded (the client's session id is not known
    here). The MCP server gives it with the session's first tool answer."""
    from waymark.base import clock, hookruns
    from waymark.projects.capture import hook_project

    stamp = clock.second(since)
    if any(at >= stamp and event == "SessionStart" and who != hookruns.SELF_TEST
           for at, who, event, _, _ in hookruns.runs()):  # fmt: skip
        return None
    found = hook_project(conn, cwd, None)
    if found is None or not found[1]["enabled"]:
        return None
    text = next_start(conn, found[0], client if client in CLIENTS else "codex")["text"]
    return str(text) or None
