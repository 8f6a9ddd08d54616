"""Codex `notify` (agent-turn-complete): a turn ended. Codex cannot be asked to continue
from here, so unsaved work only leaves a "handoff needed" marker, as a Stop would.

Codex passes the payload as the last argv item, not on stdin.

    python -I -m waymark.hooks.notify '{"type": "agent-turn-complete", ...}'
"""

from __future__ import annotations

import sys

from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms

from .event import Event
from .runtime import Context, log

NAME = "notify"


def main() -> None:
    try:
        data = json.loads(sys.argv[-1]) if len(sys.argv) > 1 else {}
        if not isinstance(data, dict) or data.get("type") != "agent-turn-complete":
            return
        ctx = Context(
            Event(
                client="codex",
                name=NAME,
                session_id=str(data.get("thread-id", "")),
                cwd=data.get("cwd"),
            )
        )
        try:
            if ctx.event.session_id and ctx.capturing():
                from waymark.handoff import ledger

                ledger.mark_if_unsaved(
                    ctx.conn,
                    ctx.project,
                    ctx.event.session_id,
                    "codex",
                    "turn ended with changes and no checkpoint",
                )
        finally:
            ctx.close()
    except BaseException as exc:  # fail open, as every hook
        if not isinstance(exc, SystemExit):
            log(NAME, f"{type(exc).__name__}: {exc}")


if __name__ == "__main__":
    main()
