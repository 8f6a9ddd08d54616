"""The one place that opens Waymark's database.

apsw everywhere: it bundles a modern SQLite with FTS5 and extension loading on every platform.
`connect()` sets WAL, the busy timeout and foreign keys, and applies pending migrations;
`write()` starts every write transaction with BEGIN IMMEDIATE so concurrent writers queue on
the busy timeout instead of failing half-way.
"""

from __future__ import annotations

import os
import time

import apsw

from waymark import home
from waymark.base.clock import now
from waymark.errors import (
    DatabaseUnreadable,
    QueryTimeout,
    ReadOnlyStore,
    SchemaTooNew,
    WaymarkError,
)
from waymark.storage.faults import (
    DAMAGED_SUFFIX,
    corrupt_error,
    damage_noted,
    disk_full,
    full_error,
    opened_full,
    translate,
)

TYPE_CHECKING = False  # importing typing costs a hook ~2 ms
if TYPE_CHECKING:
    from typing import Any

BUSY_TIMEOUT_MS = 10_000
# The schema this Waymark writes: len(migrations.MIGRATIONS), which a test checks. A constant
# here so that opening an up-to-date file (every hook) never loads the migrations' SQL.
SCHEMA_VERSION = 53
# A new file's page size. A vector row (1,536 bytes of float32 and its keys) fits twice in a
# 4 KB page, leaving 400 bytes a record unused; ten fill a 16 KB page. `compact` moves an
# older file over. Measured: 3,604 -> 3,095 bytes a record with its vector at 50,000.
PAGE_SIZE = 16384


_new_files: dict[str, bool] = {}  # files this process created (empty until the schema lands)
Connection = apsw.Connection  # what every seam function takes; the library names no driver
Error = apsw.Error
Corrupt = apsw.CorruptError


def connect(
    path: str | None = None,
    *,
    migrate: bool = True,
    busy_ms: int = BUSY_TIMEOUT_MS,
    checkpoint_on_close: bool = True,
) -> apsw.Connection:
    """Open (creating if needed) the database at `path`, default the data home's file.

    Hooks pass a short `busy_ms` (a locked database must not hold up the client) and
    `checkpoint_on_close=False`: the last connection to close otherwise copies the whole
    write-ahead log into the file, about 2 ms of a hook's write. The log stays (with its -shm,
    which is what lets a read-only home still read it); SQLite checkpoints it whenever it
    passes 1,000 pages, and the next CLI command or MCP server to close does too.
    """
    if path is None:
        home.ensure_home()
        path = home.db_path()
    if _empty_and_old(path):
        # An empty file where a database was is damage (a disk that filled, a truncation),
        # never a fresh start: a new store would hide every memory that was there.
        raise DatabaseUnreadable(
            f"{path} is empty (0 bytes): it is not a Waymark database. Restore a backup "
            "(`waymark restore`) or move the file aside to start a new store",
            path=path,
        )
    if not _writable_folder(path):
        return _connect_read_only(path)
    _create_owner_only(path)
    try:
        conn = apsw.Connection(path)
        conn.set_busy_timeout(busy_ms)
        conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # a new file's; an old one keeps its
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
        # Erased payloads are overwritten on disk, not just unlinked from the b-tree.
        conn.execute("PRAGMA secure_delete = ON")
        if not checkpoint_on_close:
            conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
        if migrate:
            created = schema_version(conn) == 0
            apply_migrations(conn, path)
            if created and schema_version(conn) > 0:
                # A new store's whole schema went through the log: move it into the file
                # and empty the log now, not at some later checkpoint (a hook's connection
                # skips its own): a fresh store is its file alone.
                try:  # noqa: SIM105 - contextlib would cost every hook its import
                    checkpoint_wal(conn)
                except apsw.BusyError:  # another process reads it already: its log, later
                    pass
    except apsw.ReadOnlyError:
        return _connect_read_only(path)
    except apsw.CorruptError as exc:  # not SQLite at all is unreadable, below
        raise damaged(exc, path) from exc
    except apsw.Error as exc:
        if isinstance(exc, apsw.FullError) or disk_full(path):
            # SQLite cannot even make its shared-memory file: read what is there, and refuse
            # every write as `disk_full` until there is room again.
            opened_full[path] = True
            try:
                return _connect_read_only(path)
            except WaymarkError:
                raise full_error(path) from exc
        raise DatabaseUnreadable(
            f"cannot open {path}: {exc}. The file was left untouched; "
            "restore a backup (`waymark restore`) or move it aside to start fresh",
            path=path,
        ) from exc
    return conn


def damaged(exc: apsw.Error, path: str) -> WaymarkError:
    """`database_corrupt` for damage SQLite found (noted beside the file)."""
    return translate(exc, path) or corrupt_error(path, str(exc))


def _writable_folder(path: str) -> bool:
    """False where SQLite could not create its -wal and -shm files beside the database (a
    read-only home, as sandboxed agents run): such a store is opened for reading only."""
    folder = os.path.dirname(os.path.abspath(path))
    return not os.path.isdir(folder) or os.access(folder, os.W_OK)


