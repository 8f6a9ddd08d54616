"""Backups of the database file, and restoring one.

A backup is SQLite's online backup of the live file in one step (one read snapshot, so it is
consistent while other processes write), checked for integrity and foreign keys before it is
published under a name that says what it is: `waymark-s5-20261130T041502Z-<sha12>.db`. It is
owner-only and never replaces an existing file. Every migration of an existing database takes
one first (see `db.apply_migrations`).

Restoring verifies a copy of the file, keeps the current database aside in `backups/`, and
swaps the copy in with one rename, so a refused file changes nothing and a restore can be undone.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import asdict, dataclass

import apsw

from waymark import home
from waymark.base import clock
from waymark.base.files import fsync_dir, new_temp, private_dir, publish, remove_quietly, sha256_of
from waymark.errors import BackupFailed, DiskFull, RestoreRefused, WaymarkError
from waymark.storage import migrations
from waymark.storage.faults import clear_damaged, disk_full, translate

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

BACKUP_DIR = "backups"
NAME = re.compile(r"waymark-s(\d+)-(\d{8}T\d{6}Z)-([0-9a-f]+)\.db")
BUSY_TIMEOUT_MS = 10_000


@dataclass(frozen=True)
class BackupInfo:
    """One published backup file."""

    path: str
    size: int
    sha256: str
    schema_version: int
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def default_dir(database: str | None = None) -> str:
    """Where backups of `database` go: `backups/` beside it (the data home's by default)."""
    return os.path.join(os.path.dirname(os.path.abspath(database or home.db_path())), BACKUP_DIR)


def backup(database: str | None = None, to_dir: str | None = None) -> BackupInfo:
    """Copy `database` (default: the data home's) into `to_dir` (default: `backups/`)."""
    source = os.path.abspath(database or home.db_path())
    if not os.path.isfile(source):
        raise BackupFailed(f"there is no database at {source} yet; nothing to back up", path=source)
    folder = os.path.abspath(to_dir) if to_dir else default_dir(source)
    try:
        private_dir(folder)
        tmp = new_temp(folder, ".waymark-backup-")
    except OSError as exc:
        failed = BackupFailed(f"cannot write in {folder}: {exc}", path=folder)
        raise _full_or(exc, folder, failed) from exc
    try:
        version = _online_copy(source, tmp)
        sha, size = sha256_of(tmp)
        stamp = clock.compact()
        final = os.path.join(folder, f"waymark-s{version}-{stamp}-{sha}.db")
        try:
            publish(tmp, final)
        except FileExistsError:
            same = sha256_of(final)[0] == sha
            raise BackupFailed(
                f"{final} already exists"
                + (" (an identical backup taken this second)" if same else "")
                + "; a backup is never replaced",
                path=final,
                identical=same,
            ) from None
        fsync_dir(folder)
    finally:
        remove_quietly(tmp, tmp + "-journal")
    return BackupInfo(final, size, sha, version, clock.now())


def before_migration(database: str, found: int, head: int) -> BackupInfo:
    """The backup every migration of an existing database takes first."""
    try:
        return backup(database)
    except BackupFailed as exc:
        if exc.details.get("identical"):  # this very content is already backed up
            path = exc.details["path"]
            return BackupInfo(path, os.path.getsize(path), sha256_of(path)[0], found, clock.now())
        raise BackupFailed(
            f"{exc.message}. {database} was not migrated (schema {found} -> {head}) because it "
            "could not be backed up first; free space or fix the file, then retry",
            **exc.details,
        ) from exc


def _online_copy(source: str, dest: str) -> int:
    """SQLite's online backup of `source` into the empty file `dest`; its schema version."""
    try:
        src = apsw.Connection(source, flags=apsw.SQLITE_OPEN_READWRITE)
    except apsw.Error as exc:
        raise BackupFailed(f"cannot open {source}: {exc}", path=source) from exc
    try:
        src.set_busy_timeout(BUSY_TIMEOUT_MS)
        out = apsw.Connection(dest)
        try:
            with out.backup("main", src, "main") as job:
                job.step(-1)  # one step is one read snapshot: consistent under writers
                assert job.done
            out.execute("PRAGMA journal_mode = DELETE")  # one standalone file, no -wal beside it
            check(out, source, BackupFailed)
            return _user_version(out)
        finally:
            out.close()
    except apsw.Error as exc:
        failed = BackupFailed(f"cannot back up {source}: {exc}", path=source)
        raise _full_or(exc, dest, failed) from exc
    except OSError as exc:
        failed = BackupFailed(f"cannot back up {source}: {exc}", path=source)
        raise _full_or(exc, dest, failed) from exc
    finally:
        src.close()


def _full_or(exc: BaseException, where: str, otherwise: WaymarkError) -> WaymarkError:
    """`disk_full` (the partial copy is removed by the caller) when the disk filled up."""
    mapped = translate(exc, where)
    if isinstance(mapped, DiskFull) or disk_full(where):
        return DiskFull(
            f"the disk is full: no backup was made (the partial copy was removed). Free some "
            f"space in {os.path.dirname(where)} and run `waymark backup` again",
            path=where,
        )
    return otherwise


def check(conn: apsw.Connection, label: str, error: type[WaymarkError]) -> None:
    """SQLite's integrity and foreign-key checks; raise `error` naming `label` on a failure."""
    problems = [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
    if problems != ["ok"]:
        raise error(
            f"{label} fails SQLite's integrity check: {'; '.join(problems[:3])}",
            path=label,
            reason="corrupt",
        )
    orphans = conn.execute("PRAGMA foreign_key_check").fetchall()
    if orphans:
        raise error(
            f"{label} has {len(orphans)} rows whose references are missing "
            f"(first in table {orphans[0][0]})",
            path=label,
            reason="foreign_keys",
        )


def verify(path: str, label: str | None = None) -> int:
    """Check that `path` is a sound Waymark database this version can open; its schema version.

    Opening may write `-wal`/`-shm` beside the file, so `restore` verifies its private copy.
    """
    label = label or path

    def refuse(why: str, reason: str, **details: Any) -> RestoreRefused:
        return RestoreRefused(
            f"{label} {why}; nothing was changed", path=label, reason=reason, **details
        )

    try:
        conn = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READWRITE)
    except apsw.Error as exc:
        raise refuse(f"cannot be opened ({exc})", "unreadable") from exc
    try:
        check(conn, label, RestoreRefused)
        found: Any = conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE name = 'schema_migrations'"
        ).fetchone()
        has_table = found[0]
        if not has_table:
            raise refuse("is an SQLite file but not a Waymark database", "not_waymark")
        version = _user_version(conn)
        names = {str(row[0]) for row in conn.execute("SELECT name FROM schema_migrations")}
    except apsw.CorruptError as exc:
        raise refuse(f"is a damaged SQLite database ({exc})", "corrupt") from exc
    except apsw.Error as exc:  # not SQLite at all: the first read says so
        raise refuse(f"is not a readable SQLite database ({exc})", "unreadable") from exc
    finally:
        conn.close()
    head = len(migrations.MIGRATIONS)
    if version > head or names - {name for name, _ in migrations.MIGRATIONS}:
        raise refuse(
            f"was written by a newer Waymark (schema {max(version, len(names))} > {head}); "
            "upgrade Waymark to restore it",
            "schema_too_new",
            found=version,
            supported=head,
        )
    if version == 0 or not names:
        raise refuse("holds no Waymark schema", "not_waymark")
    return version


