"""What the memory proxy put into each conversation, kept past the proxy's own process.

A conversation's opening packet and each turn's packet (by the turn's ordinal; an empty
text: the turn was asked and nothing was said), so a resumed session or a restarted proxy
sends the same bytes in the same places (`proxy.app`).
"""

from __future__ import annotations

from waymark.base import jsonlite as json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.storage.connection import Connection


def put(
    conn: Connection,
    key: str,
    project_id: str,
    session_id: str,
    opening: str | None,
    packets: dict[int, str],
    answered: bool,
    stamp: str,
) -> None:
    conn.execute(
        "INSERT INTO proxy_conversations (key, project_id, session_id, opening, packets,"
        " answered, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET"
        " project_id = excluded.project_id, session_id = excluded.session_id,"
        " opening = excluded.opening, packets = excluded.packets,"
        " answered = excluded.answered, updated_at = excluded.updated_at",
        (key, project_id, session_id, opening,
         json.dumps({str(k): v for k, v in sorted(packets.items())}), int(answered), stamp),
    )  # fmt: skip


def get(conn: Connection, key: str) -> tuple[str, str | None, dict[int, str], bool] | None:
    """(session, opening, packets by ordinal, answered) of the conversation kept under
    `key`, or None."""
    for session, opening, packets, answered in conn.execute(
        "SELECT session_id, opening, packets, answered FROM proxy_conversations WHERE key = ?",
        (key,),
    ):
        said = {int(k): str(v) for k, v in json.loads(packets).items()}
        return str(session), opening, said, bool(answered)
    return None


def forget_before(conn: Connection, stamp: str) -> int:
    """Drop the conversations last used before `stamp`; how many."""
    conn.execute("DELETE FROM proxy_conversations WHERE updated_at < ?", (stamp,))
    return conn.changes()
