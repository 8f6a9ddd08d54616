"""SessionStart: the project's memory up front (the packet is `waymark.packets.session_start`).

python -I -c "from waymark.hooks.session_start import main;main()" claude-code|codex
"""

from __future__ import annotations

import os

from .runtime import Context, context_output, log, run

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

NAME = "SessionStart"


def handle(ctx: Context) -> str | None:
    started = _begin_status(ctx.event.cwd)  # git works while the store is opened
    if not ctx.capturing():
        return None
    _warn_config(ctx)
    from waymark.packets.session_start import start_session

    event = ctx.event
    later: list[str] = []  # a map refresh for the background, started after the packet
    if ctx.records and (event.source or "startup") in ("startup", "clear"):
        _refresh_map(ctx, later.append)
    text = start_session(
        ctx.conn, ctx.project, event.session_id, event.client, event.source,
        record=ctx.records, started=started,
    )  # fmt: skip
    if later:
        from waymark.codemap.freshness import in_background

        for root in later:
            in_background(root)
    return context_output(NAME, text) if text else None


def _begin_status(cwd: str | None) -> tuple[str, object] | None:
    """(the working tree of `cwd`, its `git status` begun now), or None outside git. The
    packet reads it after opening the store and its own queries: at a million memories it
    had waited up to 6 ms for git, having begun it only then."""
    from waymark import home
    from waymark.projects import git
    from waymark.projects.locate import locate

    if not os.path.exists(home.db_path()):  # a first session: capturing() decides first
        return None
    try:
        where = locate(cwd or os.getcwd())
    except Exception:  # no such directory: the hook goes on, and capturing() decides
        return None
    if where.how == "directory":
        return None
    status = git.start_dirty(where.top)
    return (where.top, status) if status is not None else None


def _warn_config(ctx: Context) -> None:
    """A `.waymark.toml` key Waymark does not know is a log line at each session start (and
    a WARN in `doctor`): a typo would otherwise be ignored in silence."""
    from waymark.projects.locate import config_files, unknown_keys

    for path in config_files(ctx.event.cwd, ctx.project.files):
        for sentence in unknown_keys(path):
            log(NAME, f"{sentence}; Waymark ignores it")


def _refresh_map(ctx: Context, later: Callable[[str], None]) -> None:
    """The code map brought up to date before the packet reads it (`codemap.freshness`),
    or its refresh handed to `later`; a failure costs the map's freshness, never the
    packet."""
    from waymark.codemap.freshness import freshen

    said = freshen(ctx.conn, ctx.project, "start", later)
    if said.startswith("failed"):
        log(NAME, f"code map refresh {said}")


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
