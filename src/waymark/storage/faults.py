"""What can go wrong with the file itself, named: damage, a full disk, a read-only store.

`translate` turns SQLite's and the OS's failures into Waymark's errors with stable codes
(`database_corrupt`, `disk_full`, `read_only`). Damage is remembered in a marker file beside
the database, so every write stops even where a later write would not touch the damaged
pages; `doctor`'s full check or a restore removes it.
"""

from __future__ import annotations

import os

import apsw

from waymark import home
from waymark.base.clock import now
from waymark.errors import DatabaseCorrupt, DiskFull, ReadOnlyStore, WaymarkError, from_os_error

opened_full: dict[str, bool] = {}  # databases opened read-only because the disk was full


DAMAGED_SUFFIX = ".damaged"


def damaged_marker(path: str) -> str:
    """The file that says SQLite once found damage in the database at `path`; while it
    exists every write is refused. `doctor` removes it when the full check passes."""
    return path + DAMAGED_SUFFIX


def translate(exc: BaseException, path: str | None = None) -> WaymarkError | None:
    """Waymark's error for a storage failure (a damaged file, a full disk, a read-only
    store), or None when `exc` is not one. Damage is remembered beside the file, so writes
    stop even where a later write would not touch the damaged pages."""
    if isinstance(exc, WaymarkError):
        return exc
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        where = path or home.db_path()
        _mark_damaged(where, str(exc))
        return corrupt_error(where, str(exc))
    where = path or home.db_path()
    if isinstance(exc, apsw.FullError) or (
        isinstance(exc, apsw.ReadOnlyError) and opened_full.get(where)
    ):
        return full_error(where)
    if isinstance(exc, (apsw.IOError, apsw.CantOpenError)) and disk_full(where):
        return full_error(where)
    if isinstance(exc, apsw.ReadOnlyError):
        return ReadOnlyStore(
            f"{path or home.db_path()} is read-only here: reading works, writing does not. "
            "Run the command where the data folder is writable",
            path=path or home.db_path(),
        )
    if isinstance(exc, OSError):
        return from_os_error(exc, path or "the data folder")
    return None


def full_error(path: str) -> DiskFull:
    return DiskFull(
        f"the disk holding {path} is full: nothing was written (any change was rolled back). "
        "Free some space and run the command again",
        path=path,
    )


FULL_BELOW_BYTES = 256 * 1024  # less room than this: SQLite cannot grow a page or its log


def disk_full(path: str) -> bool:
    """True when the file system holding `path` has (next to) no room left for its user."""
    try:
        st = os.statvfs(os.path.dirname(os.path.abspath(path)))
    except (OSError, AttributeError):  # no statvfs on Windows: the error itself must say
        return False
    return st.f_bavail * st.f_frsize < FULL_BELOW_BYTES


def corrupt_error(path: str, cause: str) -> DatabaseCorrupt:
    backups = os.path.join(os.path.dirname(path), "backups")
    return DatabaseCorrupt(
        f"{path} is damaged ({cause}); writes are stopped so nothing more lands in it. "
        f"Restore the newest backup: `waymark restore FILE` (backups are in {backups})",
        path=path,
        cause=cause,
    )


def _mark_damaged(path: str, cause: str) -> None:
    try:
        fd = os.open(damaged_marker(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, f"{cause} (found {now()})\n".encode())
        finally:
            os.close(fd)
    except OSError:
        pass  # a read-only or full disk: the error itself still says what happened


def clear_damaged(path: str) -> bool:
    """Forget earlier damage (after a full check passed or a restore); True if there was."""
    try:
        os.unlink(damaged_marker(path))
    except OSError:
        return False
    return True


def damage_noted(path: str) -> str | None:
    """What the damage marker says, or None when no damage was found."""
    try:
        with open(damaged_marker(path), encoding="utf-8", errors="replace") as f:
            return f.read().strip() or "damage found earlier"
    except FileNotFoundError:
        return None
    except OSError:
        return "damage found earlier"
