"""Marker files in the data folder: what a hook remembers without a database write.

One file per key in a folder of the data home, owner-only, its modification time the moment
it was marked. `mark` says whether the key was already marked within a window; old markers
are swept now and then. The hooks use it to run each delivered event once (`hookruns/`) and
to let a guarded call through the second time the user asks (`guard/`).
"""

from __future__ import annotations

import os
import time

from waymark import home


def mark(folder_name: str, key: str, within_s: float, *, sweep_each: bool = False) -> bool:
    """True when `key` was already marked in the data folder's `folder_name` in the last
    `within_s` seconds; otherwise mark it now and return False. An older marker counts as
    none and is renewed. Old markers are swept at each new one with `sweep_each` (a folder
    seldom written), else now and then. OSError when the folder cannot be written (the
    caller decides)."""
    folder = os.path.join(home.data_home(), folder_name)
    path = os.path.join(folder, key)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        if time.time() - os.stat(path).st_mtime < within_s:
            return True
        os.utime(path)
        return False
    if sweep_each or key.endswith("0"):  # a key is a hash: one in 16
        sweep(folder, within_s)
    return False


def sweep(folder: str, older_than_s: float) -> None:
    """Remove the markers of `folder` older than `older_than_s` seconds; never raises."""
    cutoff = time.time() - older_than_s
    try:
        for entry in os.scandir(folder):
            try:
                if entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
            except OSError:
                continue
    except OSError:
        pass
