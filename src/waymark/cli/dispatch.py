"""argv to the library through argparse: every command but `--version` and the overview
(`waymark`, `waymark --help`), which `waymark.cli.main` answers without it."""

from __future__ import annotations

import argparse
import os
import sys

from waymark.base.text import mend
from waymark.cli.common import Context, Parser, emit_error
from waymark.cli.table import COMMANDS, MODULES
from waymark.errors import InternalError, UsageError, WaymarkError

TYPE_CHECKING = False  # typing costs every command ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

MODULE_OF = {name: module for name, module, _ in COMMANDS}
# Old names kept for a release, hidden from the overview: `waymark forget` (a retention sweep)
# was renamed so it no longer shares a name with the MCP tool that archives one memory.
RENAMED = {"forget": "sweep"}


class VersionAction(argparse.Action):
    """`waymark --version`: the version, and the commit where Waymark runs from a checkout
    (asked of git only when --version is given)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        from waymark.base import version

        print(f"waymark {version.text()}")
        parser.exit()  # `waymark --json --version`: the plain `--version` never gets here


class TopParser(Parser):
    """The parser of `waymark` itself: its help is the grouped overview."""

    def format_help(self) -> str:
        from waymark.cli import overview

        return overview.text()


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


def build_parser(command: str | None = "") -> argparse.ArgumentParser:
    """The parser of `command` alone (its module imported, no other); of every command with
    `command` "" (what the tests and docs read); for anything else, the list of commands
    from the table, for `waymark --help` and a mistyped name."""
    import importlib

    common = Parser(add_help=False)
    common.add_argument(
        "--project",
        metavar="PATH_OR_NAME",
        help="project directory, or the name of a named project (default: the current directory)",
    )
    common.add_argument("--json", action="store_true", help="machine-readable output")
    parser = TopParser(
        prog="waymark",
        description="Memory for coding agents: the next session starts where the last one stopped.",
        epilog="Run `waymark COMMAND --help` for each command's flags and an example.",
    )
    parser.add_argument("--version", action=VersionAction, nargs=0, help="show the version")
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=Parser
    )
    if command in MODULE_OF or command == "":
        for module in [MODULE_OF[command]] if command else MODULES:
            importlib.import_module(f"waymark.cli.{module}").register(commands, common)
    else:
        for name, _, said in COMMANDS:
            commands.add_parser(name, help=said, add_help=False)
    return parser


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
    parser = build_parser(argv[0] if argv and argv[0] in MODULE_OF else None)
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        emit_error(exc, "--json" in argv)
        return 2
    handler: Callable[[argparse.Namespace, Context], Any] = args.handler
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
