"""argparse's parser of every command: what `waymark.cli.run` falls back to when a command
line is not a plain one (`cli.quick`), `--help`, and what the tests and docs read."""

from __future__ import annotations

import argparse

from waymark.cli.parsers import Parser
from waymark.cli.table import COMMANDS, MODULE_OF, MODULES

TYPE_CHECKING = False  # typing costs every command ~3 ms
if TYPE_CHECKING:
    from typing import Any


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


def parse(argv: list[str]) -> argparse.Namespace:
    """`argv` (the command first) through argparse: its namespace, or UsageError; `--help`
    prints and exits (SystemExit), as argparse does."""
    return build_parser(argv[0] if argv and argv[0] in MODULE_OF else None).parse_args(argv)