def _connect_read_only(path: str) -> apsw.Connection:
    """The database opened for reading only. Every write on it is refused as `read_only`.

    SQLite reads a WAL database in a folder it cannot write only as `immutable`, which
    ignores the write-ahead log: that is exact when the log is empty (a clean close), so a
    log with pages in it is refused rather than read stale."""
    if not os.path.exists(path):
        raise ReadOnlyStore(
            f"{path} does not exist and its folder cannot be written: nothing to read yet, "
            "and no store can be created there",
            path=path,
        )
    wal = path + "-wal"
    pending = os.path.exists(wal) and os.path.getsize(wal) > 0
    flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    uri = "file:" + _uri_path(path) + "?mode=ro"
    try:
        try:
            conn = apsw.Connection(uri, flags=flags)
            conn.execute("PRAGMA user_version").fetchall()
        except (apsw.CantOpenError, apsw.IOError):  # no -shm can be made or mapped here
            if pending:
                raise ReadOnlyStore(
                    f"{path} cannot be read: its folder is read-only and its write-ahead log "
                    "holds changes not yet in the file. Open it once where the folder is "
                    "writable",
                    path=path,
                ) from None
            conn = apsw.Connection(uri + "&immutable=1", flags=flags)
        conn.execute("PRAGMA query_only = ON")
        version = schema_version(conn)
    except apsw.CorruptError as exc:  # not SQLite at all is unreadable, below
        raise damaged(exc, path) from exc
    except apsw.Error as exc:
        raise DatabaseUnreadable(f"cannot open {path} for reading: {exc}", path=path) from exc
    if version > SCHEMA_VERSION:
        raise _too_new(path, version)
    if version < SCHEMA_VERSION:
        raise ReadOnlyStore(
            f"{path} needs a schema upgrade ({version} -> {SCHEMA_VERSION}), which needs "
            "write access to its folder; open it once where the folder is writable",
            path=path,
        )
    return conn


def _uri_path(path: str) -> str:
    from urllib.parse import quote  # only a read-only store pays

    return quote(os.path.abspath(path).replace(os.sep, "/"))


def read_only(conn: apsw.Connection) -> bool:
    """True when `conn` can only read (a read-only home or file)."""
    return bool(conn.readonly("main"))


