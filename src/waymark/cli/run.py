"""A command line to its handler: parsed by `cli.quick` when it is a plain one (no argparse
loaded), else by argparse (`cli.dispatch`); every refusal printed with its stable code.

Exit codes: 0 done, 1 refused (a WaymarkError, printed as one line or as
`{code, message, details}` with --json), 2 bad usage (code `usage`, the same two forms),
130 interrupted, 141 when the reader of the output went away.
"""

from __future__ import annotations

import os
import sys

from waymark.base.text import mend
from waymark.cli.common import Context, emit_error
from waymark.errors import InternalError, UsageError, WaymarkError

TYPE_CHECKING = False  # typing costs every command ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

# Old names kept for a release, hidden from the overview: `waymark forget` (a retention sweep)
# was renamed so it no longer shares a name with the MCP tool that archives one memory.
RENAMED = {"forget": "sweep"}


def _flags_first(argv: list[str]) -> list[str]:
    """`waymark --json status` as `waymark status --json`: the flags every command takes
    (--json, --project) may come before the command too."""
    moved, rest = [], list(argv)
    while rest:
        if rest[0] == "--json" or rest[0].startswith("--project="):
            moved.append(rest.pop(0))
        elif rest[0] == "--project" and len(rest) > 1:
            moved += [rest.pop(0), rest.pop(0)]
        else:
            break
    if not moved or not rest or rest[0].startswith("-"):
        return argv
    end = rest.index("--") if "--" in rest else len(rest)
    return [*rest[:end], *moved, *rest[end:]]


def storage_error(exc: BaseException) -> WaymarkError | None:
    from waymark.storage.faults import translate

    return translate(exc)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:  # the reader left (`waymark list | head`), even mid-error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes stdout
        os.close(devnull)
        return 141  # 128 + SIGPIPE, what a shell reports for a command cut off by a pipe


def _main(argv: Sequence[str] | None) -> int:
    # Bytes that are not UTF-8 arrive as lone surrogates, which SQLite refuses: U+FFFD.
    argv = _flags_first([mend(a) for a in (sys.argv[1:] if argv is None else argv)])
    if argv and argv[0] in RENAMED:
        new = RENAMED[argv[0]]
        print(f"waymark: `{argv[0]}` is now `{new}`; the old name goes in a later release",
              file=sys.stderr)  # fmt: skip
        argv = [new, *argv[1:]]
    from waymark.cli import quick

    args: Any = quick.parse(argv)
    if args is None:  # not a plain command line: argparse parses it, help and errors too
        from waymark.cli import dispatch

        try:
            args = dispatch.parse(argv)
        except UsageError as exc:
            emit_error(exc, "--json" in argv)
            return 2
    handler: Callable[[Any, Context], Any] = args.handler
    ctx = Context(project_spec=args.project, as_json=args.json)
    try:
        code = int(handler(args, ctx) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the handling below
        return code
    except UsageError as exc:  # a combination of flags argparse cannot see
        emit_error(exc, ctx.as_json)
        return 2
    except WaymarkError as exc:
        emit_error(exc, ctx.as_json)
        return 1
    except KeyboardInterrupt:
        print("waymark: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        raise
    except Exception as exc:  # a bug: say so in one line, keep the traceback for debugging
        mapped = storage_error(exc)
        if mapped is not None:  # a damaged file, a full disk, a read-only home
            emit_error(mapped, ctx.as_json)
            return 1
        if os.environ.get("WAYMARK_DEBUG"):
            raise
        emit_error(
            InternalError(f"internal error: {exc!r} (set WAYMARK_DEBUG=1 for the traceback)"),
            ctx.as_json,
        )
        return 1
    finally:
        ctx.close()
