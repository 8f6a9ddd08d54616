"""The `waymark` command: a thin adapter from argv to the library.

Exit codes: 0 done, 1 refused (a WaymarkError, printed as one line or as
`{code, message, details}` with --json), 2 bad usage (code `usage`, the same two forms).

This module is what the `waymark` launcher imports, so it stays small: `--version` and the
overview (`waymark`, `waymark --help`) are answered here, every other command in
`waymark.cli.run`.
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


if __name__ == "__main__":
    sys.exit(main())
