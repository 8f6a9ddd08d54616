"""`waymark diagnostics`: a support bundle someone can attach to a bug report.

Versions, the doctor's findings, what is registered with each client, the capture mode and
the store's shape in numbers. No memory content, no paths, no ids, no user or host names:
every string is scrubbed (paths -> <path>, ULIDs -> <id>, the home folder and user name ->
<home>/<user>) and the redactor runs last. Written owner-only (0600).
"""

from __future__ import annotations

import getpass
import importlib.metadata
import os
import platform
import re
import sys

from waymark import home
from waymark.base import clock, redact, version
from waymark.base.files import private_dir, write_new

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

_ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/][^\s\\/:;,'\"`()\[\]]+){2,}[\\/]?")
PACKAGES = ("apsw", "mcp", "pydantic", "fastembed", "onnxruntime", "sqlite-vec", "numpy")


def scrub(text: str) -> str:
    """`text` without paths, ids, the user's name or home folder, or secrets."""
    user = _user()
    text = text.replace(os.path.expanduser("~"), "<home>")
    text = _PATH.sub("<path>", text)
    text = _ULID.sub("<id>", text)
    if user and len(user) > 2:
        text = re.sub(rf"\b{re.escape(user)}\b", "<user>", text)
    return redact.scrub(text)[0]


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name on this system: nothing to scrub
        return ""


def _versions() -> dict[str, str | None]:
    from waymark.storage.connection import engine_version

    out: dict[str, str | None] = {
        "waymark": version.text(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": f"{platform.system()} {platform.release()} {platform.machine()}",
        "sqlite": engine_version(),
        "in_virtualenv": str(sys.prefix != sys.base_prefix).lower(),
    }
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def _store() -> dict[str, Any]:
    """The store's shape in numbers: schema, size, counts. Nothing a person wrote."""
    from waymark import settings
    from waymark.storage import connection as db
    from waymark.storage.tables import store_counts

    path = home.db_path()
    if not os.path.exists(path):
        return {"exists": False}
    conn = db.connect()
    try:
        return {
            "exists": True,
            "bytes": os.path.getsize(path),
            "schema_version": db.schema_version(conn),
            "read_only": db.read_only(conn),
            "counts": store_counts(conn),
            "settings": settings.all_values(conn),
        }
    finally:
        conn.close()


def bundle(client_checks: Any = None) -> dict[str, Any]:
    """The whole bundle as data, scrubbed."""
    from waymark.health import doctor

    try:
        store: dict[str, Any] = _store()
    except Exception as exc:  # the doctor's findings say more; the bundle still goes out
        store = {"error": type(exc).__name__, "message": str(exc)}
    findings = doctor.run_all(client_checks)
    data = {
        "waymark_diagnostics": 1,
        "created_at": clock.now(),
        "versions": _versions(),
        "store": store,
        "findings": [
            {"check": f["check"], "status": f["status"], "detail": f["detail"], "fix": f["fix"]}
            for f in findings
        ],
        "registration": {
            f["check"]: f["status"] for f in findings if f["check"].startswith(("claude", "codex"))
        },
    }
    return _scrubbed(data)


def _scrubbed(value: Any) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {k: _scrubbed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    return value


def write(data: dict[str, Any], out: str | None = None) -> str:
    """Write the bundle owner-only (never over an existing file); its path."""
    import json

    if out is None:
        folder = os.path.join(home.data_home(), "diagnostics")
        private_dir(folder)
        out = os.path.join(folder, f"waymark-diagnostics-{clock.compact()}.json")
    else:
        if os.path.lexists(out):
            from waymark.errors import Conflict

            raise Conflict(
                f"{out} exists already: the bundle never overwrites a file; give another --out",
                path=out,
            )
        private_dir(os.path.dirname(os.path.abspath(out)))
    write_new(out, json.dumps(data, indent=2, sort_keys=True) + "\n")
    return out
