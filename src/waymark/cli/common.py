"""What every command shares: the lazily opened database and project, and output."""

from __future__ import annotations

import sys

from waymark.errors import InvalidArgument, NotFound, WaymarkError

# argparse is not imported here: a plain command line is parsed without it (`cli.quick`),
# and argparse's own pieces live in `cli.parsers`.
TYPE_CHECKING = False  # typing costs every command ~3 ms
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection


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
    shape = {} if getattr(commands, "quick", False) else {"formatter_class": _formatter()}
    parser = commands.add_parser(
        name, parents=[common], help=help, description=help,
        epilog=f"example:\n  {example}", **shape,
    )  # fmt: skip
    parser.set_defaults(handler=handler)
    return parser


def _formatter() -> type:
    from waymark.cli.parsers import Formatter

    return Formatter


def _bad(message: str) -> Exception:
    """argparse's error for a bad value (imported only when there is one)."""
    import argparse

    return argparse.ArgumentTypeError(message)


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
            raise _bad(f"{text!r} is not an integer") from None
        if not low <= value <= high:
            raise _bad(f"{value} is not from {low} to {high}")
        return value

    return parse


def positive(text: str) -> float:
    """An argparse type: a number above zero (`--days -5` is a usage error, not a window)."""
    try:
        value = float(text)
    except ValueError:
        raise _bad(f"{text!r} is not a number") from None
    if not value > 0:
        raise _bad(f"{text} is not above zero")
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
