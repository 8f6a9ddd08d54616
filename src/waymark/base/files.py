"""Private files, written whole: owner-only folders and files, atomic replacement, names
published without ever replacing a file, and a folder's entries made durable; and the
clients' JSON-lines transcripts, read a line at a time.

Every file Waymark writes goes through here, so each of these is done one way.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


def private_dir(path: str) -> None:
    """Create `path` owner-only (0700); an existing folder keeps its mode."""
    if not os.path.isdir(path):
        os.makedirs(path, mode=0o700, exist_ok=True)
        if os.name == "posix":
            os.chmod(path, 0o700)


def new_temp(folder: str, prefix: str) -> str:
    """A new empty owner-only file in `folder`, created exclusively."""
    while True:
        path = os.path.join(folder, f"{prefix}{os.getpid()}-{os.urandom(4).hex()}.tmp")
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            return path
        except FileExistsError:
            continue


def write_atomic(path: str, data: bytes, *, mode: int = 0o600) -> None:
    """Replace `path` (or its symlink target) in one step: readers see the old content or
    the new, never half of either. The file gets `mode`."""
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    tmp = new_temp(folder, "." + os.path.basename(target) + ".")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        remove_quietly(tmp)
        raise
    fsync_dir(folder)


def write_new(path: str, text: str, *, encoding: str = "utf-8") -> None:
    """Create `path` owner-only with `text`; FileExistsError when it exists."""
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    with open(fd, "w", encoding=encoding, newline="\n") as f:
        f.write(text)


def publish(tmp: str, final: str) -> None:
    """Give `tmp` the name `final`, never replacing a file; FileExistsError on a clash."""
    try:
        os.link(tmp, final)
    except FileExistsError:
        raise
    except OSError:  # no hard links here: reserve the name exclusively, then move onto it
        os.close(os.open(final, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        os.replace(tmp, final)
        return
    os.unlink(tmp)


def sha256_of(path: str) -> tuple[str, int]:
    """The file's SHA-256 (hex) and size."""
    import hashlib

    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def fsync_dir(path: str) -> None:
    """Make a folder's new entries durable (POSIX; Windows renames are durable on their own)."""
    if os.name != "posix":
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_quietly(*paths: str) -> None:
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:  # not contextlib.suppress: its import costs a hook ~4 ms
            continue


def tail_bytes(path: str, size: int) -> bytes | None:
    """The last `size` bytes of a file (all of a smaller one), or None when it cannot be
    read."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - size))
            return f.read()
    except OSError:
        return None


def stat_key(path: str) -> str | None:
    """`size:mtime_ns` of a file, what says it may have changed since; None when it is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{st.st_size}:{st.st_mtime_ns}"


def json_lines(path: str, max_line: int) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, JSON object) of a JSON-lines file (a client's transcript), a line at a
    time; a line over `max_line` bytes is skipped unread, one that is no object skipped."""
    import json

    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            if len(raw) > max_line:
                continue
            try:
                item = json.loads(raw)
            except ValueError:
                continue
            if isinstance(item, dict):
                yield n, item