def restore(file: str, database: str | None = None) -> dict[str, Any]:
    """Replace `database` (default: the data home's) with the verified backup `file`.

    The current database is kept as `backups/pre-restore-<time>.db`. A file with an older
    schema is restored as it is and migrated when it is next opened.
    """
    source = os.path.abspath(file)
    target = os.path.abspath(database or home.db_path())
    if not os.path.isfile(source):
        raise RestoreRefused(f"no such file: {source}", path=source, reason="not_found")
    if os.path.exists(target) and os.path.samefile(source, target):
        raise RestoreRefused(f"{source} is the current database", path=source, reason="same_file")
    if os.path.exists(source + "-wal") and os.path.getsize(source + "-wal"):
        raise RestoreRefused(
            f"{source} has a -wal file beside it: it is a live database, not a backup; "
            "make one with `waymark backup`",
            path=source,
            reason="live_database",
        )
    folder = os.path.dirname(target)
    private_dir(folder)
    tmp = new_temp(folder, ".waymark-restore-")
    try:
        try:
            with open(source, "rb") as src, open(tmp, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
                out.flush()
                os.fsync(out.fileno())
        except OSError as exc:
            raise RestoreRefused(
                f"cannot copy {source} into {folder}: {exc}; nothing was changed",
                path=source,
                reason="io_error",
            ) from exc
        sha, size = sha256_of(tmp)
        version = verify(tmp, label=source)
        named = named_digest(source)  # sound, but is it the file that was backed up?
        if named and not sha.startswith(named):
            raise RestoreRefused(
                f"{source} is not the backup its name says: its SHA-256 is {sha}, the name "
                f"says {named}. It was changed after the backup was made; nothing was changed",
                path=source,
                reason="digest_mismatch",
                sha256=sha,
                named=named,
            )
        aside = _set_aside(target) if os.path.exists(target) else None
        os.replace(tmp, target)
        fsync_dir(folder)
        clear_damaged(target)  # damage noted in the file it replaced is not this file's
    finally:
        remove_quietly(tmp, tmp + "-wal", tmp + "-shm", tmp + "-journal")
    return {
        "restored_from": source,
        "database": target,
        "sha256": sha,
        "size": size,
        "schema_version": version,
        "migrates_on_open": version < len(migrations.MIGRATIONS),
        "kept_aside": aside,
    }


def named_digest(path: str) -> str | None:
    """The SHA-256 a backup's name carries (`waymark-s<schema>-<time>-<sha256>.db`; backups
    before 0.2 carry its first 12 digits), or None for a file named otherwise."""
    import re

    found = re.search(r"-([0-9a-f]{64}|[0-9a-f]{12})\.db$", os.path.basename(path))
    return found.group(1) if found else None


def _set_aside(target: str) -> str:
    """Checkpoint the current database into its main file, then give it a name in backups/."""
    settled = True
    try:
        conn = apsw.Connection(target, flags=apsw.SQLITE_OPEN_READWRITE)
        try:
            conn.set_busy_timeout(BUSY_TIMEOUT_MS)
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
    except apsw.Error:
        settled = False  # a corrupt current file (the usual reason to restore) moves as it is
    sidecars = [s for s in ("-wal", "-shm") if os.path.exists(target + s)]
    if settled and sidecars:
        # The last connection to close removes them: someone else still has the file open.
        raise RestoreRefused(
            f"{target} is open in another process (an agent session, `waymark mcp` or the "
            "recall server); stop it and retry; nothing was changed",
            path=target,
            reason="in_use",
        )
    folder = default_dir(target)
    private_dir(folder)
    stamp = clock.compact()
    for n in range(100):
        aside = os.path.join(folder, f"pre-restore-{stamp}{f'-{n}' if n else ''}.db")
        try:
            os.link(target, aside)  # target keeps its name until the swap replaces it
        except FileExistsError:
            continue
        except OSError:  # no hard links on this filesystem: reserve the name, then move
            try:
                os.close(os.open(aside, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            except FileExistsError:
                continue
            os.replace(target, aside)
        for suffix in sidecars:
            os.replace(target + suffix, aside + suffix)
        return aside
    raise RestoreRefused(f"too many pre-restore files named {stamp} in {folder}", path=folder)


def _user_version(conn: apsw.Connection) -> int:
    row: Any = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def listing(database: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
    """The backups in `backups/` beside `database`, newest first: {path, name, size,
    schema_version, taken} (from the name Waymark gave it)."""
    folder = default_dir(database)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    out = []
    for name in names:
        said = NAME.fullmatch(name)
        if not said:
            continue
        path = os.path.join(folder, name)
        try:
            size = os.path.getsize(path)
        except OSError:
            continue
        stamp = said.group(2)
        taken = (f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[9:11]}:{stamp[11:13]}:"
                 f"{stamp[13:15]}Z")  # fmt: skip
        out.append({"path": path, "name": name, "size": size,
                    "schema_version": int(said.group(1)), "taken": taken})  # fmt: skip
    out.sort(key=lambda b: (b["taken"], b["name"]), reverse=True)
    return out[:limit]


def holding(memory_id: str, database: str | None = None) -> list[str]:
    """The backups beside `database` that still hold memory `memory_id`'s text (it is in
    them and not erased there), newest first. A backup that cannot be read is passed over."""
    out = []
    for found in listing(database, limit=1 << 30):
        try:
            conn = apsw.Connection(found["path"], flags=apsw.SQLITE_OPEN_READONLY)
        except apsw.Error:
            continue
        try:
            row: Any = conn.execute(
                "SELECT status FROM memories WHERE id = ?", (memory_id,)
            ).fetchone()
        except apsw.Error:
            row = None
        finally:
            conn.close()
        if row is not None and row[0] != "erased":
            out.append(found["path"])
    return out


def rewrite(path: str, change: Callable[[apsw.Connection], None]) -> str:
    """Apply `change` to the backup at `path`, for good: to a copy (opened with foreign keys
    and secure delete on; `change` may migrate it), then vacuumed (no freed page keeps old
    text), checked and published under its new digest with the time it was taken; the old
    file is removed. Its new path."""
    folder, name = os.path.split(os.path.abspath(path))
    said = NAME.fullmatch(name)
    if said is None:
        raise BackupFailed(f"{path} is not a backup Waymark named; nothing was changed", path=path)
    verify(path)
    tmp = new_temp(folder, ".waymark-rewrite-")
    try:
        shutil.copyfile(path, tmp)
        conn = apsw.Connection(tmp, flags=apsw.SQLITE_OPEN_READWRITE)
        try:
            conn.execute("PRAGMA foreign_keys = ON; PRAGMA secure_delete = ON")
            change(conn)
            conn.execute("VACUUM")
            conn.execute("PRAGMA journal_mode = DELETE")  # one standalone file, as backups are
        finally:
            conn.close()
        remove_quietly(tmp + "-wal", tmp + "-shm")
        version = verify(tmp)
        sha, _ = sha256_of(tmp)
        final = os.path.join(folder, f"waymark-s{version}-{said.group(2)}-{sha}.db")
        if final != os.path.abspath(path):
            publish(tmp, final)
            fsync_dir(folder)
            os.remove(path)
        return final
    finally:
        remove_quietly(tmp, tmp + "-wal", tmp + "-shm")
