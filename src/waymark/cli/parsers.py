"""argparse as Waymark uses it: usage errors as UsageError, the terminal's width asked once,
messages untranslated. Imported only where a command line is not a plain one (`cli.quick`),
for `--help`, and by the tests and docs that read every command."""

from __future__ import annotations

import argparse
import sys

from waymark.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn


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
