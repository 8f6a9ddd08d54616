"""Which files of a repository the map records, found without following anything out of it.

Left out, and counted by reason: symbolic links, nested repositories (a directory holding its
own `.git`), Waymark's own data folder (its database, backups and environment), any virtual
environment (a directory holding `pyvenv.cfg`), the capture exclusions of `.waymark.toml`
(`[capture] ignore_paths`, whose default leaves out `.git`, `node_modules`, `build`, virtual
environments ...), files over MAX_BYTES or MAX_LINES (generated or vendored), and what
cannot be read.
"""

from __future__ import annotations

import os

from waymark import home
from waymark.projects.ignore import Rules, path_ignored

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_BYTES = 1024 * 1024
MAX_LINES = 20_000

# The languages the map parses (Mnemo's ten), by file extension; anything else is recorded
# by path and digest only.
LANGUAGES = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hh": "cpp", ".hpp": "cpp", ".hxx": "cpp",
    ".cs": "csharp", ".java": "java", ".php": "php",
}  # fmt: skip


def language(path: str) -> str | None:
    return LANGUAGES.get(os.path.splitext(path)[1].lower())


def files(root: str, rules: Rules, skipped: dict[str, int]) -> Iterator[tuple[str, os.stat_result]]:
    """(project-relative POSIX path, stat) of every file the map records, in path order;
    `skipped` counts what was left out, by reason."""

    def skip(why: str) -> None:
        skipped[why] = skipped.get(why, 0) + 1

    data = _inside(root, home.data_home())

    def walk(directory: str, rel: str) -> Iterator[tuple[str, os.stat_result]]:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            skip("unreadable")
            return
        for entry in entries:
            path = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_symlink():
                skip("symlink")
                continue
            if path_ignored(path, rules):
                skip("excluded")
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if os.path.lexists(os.path.join(entry.path, ".git")):
                        skip("nested repository")
                        continue
                    if path == data:
                        skip("Waymark's data folder")
                        continue
                    if os.path.lexists(os.path.join(entry.path, "pyvenv.cfg")):
                        skip("virtual environment")
                        continue
                    yield from walk(entry.path, path)
                elif entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    if st.st_size > MAX_BYTES:
                        skip("larger than 1 MiB")
                        continue
                    yield path, st
            except OSError:
                skip("unreadable")

    yield from walk(root, "")


def _inside(root: str, folder: str) -> str | None:
    """`folder` as a path relative to `root` (POSIX), when it lies below it."""
    real_root, real = os.path.realpath(root), os.path.realpath(folder)
    if not real.startswith(real_root.rstrip(os.sep) + os.sep):
        return None
    return os.path.relpath(real, real_root).replace(os.sep, "/")
