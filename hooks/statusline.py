"""Claude Code's status line command (`statusLine` in its settings.json): the session's
line from `packets.statusline`, printed after each assistant message.

Claude Code pipes the session's JSON (session_id, cwd, workspace, model) to it and shows
the first line it prints. Light as a hook: the standard library, apsw and Waymark's own light
modules. It never breaks the client's screen: on any error it prints nothing and logs a line
to `hooks.log`.
"""

from __future__ import annotations

import os
import sys

NAME = "StatusLine"
MAX_STDIN = 1024 * 1024
BUSY_MS = 100  # a locked store: the line waits for the next message, not the screen


def main() -> None:
    try:
        session_id = _session_id()
        if session_id:
            from waymark import home

            if os.path.exists(home.db_path()):
                from waymark.packets.statusline import status_line
                from waymark.storage import connection as db

                conn = db.connect(busy_ms=BUSY_MS, checkpoint_on_close=False)
                try:
                    sys.stdout.write(status_line(conn, session_id) + "\n")
                finally:
                    conn.close()
            else:
                from waymark.packets.statusline import IDLE

                sys.stdout.write(IDLE + "\n")
    except BaseException as exc:  # fail open: the status line stays as it was
        if not isinstance(exc, SystemExit):
            from . import runtime

            runtime.log(NAME, runtime.describe(exc))
    sys.stdout.flush()
    os._exit(0)  # no teardown (`runtime.leave`): the store is closed, the line flushed


def _session_id() -> str | None:
    """The session's id from the JSON Claude Code pipes in (a few hundred bytes, and stdin
    closed: the hooks' reader, with its deadline and salvage, brings imports this does not
    need)."""
    stream = sys.stdin
    if stream is None or stream.isatty():
        return None
    from waymark.base import jsonlite as json

    try:
        data = json.loads(stream.buffer.read(MAX_STDIN))
    except ValueError:
        return None
    found = data.get("session_id") if isinstance(data, dict) else None
    return found if isinstance(found, str) and found else None


if __name__ == "__main__":
    main()
