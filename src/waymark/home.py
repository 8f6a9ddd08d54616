"""Where Waymark keeps its data: one folder, one SQLite file.

`WAYMARK_HOME` wins; otherwise the platform's user data dir, following platformdirs' rules
without importing it (hooks pay for every import): XDG on Linux, Application Support on
macOS, LOCALAPPDATA on Windows.
"""

from __future__ import annotations

import os
import sys

APP = "waymark"
DB_NAME = "waymark.db"


def platform_data_dir() -> str:
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser(r"~\AppData\Local")
        return os.path.join(base, APP)
    if sys.platform == "darwin":
        return os.path.expanduser(os.path.join("~/Library/Application Support", APP))
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    base = xdg if xdg else os.path.expanduser("~/.local/share")
    return os.path.join(base, APP)


def data_home() -> str:
    """The data folder (not created)."""
    explicit = os.environ.get("WAYMARK_HOME", "").strip()
    return os.path.abspath(os.path.expanduser(explicit)) if explicit else platform_data_dir()


def ensure_home() -> str:
    """Create the data folder owner-only (0700 where the OS has modes) and return it;
    DataHomeUnusable, naming the folder and why, when it cannot be."""
    home = data_home()
    if os.path.isdir(home):  # an existing folder keeps its mode (and may be read-only)
        return home
    from waymark.errors import DataHomeUnusable

    where = "WAYMARK_HOME" if os.environ.get("WAYMARK_HOME", "").strip() else "the data folder"
    try:
        # Several processes may create it at once: one makes it, the others find it made.
        os.makedirs(home, mode=0o700, exist_ok=True)
        if os.name == "posix":
            os.chmod(home, 0o700)
    except FileExistsError:  # what is there is not a folder
        raise DataHomeUnusable(
            f"{where} {home} is a file, not a folder; point WAYMARK_HOME at a folder or move "
            "the file aside",
            path=home,
        ) from None
    except OSError as exc:
        raise DataHomeUnusable(
            f"cannot create {where} {home}: {exc.strerror or exc}; point WAYMARK_HOME at a "
            "folder you can write",
            path=home,
        ) from exc
    return home


def db_path() -> str:
    return os.path.join(data_home(), DB_NAME)


def secret(name: str, *, renew: bool = False) -> str:
    """The secret in file `name` of the data home, made on first use (owner-only); `renew`
    replaces it with a new one (whatever the old one opened stops opening it)."""
    path = os.path.join(ensure_home(), name)
    try:
        with open(path, encoding="utf-8") as handle:
            token = handle.read().strip()
        if len(token) >= 32 and not renew:
            return token
    except FileNotFoundError:
        pass
    import secrets

    token = secrets.token_urlsafe(32)
    temporary = f"{path}.{os.getpid()}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token)
    os.replace(temporary, path)
    return token
