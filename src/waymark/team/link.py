"""Which team store this machine syncs with: `waymark team connect`, `status`, `disconnect`.

The connection is kept in the data folder (`team.json`, owner-only) without its password:
libpq finds that where PostgreSQL always looks (`PGPASSFILE` or `~/.pgpass`, a service
file, `PGPASSWORD`). `WAYMARK_TEAM_URL` names a store for one environment instead, and wins.
Connecting checks the store for real: it is reachable, its schema is brought to this
Waymark's (or found newer, and refused), and whether this role may write is said.
"""

from __future__ import annotations

import json
import os
from typing import Any

from waymark import home
from waymark.errors import InvalidArgument, TeamNotConnected
from waymark.teamstore import connection as team_db

TEAM_FILE = "team.json"
ENV_URL = "WAYMARK_TEAM_URL"
# libpq options worth showing in `team status` (the rest are kept, just not listed).
SHOWN_OPTIONS = ("sslmode", "sslrootcert", "sslcert", "target_session_attrs", "service",
                 "connect_timeout", "options")  # fmt: skip


def split_password(url: str) -> tuple[str, str | None, dict[str, str]]:
    """(the conninfo without its password, the password or None, the parts to show) of a
    PostgreSQL URL or key=value conninfo; InvalidArgument when libpq cannot read it."""
    pgconninfo = team_db.driver().conninfo
    try:
        parts = pgconninfo.conninfo_to_dict(url.strip())
    except Exception as exc:
        raise InvalidArgument(f"not a PostgreSQL connection URL: {_said(exc)}") from None
    password = parts.pop("password", None)
    kept = {k: str(v) for k, v in parts.items() if v is not None and v != ""}
    if not kept:
        raise InvalidArgument("give a PostgreSQL URL: postgresql://USER@HOST:PORT/DATABASE")
    return pgconninfo.make_conninfo(**kept), (str(password) if password else None), kept


def _said(exc: BaseException) -> str:
    from waymark.base.redact import scrub

    return scrub(" ".join(str(exc).split()))[0]


def shown(parts: dict[str, str]) -> str:
    """The store as a URL a person reads: user, host, port, database; never a password."""
    user = f"{parts['user']}@" if parts.get("user") else ""
    host = parts.get("host", "")
    if host.startswith("/"):  # a socket directory is an option, not a host
        host = ""
    port = f":{parts['port']}" if parts.get("port") else ""
    database = parts.get("dbname", "")
    query = "&".join(f"{k}={parts[k]}" for k in SHOWN_OPTIONS if parts.get(k))
    socket = parts.get("host", "") if parts.get("host", "").startswith("/") else ""
    if socket:
        query = "&".join(filter(None, [f"host={socket}", query]))
    return f"postgresql://{user}{host}{port}/{database}" + (f"?{query}" if query else "")


def configured() -> tuple[str, str] | None:
    """(conninfo, where it came from) of the team store this process syncs with, or None."""
    url = os.environ.get(ENV_URL, "").strip()
    if url:
        return url, ENV_URL
    try:
        with open(_path(), encoding="utf-8") as f:
            return str(json.load(f)["conninfo"]), _path()
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _path() -> str:
    return os.path.join(home.data_home(), TEAM_FILE)


def connect(url: str) -> dict[str, Any]:
    """Check the store (reach it, bring its schema up, ask whether this role writes) and keep
    it, without its password, as this machine's team store."""
    from waymark.base.clock import now
    from waymark.base.files import write_atomic

    conninfo, password, parts = split_password(url)
    conn = team_db.connect(conninfo, password=password)
    try:
        facts = _facts(conn)
    finally:
        conn.close()
    write_atomic(
        os.path.join(home.ensure_home(), TEAM_FILE),
        json.dumps({"conninfo": conninfo, "connected_at": now()}, indent=1).encode(),
    )
    notes = []
    if password is not None:
        notes.append(_password_note(conninfo, parts))
    return {"store": shown(parts), **facts, "kept_in": _path(), "notes": [n for n in notes if n]}


def _password_note(conninfo: str, parts: dict[str, str]) -> str:
    """What to do so later connections find the password Waymark did not keep."""
    from waymark.errors import TeamUnreachable

    try:
        team_db.connect(conninfo, migrate=False).close()
        return "the password was not kept: PostgreSQL finds it by itself here"
    except TeamUnreachable:
        line = ":".join(
            [parts.get("host", "*"), parts.get("port", "5432"), parts.get("dbname", "*"),
             parts.get("user", "*"), "PASSWORD"]
        )  # fmt: skip
        return (
            "the password was not kept, and later connections need it: add the line "
            f"`{line}` to ~/.pgpass (chmod 600; or PGPASSFILE), or set PGPASSWORD"
        )


def _facts(conn: Any) -> dict[str, Any]:
    """The server, both schemas, and whether this machine's sync may write there: the role
    may, and the server's schema is not newer than this Waymark's (sync refuses then)."""
    schema = team_db.schema_version(conn)
    return {
        "server": team_db.server_version(conn),
        "schema": {"server": schema, "client": team_db.SCHEMA_VERSION},
        "writes": team_db.can_write(conn) and schema <= team_db.SCHEMA_VERSION,
    }


def status() -> dict[str, Any]:
    """The team store this machine syncs with and what it says now (reached or why not)."""
    from waymark.errors import TeamUnreachable

    found = configured()
    if found is None:
        return {"connected": False, "store": None}
    conninfo, source = found
    _, _, parts = split_password(conninfo)
    out: dict[str, Any] = {
        "connected": True,
        "store": shown(parts),
        "from": source,
        "options": {k: parts[k] for k in SHOWN_OPTIONS if parts.get(k)},
    }
    try:
        conn = team_db.connect(conninfo, migrate=False)
    except TeamUnreachable as exc:
        return out | {"reachable": False, "why": exc.message}
    try:
        return out | {"reachable": True, **_facts(conn)}
    finally:
        conn.close()


def disconnect() -> dict[str, Any]:
    """Forget the team store (the local memories stay, all of them)."""
    found = configured()
    if found is None:
        raise TeamNotConnected("no team store is connected here")
    conninfo, source = found
    if source == ENV_URL:
        raise InvalidArgument(f"the team store comes from {ENV_URL}: unset it to disconnect")
    os.remove(_path())
    return {"disconnected": shown(split_password(conninfo)[2])}
