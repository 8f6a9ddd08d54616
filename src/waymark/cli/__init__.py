"""The `waymark` command: a thin adapter from argv to the library.

Exit codes: 0 done, 1 refused (a WaymarkError, printed as one line or as
`{code, message, details}` with --json), 2 bad usage (code `usage`, the same two forms).

This module is what the `waymark` launcher imports, so it stays small: `--version` and the
overview (`waymark`, `waymark --help`) are answered here, every other command in
`waymark.cli.run`. The launchers (pip's script, install.sh's, `python -m waymark`) call
`entry`, which ends the process without tearing the interpreter down.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:
        from waymark.base import version

        print(f"waymark {version.text()}")
        return 0
    if args in ([], ["--help"], ["-h"]):
        from waymark.cli import overview

        sys.stdout.write(overview.text())
        return 0
    from waymark.cli import run

    return run.main(args)


_status = [0]  # what `entry`'s process exits with


def entry() -> None:
    """The `waymark` executable: `main()`, then the process ends as Python ends one (other
    threads waited for, every exit handler run, output flushed) less its last step, freeing
    each module and object one by one, which a process about to end has no use for: ~3 ms
    of a ~30 ms `waymark status` (bench/commands.py)."""
    import atexit

    atexit.register(_leave)  # the first registered runs last, after every other handler
    try:
        code: object = main()
    except SystemExit as exc:  # argparse's --help and usage errors, as sys.exit reports them
        code = exc.code
        if code is not None and not isinstance(code, int):
            print(code, file=sys.stderr)
            code = 1
    _status[0] = int(code or 0)  # type: ignore[call-overload]
    sys.exit(_status[0])


def _leave() -> None:
    import os

    status = _status[0]
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # as Python itself reports output it could not write
            status = status or 120
    os._exit(status)


if __name__ == "__main__":
    entry()
