"""The install manifest: every file Waymark edited, how it was, how we left it, what is ours.

`<data home>/install-manifest.json`, owner-only:

    {"format": 1, "updated_at": "...", "waymark": "0.1.0", "python": "/abs/python",
     "files": [{"path", "client", "kind", "existed", "blank_text", "mode",
                "sha256_before", "sha256_after", "created_dirs", "owned"}]}

`sha256_before`, `existed` and `blank_text` describe the file before Waymark first touched
it and survive re-installs; `sha256_after` is what our last write left; `owned` lists the
entries we added (per kind: hook commands and the containers we created, the MCP server and
the exact text of anything it replaced, the TOML blocks verbatim).
"""

from __future__ import annotations

import os

from waymark import __version__, errors, home
from waymark.base import clock
from waymark.base import jsonlite as json  # dumps with indent hands itself to json

from . import files

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

NAME = "install-manifest.json"
FORMAT = 1


def path() -> str:
    return os.path.join(home.data_home(), NAME)


def load() -> dict[str, Any]:
    snap = files.read(path())
    if snap.text is None:
        return {"format": FORMAT, "files": []}
    try:
        data = json.loads(snap.text)
    except ValueError as exc:
        raise errors.ConfigMalformed(
            f"{path()} is not valid JSON ({exc}); Waymark cannot tell what it installed. "
            "Move it aside and run `waymark install` again",
            path=path(),
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise errors.InstallRefused(
            f"{path()} was written by another Waymark version (format {data.get('format')!r});"
            " upgrade Waymark",
            path=path(),
        )
    return data


def record(manifest: dict[str, Any], file_path: str) -> dict[str, Any] | None:
    for entry in manifest["files"]:
        if entry["path"] == file_path:
            return entry
    return None


def put(manifest: dict[str, Any], entry: dict[str, Any]) -> None:
    manifest["files"] = [e for e in manifest["files"] if e["path"] != entry["path"]] + [entry]


def set_mode(manifest: dict[str, Any], client: str, mode: str | None) -> None:
    """What `install --only` chose for `client` (hooks, mcp, both); None forgets it."""
    modes = dict(manifest.get("modes") or {})
    if mode is None:
        modes.pop(client, None)
    else:
        modes[client] = mode
    manifest["modes"] = modes


def mode_of(client: str) -> str | None:
    """The install mode of `client`, or None when `waymark install` never wrote it."""
    try:
        state = load()
    except errors.WaymarkError:
        return None
    if not any(f["client"] == client for f in state["files"]):
        return None
    return str((state.get("modes") or {}).get(client, "both"))


def drop(manifest: dict[str, Any], file_path: str) -> None:
    manifest["files"] = [e for e in manifest["files"] if e["path"] != file_path]


def save(manifest: dict[str, Any], python: str | None = None) -> None:
    target = path()
    if not manifest["files"]:
        if os.path.exists(target):
            files.remove(target)
        return
    home.ensure_home()
    manifest["updated_at"] = clock.now()
    manifest["waymark"] = __version__
    if python:
        manifest["python"] = python
    text = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
    files.write_atomic(target, text, mode=0o600)
