"""What every command shares: the lazily opened database and project, and output."""

from __future__ import annotations

import argparse
import sys

from waymark.errors import InvalidArgument, NotFound, UsageError, WaymarkError

TYPE_CHECKING = False  # typing costs every command ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection


# argparse's messages are never translated (Python ships no catalogue for them), but asking
# gettext imports `locale` on every command (~1.5 ms): the messages as written.
argparse._ = str  # type: ignore[attr-defined]
argparse.ngettext = lambda one, many, n: one if n == 1 else many  # type: ignore[attr-defined]


class Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter, told the terminal's width: its own asks `shutil` (~2 ms to import,
    on every command, since argparse makes a formatter for each argument it adds)."""

    def __init__(self, prog: str, **options: Any) -> None:
        options.setdefault("width", _columns() - 2)  # what HelpFormatter takes off itself
        super().__init__(prog, **options)


_COLUMNS: list[int] = []  # asked once a process: argparse makes a formatter per argument


def _columns() -> int:
    """`shutil.get_terminal_size().columns`: $COLUMNS, else the terminal's, else 80."""
    if not _COLUMNS:
        _COLUMNS.append(_terminal_columns())
    return _COLUMNS[0]


def _terminal_columns() -> int:
    import os

    try:
        return max(int(os.environ["COLUMNS"]), 1)
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


class Parser(argparse.ArgumentParser):
    """argparse, whose usage errors become UsageError: printed like every other error (as
    JSON under --json) with exit code 2."""

    def __init__(self, *args: Any, **options: Any) -> None:
        options.setdefault("formatter_class", Formatter)
        super().__init__(*args, **options)

    def error(self, message: str) -> NoReturn:
        raise UsageError(
            f"{message}{_did_you_mean(message)} (see `{self.prog} --help`)",
            usage=self.format_usage(),
        )


def _did_you_mean(message: str) -> str:
    """`; did you mean status?` after argparse's "invalid choice: 'stauts' (choose from ...)"."""
    import difflib
    import re

    found = re.match(r"argument [^:]+: invalid choice: '([^']*)' \(choose from (.*)\)$", message)
    if not found:
        return ""
    choices = re.findall(r"'([^']*)'", found.group(2))
    near = difflib.get_close_matches(found.group(1), choices, n=1, cutoff=0.6)
    return f"; did you mean {near[0]}?" if near else ""


class Context:
    """The database and project of one command, opened only when a command needs them."""

    def __init__(self, project_spec: str | None, as_json: bool) -> None:
        self.project_spec = project_spec
        self.as_json = as_json
        self._conn: Connection | None = None

    @property
    def conn(self) -> Connection:
        if self._conn is None:
            # imported here, as the project's resolver below: a command that opens no
            # store (`config`, `install --dry-run`, a usage error) never pays for apsw
            from waymark.storage import connection as db

            self._conn = db.connect()
        return self._conn

    def project(self, *, create: bool = True) -> Project:
        """This command's project. Reads pass create=False: a directory nobody bound and a
        mistyped name are NotFound, never a new empty project."""
        from waymark.projects.resolve import resolve

        return resolve(self.conn, self.project_spec, create=create, bind=create)

    def read_project(self) -> Project | None:
        """The project a read looks at; None where the working directory is no project yet
        (nothing is recorded there, so a read finds nothing). A named --project that does
        not exist is an error."""
        try:
            return self.project(create=False)
        except NotFound:
            if self.project_spec is not None:
                raise
            return None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def add_command(
    commands: Any,
    name: str,
    common: argparse.ArgumentParser,
    *,
    help: str,
    example: str,
    handler: Any,
) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        name,
        parents=[common],
        help=help,
        description=help,
        epilog=f"example:\n  {example}",
        formatter_class=Formatter,
    )
    parser.set_defaults(handler=handler)
    return parser


def emit(data: Any, as_json: bool, text: str) -> None:
    if as_json:
        import json  # only under --json: plain output skips its ~2 ms

        print(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    elif text:
        print(text)


def bounded(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer from `low` to `high` (anything else is a usage error)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is not from {low} to {high}")
        return value

    return parse


def positive(text: str) -> float:
    """An argparse type: a number above zero (`--days -5` is a usage error, not a window)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} is not above zero")
    return value


def emit_error(exc: WaymarkError, as_json: bool) -> None:
    if as_json:
        import json

        print(json.dumps(exc.to_dict(), ensure_ascii=False, default=str), flush=True)
    else:
        print(f"waymark: error: {exc.message} [{exc.code}]", file=sys.stderr)


def read_content(value: str | None) -> str | None:
    """The --content value, or stdin when it is piped and --content is absent or '-'."""
    if value not in (None, "-"):
        return value
    if sys.stdin is None or sys.stdin.isatty():
        return None
    return sys.stdin.read() or None


def open_input(path: str) -> Any:
    """The text file a person named, or stdin for "-"; a clear error when it cannot be read.
    Bytes that are not UTF-8 are kept as surrogates (and mended where text is stored)."""
    if path == "-":
        return sys.stdin
    try:
        return open(path, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115
    except OSError as exc:
        raise InvalidArgument(f"cannot read {path}: {exc.strerror or exc}") from None


def progress_bar(total: int, verb: str) -> Any:
    """A one-line progress bar on stderr (`verb [###---] done/total`): drawn again only
    when the count moves, ended with a newline once, at the total."""
    shown = [-1]

    def show(done: int) -> None:
        if done == shown[0]:
            return
        shown[0] = done
        if total:
            filled = int(30 * min(done, total) / total)
            bar = "#" * filled + "-" * (30 - filled)
            sys.stderr.write(f"\r{verb} [{bar}] {done}/{total}")
        else:
            sys.stderr.write(f"\r{verb} {done}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show
