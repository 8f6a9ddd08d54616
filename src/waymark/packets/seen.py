"""What every packet records once it is shown: the memories the session (or a subagent)
has seen, so nothing is injected twice; their use counts; and the packet's receipt."""

from __future__ import annotations

from waymark.base import clock
from waymark.storage import connection as db
from waymark.storage import sessions
from waymark.storage.events import count_use

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from waymark.packets.render import Section
    from waymark.storage.connection import Connection


def seen_prefix(agent_id: str | None) -> str:
    """What a subagent's seen items and receipts are keyed by: its id, redacted, since the
    id is stored (and so goes into backups and exports) and clients do not promise its shape."""
    if not agent_id:
        return ""
    from waymark.base.redact import scrub

    return scrub(agent_id)[0] + ":"


def seen_by(conn: Connection, session_id: str, agent_id: str | None = None) -> set[str]:
    """What the session has been shown; inside a subagent, that subagent's own (its context
    is not the parent's: what it was shown carries its id)."""
    seen = sessions.injected(conn, session_id)
    if not agent_id:
        return seen
    prefix = seen_prefix(agent_id)
    return {k[len(prefix) :] for k in seen if k.startswith(prefix)}


def note_injected(
    conn: Connection,
    session_id: str,
    memory_ids: list[str],
    *,
    receipt: tuple[str, str, str, str, list[Section]] | None = None,
    others: Sequence[str] = (),
    new_session: str | None = None,
    agent_id: str | None = None,
) -> None:
    """Remember what this session has seen (never inject twice), count the use, and keep
    the packet's receipt: `receipt` is (project id, hook, packet kind, text, sections).
    `new_session` (its client) opens the session's row first, in the same transaction; a
    subagent's (`agent_id`) seen items are its own, apart from the parent's."""
    if not memory_ids and not others and receipt is None:
        return
    stamp = clock.now()
    prefix = seen_prefix(agent_id)
    with db.write(conn):
        if new_session is not None and receipt is not None:
            sessions.insert_session(conn, session_id, new_session, receipt[0], stamp, None, None)
        sessions.add_injected(conn, session_id, [prefix + k for k in [*memory_ids, *others]])
        count_use(conn, memory_ids, stamp)
        if receipt is not None:
            from waymark.packets.render import receipts

            project_id, hook, kind, text, parts = receipt
            lines = receipts(text, parts)
            if lines:
                sessions.add_receipts(
                    conn, clock.new_id(), stamp, project_id, session_id, hook, kind, lines
                )