def _empty_and_old(path: str) -> bool:
    """An empty file that no process is creating right now: not made by this process, and
    older than the few seconds another process takes from creating it to writing it."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return st.st_size == 0 and not _new_files.get(path) and time.time() - st.st_mtime > 5


def _create_owner_only(path: str) -> None:
    # Create the file ourselves so SQLite (and its -wal/-shm, which copy the file's mode)
    # never exists with wider permissions, whatever the umask.
    if os.path.exists(path):
        return
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, mode=0o700, exist_ok=True)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
        _new_files[path] = True  # empty until SQLite writes the schema: ours to fill
    except FileExistsError:
        pass
    if os.name == "posix":
        os.chmod(path, 0o600)


def scalar(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> Any:
    """The first column of the first row, or None."""
    row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


def schema_version(conn: apsw.Connection) -> int:
    return int(scalar(conn, "PRAGMA user_version"))


def apply_migrations(
    conn: apsw.Connection, path: str = "", *, stop_before: int | None = None
) -> None:
    """Bring the schema to head; refuse a file written by a newer Waymark. With
    `stop_before` N, apply only the first N migrations: the file an older Waymark wrote,
    for the tests that open one."""
    target = SCHEMA_VERSION if stop_before is None else stop_before
    if not 0 <= target <= SCHEMA_VERSION:
        raise ValueError(f"stop_before is 0-{SCHEMA_VERSION} (got {stop_before})")
    version = schema_version(conn)
    if version == target:
        return
    if version > SCHEMA_VERSION:
        raise _too_new(path, version)
    with write(conn):
        version = schema_version(conn)  # another process may have migrated meanwhile
        if version > SCHEMA_VERSION:
            raise _too_new(path, version)
        if version >= target:
            return
        if 0 < version < target and path and path != ":memory:":
            # An existing database is copied aside before any step changes it.
            from waymark.storage.backup import before_migration  # only a migration pays

            before_migration(path, version, target)
        from waymark.storage.migrations import MIGRATIONS

        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        done = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
        unknown = done - {name for name, _ in MIGRATIONS}
        if unknown:
            raise _too_new(path, len(done))
        for name, sql in MIGRATIONS[:target]:
            if name in done:
                continue
            conn.execute(sql)
            conn.execute(
                "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)", (name, now())
            )
        conn.execute(f"PRAGMA user_version = {int(target)}")


def _too_new(path: str, version: int) -> SchemaTooNew:
    return SchemaTooNew(
        f"{path or 'the database'} was written by a newer Waymark "
        f"(schema {version} > {SCHEMA_VERSION}); upgrade Waymark or restore a backup",
        found=version,
        supported=SCHEMA_VERSION,
    )


class write:
    """One write transaction, taken up front (BEGIN IMMEDIATE), committed or rolled back:
    `with write(conn):`. A class, not `contextlib`: hooks cannot afford its import."""

    __slots__ = ("conn",)

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> apsw.Connection:
        conn = self.conn
        path = conn.filename
        if path and os.path.exists(path + DAMAGED_SUFFIX):
            raise corrupt_error(path, damage_noted(path) or "damage found earlier")
        try:
            conn.execute("BEGIN IMMEDIATE")
        except apsw.Error as exc:
            mapped = translate(exc, path)
            if mapped is None:
                raise
            raise mapped from exc
        return conn

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: object) -> None:
        conn = self.conn
        path = conn.filename
        if exc is not None:
            if conn.in_transaction:  # SQLite rolls back by itself after a full disk or damage
                conn.execute("ROLLBACK")
            mapped = translate(exc, path) if isinstance(exc, apsw.Error) else None
            if mapped is None:
                return  # re-raised as it is
            raise mapped from exc
        try:
            conn.execute("COMMIT")
        except apsw.Error as error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            mapped = translate(error, path)
            if mapped is None:
                raise
            raise mapped from error


class deadline:
    """Interrupt any statement of `conn` that runs past `seconds`: `with deadline(conn, s):`."""

    __slots__ = ("conn", "seconds")

    def __init__(self, conn: apsw.Connection, seconds: float) -> None:
        self.conn, self.seconds = conn, seconds

    def __enter__(self) -> None:
        limit = time.monotonic() + self.seconds
        self.conn.set_progress_handler(lambda: time.monotonic() > limit, 1000)

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: object) -> None:
        self.conn.set_progress_handler(None)
        if isinstance(exc, apsw.InterruptError):
            raise QueryTimeout(
                f"query took longer than {self.seconds:g} s and was stopped"
            ) from exc


class read:
    """One read snapshot across several statements (BEGIN ... COMMIT): `with read(conn):`."""

    __slots__ = ("conn",)

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> apsw.Connection:
        self.conn.execute("BEGIN")
        return self.conn

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: object) -> None:
        self.conn.execute("COMMIT")


def savepoint(conn: apsw.Connection) -> apsw.Connection:
    """A savepoint: one consistent read that nests inside a caller's transaction
    (`with savepoint(conn):`; apsw's connection is that context manager itself)."""
    return conn


def generation(conn: apsw.Connection) -> tuple[int, int]:
    """Moves whenever any connection commits a change, or this one writes: for caches."""
    return int(scalar(conn, "PRAGMA data_version")), conn.total_changes()


def checkpoint_wal(conn: apsw.Connection) -> None:
    """Move every page out of the WAL into the main file, and truncate the WAL."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def compact(conn: apsw.Connection, path: str = "") -> tuple[int, int]:
    """Give the space of deleted rows back to the disk (VACUUM, then the WAL truncated);
    the file's size (bytes, WAL included) before and after. A file of another page size is
    rebuilt at PAGE_SIZE when no other connection has it open (leaving WAL mode for the
    VACUUM needs the file to itself); otherwise it keeps its pages."""

    def size() -> int:
        files = (path, path + "-wal") if path else ()
        return sum(os.path.getsize(p) for p in files if os.path.exists(p))

    before = size()
    if int(scalar(conn, "PRAGMA page_size")) != PAGE_SIZE and _leave_wal(conn):
        try:
            conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
            conn.execute("VACUUM")
        finally:
            conn.execute("PRAGMA journal_mode = WAL")
    else:
        conn.execute("VACUUM")
    checkpoint_wal(conn)
    return before, size()


def _leave_wal(conn: apsw.Connection) -> bool:
    """Switch to a rollback journal, which only a connection alone on the file can do."""
    try:
        mode = str(scalar(conn, "PRAGMA journal_mode = DELETE"))
    except apsw.BusyError:
        return False
    return mode.lower() == "delete"


def problems(conn: apsw.Connection) -> tuple[list[str], int]:
    """SQLite's integrity check (["ok"] when sound) and the number of broken references."""
    integrity = [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
    return integrity, len(conn.execute("PRAGMA foreign_key_check").fetchall())


def scan_for_damage(path: str | None = None) -> str | None:
    """SQLite's quick check of every page (about 1 s at 100k memories), on a connection of
    its own; what it found, noted beside the file so writes stop, or None when sound."""
    conn = connect(path)
    try:
        found = [str(row[0]) for row in conn.execute("PRAGMA quick_check(3)")]
    except (apsw.CorruptError, apsw.NotADBError) as exc:
        found = [str(exc)]
    finally:
        conn.close()
    if found == ["ok"]:
        return None
    problem = "; ".join(found)
    translate(apsw.CorruptError(problem), path or home.db_path())
    return problem


def engine_version() -> str:
    return f"SQLite {apsw.sqlite_lib_version()} (apsw)"
