"""Reading and writing other programs' config files: exact bytes in, atomic writes out.

A file is read as text without newline translation (so CRLF and a missing final newline
survive), a UTF-8 BOM is kept aside and put back, and every write goes through a temporary
file in the same folder, fsync and `os.replace`, keeping the file's mode. A symlinked config
(a dotfiles repository) is written through to its target, so the link survives.
"""

from __future__ import annotations

import os
import stat

from waymark.base import files
from waymark.errors import ConfigMalformed, InstallRefused

BOM = "\ufeff"


class Snapshot:
    """One file as found: its text (None when missing), BOM and mode. A plain class: a
    dataclass would cost `waymark status`, which reads the install manifest, ~5 ms."""

    __slots__ = ("path", "text", "bom", "mode")

    def __init__(
        self, path: str, text: str | None, bom: bool = False, mode: int | None = None
    ) -> None:
        self.path, self.text, self.bom, self.mode = path, text, bom, mode

    @property
    def exists(self) -> bool:
        return self.text is not None

    @property
    def sha256(self) -> str | None:
        return None if self.text is None else sha256_text(self.text, self.bom)


def sha256_text(text: str, bom: bool = False) -> str:
    import hashlib  # OpenSSL: ~3 ms of `waymark status` (the install manifest)

    return hashlib.sha256(encode(text, bom)).hexdigest()


def encode(text: str, bom: bool = False) -> bytes:
    return ((BOM if bom else "") + text).encode("utf-8")


def read(path: str) -> Snapshot:
    try:
        with open(path, "rb") as f:
            raw = f.read()
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return Snapshot(path, None)
    except OSError as exc:
        raise InstallRefused(f"cannot read {display(path)}: {exc.strerror}", path=path) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigMalformed(
            f"{display(path)} is not UTF-8 (byte {exc.start}); fix the file, nothing was changed",
            path=path,
        ) from None
    bom = text.startswith(BOM)
    return Snapshot(path, text[1:] if bom else text, bom, mode)


def write_atomic(path: str, text: str, *, bom: bool = False, mode: int) -> None:
    """Replace `path` (or its symlink target) in one step; the old content or the new, never
    half of either."""
    files.write_atomic(path, encode(text, bom), mode=mode)


def remove(path: str) -> None:
    target = os.path.realpath(path)
    os.unlink(target)
    files.fsync_dir(os.path.dirname(target))


def make_dirs(folder: str) -> list[str]:
    """Create `folder` and its missing parents (0700); return those created, outermost first."""
    created = missing_dirs(folder)
    for d in created:
        os.mkdir(d, 0o700)
    return created


def missing_dirs(folder: str) -> list[str]:
    """The folders `make_dirs` would create, outermost first (for a dry run)."""
    missing: list[str] = []
    current = os.path.abspath(folder)
    while not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return list(reversed(missing))


def remove_empty_dirs(folders: list[str]) -> list[str]:
    """rmdir each folder we created, innermost first, if it is empty; return those removed."""
    removed = []
    for d in sorted(folders, key=len, reverse=True):
        try:
            os.rmdir(d)
            removed.append(d)
        except OSError:  # not empty (someone else uses it) or already gone
            pass
    return removed


def diff(path: str, before: str | None, after: str | None) -> str:
    """A unified diff for --dry-run (empty when nothing changes)."""
    if before == after:
        return ""
    a = (before or "").splitlines(keepends=True)
    b = (after or "").splitlines(keepends=True)
    name = display(path)
    import difflib  # ~1.5 ms: only a dry run shows diffs

    lines = difflib.unified_diff(
        a,
        b,
        fromfile="/dev/null" if before is None else f"{name} (now)",
        tofile="/dev/null" if after is None else f"{name} (after)",
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def display(path: str) -> str:
    """The path with the home folder shown as ~, for messages."""
    home = os.path.expanduser("~")
    if home and home != "~" and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    return path
