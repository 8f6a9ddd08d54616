"""The team store's connection: PostgreSQL through psycopg 3, opened by a sync or a status
check (the CLI, the MCP server's background work), never by a hook.

The URL is libpq's, and so are its options (`sslmode`, `sslrootcert`, `connect_timeout`,
`service`, ...): psycopg passes them through. A password comes from where PostgreSQL looks
for one (`PGPASSFILE` or `~/.pgpass`, a service file, `PGPASSWORD`), never from Waymark's
files. Every failure to connect is `team_unreachable`, with libpq's reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from waymark.errors import SchemaTooNew, TeamUnreachable
from waymark.teamstore.migrations import MIGRATIONS, SCHEMA_VERSION

CONNECT_TIMEOUT_S = 5
LOCK_KEY = 0x57415953  # one advisory lock: two clients never migrate at once


def connect(conninfo: str, *, password: str | None = None, migrate: bool = True) -> Any:
    """A psycopg connection to the team store, its schema brought to this Waymark's head
    (with `migrate`); `password` only for the one connection `team connect` checks with."""
    psycopg = driver()

    extra: dict[str, Any] = {"application_name": "waymark"}
    if password is not None:
        extra["password"] = password
    if "connect_timeout" not in conninfo:
        extra["connect_timeout"] = CONNECT_TIMEOUT_S
    try:
        conn = psycopg.connect(conninfo, autocommit=True, **extra)
    except psycopg.Error as exc:
        raise TeamUnreachable(_reason(exc)) from None
    if migrate:
        try:
            apply_migrations(conn)
        except BaseException:
            conn.close()
            raise
    return conn


def driver() -> Any:
    """psycopg, or `team_unreachable` saying how to install it (the `team` extra)."""
    try:
        import psycopg
    except ImportError:
        raise TeamUnreachable(
            "the team store needs psycopg 3: pip install 'waymark-agent-memory[team]' (or "
            "'psycopg[binary]') into Waymark's environment"
        ) from None
    return psycopg


def _reason(exc: BaseException) -> str:
    from waymark.base.redact import scrub

    text = " ".join(str(exc).split()) or type(exc).__name__
    return "cannot reach the team store: " + scrub(text)[0]


def schema_version(conn: Any) -> int:
    """How many team schema steps the server has (0: a database Waymark never used)."""
    row = conn.execute("SELECT to_regclass('team_schema_migrations') IS NOT NULL").fetchone()
    if not row[0]:
        return 0
    return int(conn.execute("SELECT count(*) FROM team_schema_migrations").fetchone()[0])


def apply_migrations(conn: Any, *, stop_before: int | None = None) -> None:
    """Bring the server's schema to this Waymark's head (or the first `stop_before` steps);
    refuse a server whose schema is newer than this Waymark knows."""
    target = SCHEMA_VERSION if stop_before is None else stop_before
    found = schema_version(conn)
    if found > SCHEMA_VERSION:
        raise _too_new(conn, found)
    if found >= target:
        return  # nothing to do: a read-only member never needs to write here
    try:
        _migrate(conn, target)
    except driver().errors.InsufficientPrivilege as exc:
        raise TeamUnreachable(
            "this role may not create the team store's schema: connect once as a role that "
            f"may (its owner), then as this one ({_reason(exc)})"
        ) from None


def _version() -> str:
    """This Waymark's version, as installed (the seam imports no domain module)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("waymark-agent-memory")
    except PackageNotFoundError:
        return "unknown"


def _too_new(conn: Any, found: int) -> SchemaTooNew:
    wrote = _newest_writer(conn)
    which = f"Waymark {wrote} or later" if wrote else f"one with team schema {found}"
    return SchemaTooNew(
        f"the team store's schema has {found} steps; this Waymark ({_version()}) knows "
        f"{SCHEMA_VERSION}: install the Waymark the rest of the team runs ({which}) before "
        "writing",
        found=found,
        supported=SCHEMA_VERSION,
        needs=wrote,
    )


def _newest_writer(conn: Any) -> str | None:
    """The Waymark that took the server's schema to its newest step, where it said."""
    try:
        row = conn.execute(
            "SELECT waymark FROM team_schema_migrations WHERE waymark IS NOT NULL"
            " ORDER BY applied_at DESC, name DESC LIMIT 1"
        ).fetchone()
    except driver().Error:  # a schema from before steps named their Waymark
        return None
    return str(row[0]) if row else None


def _migrate(conn: Any, target: int) -> None:
    with write(conn):
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS team_schema_migrations ("
            " name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        # Which Waymark applied each step: what an older one is told to install.
        conn.execute("ALTER TABLE team_schema_migrations ADD COLUMN IF NOT EXISTS waymark TEXT")
        done = {r[0] for r in conn.execute("SELECT name FROM team_schema_migrations")}
        known = {name for name, _ in MIGRATIONS}
        if done - known:
            raise _too_new(conn, len(done))
        for name, sql in MIGRATIONS[:target]:
            if name not in done:
                conn.execute(sql)
                conn.execute(
                    "INSERT INTO team_schema_migrations (name, waymark) VALUES (%s, %s)",
                    (name, _version()),
                )


@contextmanager
def write(conn: Any) -> Iterator[Any]:
    """One transaction on the team store: committed, or rolled back on any error."""
    with conn.transaction():
        yield conn


def can_write(conn: Any) -> bool:
    """Whether this role may write the team's events (a read-only member may not)."""
    row = conn.execute("SELECT has_table_privilege('team_events', 'INSERT')").fetchone()
    return bool(row[0])


def server_version(conn: Any) -> str:
    return str(conn.execute("SHOW server_version").fetchone()[0])
