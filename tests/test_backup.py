"""Backups and restores: real files in the test's data home, real processes writing."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import pathlib
import re
import stat
import subprocess
import sys
import time

import apsw
import pytest

from waymark import home
from waymark.cli import main
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.projects.resolve import resolve
from waymark.storage import backup, migrations
from waymark.storage import connection as db
from waymark.storage.backup import BackupFailed, RestoreRefused

HEAD = migrations.SCHEMA_VERSION


def remember(content: str, project: str = "notes") -> str:
    conn = db.connect()
    try:
        p = resolve(conn, project)
        return store.remember(conn, p, make_draft(p, type="fact", content=content)).memory.id
    finally:
        conn.close()


def contents(path: str | None = None) -> list[str]:
    conn = db.connect() if path is None else apsw.Connection(path)
    try:
        return sorted(str(r[0]) for r in conn.execute("SELECT content FROM memories"))
    finally:
        conn.close()


def sha256(path) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def snapshot(waymark_home) -> dict[str, str]:
    """Every file under the data home with its hash: "nothing changed" means this is equal."""
    return {
        os.path.relpath(os.path.join(d, n), waymark_home): sha256(os.path.join(d, n))
        for d, _, names in os.walk(waymark_home)
        for n in names
    }


@pytest.fixture
def unique_stamps(monkeypatch):
    counter = itertools.count()
    monkeypatch.setattr(backup.clock, "compact", lambda: f"20261130T04{next(counter):04d}Z")


def test_backup_is_named_by_schema_time_and_hash_owner_only_and_matches_its_content(
    waymark_home,
):
    remember("alpha")
    info = backup.backup()
    folder = waymark_home / "backups"
    name = os.path.basename(info.path)
    assert os.path.dirname(info.path) == str(folder)
    assert re.fullmatch(rf"waymark-s{HEAD}-\d{{8}}T\d{{6}}Z-{info.sha256}\.db", name)
    assert sha256(info.path) == info.sha256 and os.path.getsize(info.path) == info.size
    assert info.schema_version == HEAD
    assert os.listdir(folder) == [name]  # no temp file, no -wal or -journal left beside it
    assert contents(info.path) == ["alpha"]
    if os.name == "posix":
        assert stat.S_IMODE(os.stat(info.path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700


def test_backup_to_a_chosen_folder_creates_it_owner_only(tmp_path):
    remember("alpha")
    target = tmp_path / "usb" / "waymark"
    info = backup.backup(to_dir=str(target))
    assert os.path.dirname(info.path) == str(target) and contents(info.path) == ["alpha"]
    if os.name == "posix":
        assert stat.S_IMODE(os.stat(target).st_mode) == 0o700


def test_a_backup_never_replaces_an_existing_file(monkeypatch, waymark_home):
    remember("alpha")
    monkeypatch.setattr(backup.clock, "compact", lambda: "20261130T041502Z")
    first = backup.backup()
    with open(first.path, "wb") as f:
        f.write(b"sentinel")
    with pytest.raises(BackupFailed) as err:
        backup.backup()
    assert err.value.code == "backup_failed" and "never replaced" in err.value.message
    assert err.value.details["identical"] is False
    with open(first.path, "rb") as f:
        assert f.read() == b"sentinel"
    assert os.listdir(waymark_home / "backups") == [os.path.basename(first.path)]


def test_backing_up_before_any_database_exists_is_a_clear_failure():
    with pytest.raises(BackupFailed) as err:
        backup.backup()
    assert "nothing to back up" in err.value.message
    assert not os.path.exists(home.db_path())  # and it did not create one


WRITER = """
import os, sys
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.projects.resolve import resolve
from waymark.storage import connection as db
conn = db.connect()
project = resolve(conn, "busy")
n = 0
while not os.path.exists(sys.argv[1]) and n < 20000:
    draft = make_draft(project, type="note", content=f"write {n}: " + "lorem ipsum " * 20)
    store.remember(conn, project, draft)
    n += 1
print(n)
"""


def wait_until(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def contents_count(path: str) -> int:
    conn = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(db.scalar(conn, "SELECT count(*) FROM memories"))
    finally:
        conn.close()


def test_backups_taken_while_another_process_writes_are_consistent(tmp_path, unique_stamps):
    db.connect().close()
    stop = tmp_path / "stop"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(stop)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    try:
        reader = db.connect()

        def written() -> int:
            return int(db.scalar(reader, "SELECT count(*) FROM memories"))

        wait_until(lambda: written() >= 20)
        infos = [backup.backup() for _ in range(4)]
        wait_until(lambda: written() > 40 + max(contents_count(i.path) for i in infos))
        reader.close()
    finally:
        stop.touch()
        out, err = writer.communicate(timeout=120)
    assert writer.returncode == 0, err
    for info in infos:
        copy = apsw.Connection(info.path, flags=apsw.SQLITE_OPEN_READONLY)
        assert copy.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert copy.execute("PRAGMA foreign_key_check").fetchall() == []
        memories = db.scalar(copy, "SELECT count(*) FROM memories")
        # Each write is one transaction of a memory and its event: never half of one.
        logged = db.scalar(
            copy,
            "SELECT count(*) FROM events e JOIN memories m ON m.id = e.memory_id"
            " WHERE e.op = 'remember'",
        )
        assert memories == logged == db.scalar(copy, "SELECT count(*) FROM events") > 0
        copy.close()
    assert int(out) > max(contents_count(i.path) for i in infos)  # it kept writing throughout


def test_restore_brings_the_old_state_back_and_keeps_the_current_one_aside(waymark_home):
    remember("old state")
    info = backup.backup()
    remember("new state")
    result = backup.restore(info.path)
    assert contents() == ["old state"]
    aside = result["kept_aside"]
    assert os.path.dirname(aside) == str(waymark_home / "backups")
    assert re.fullmatch(r"pre-restore-\d{8}T\d{6}Z\.db", os.path.basename(aside))
    assert contents(aside) == ["new state", "old state"]
    assert result["sha256"] == info.sha256 and result["schema_version"] == HEAD
    assert result["migrates_on_open"] is False
    assert sorted(os.listdir(waymark_home)) == ["backups", "waymark.db"]  # no temp left
    if os.name == "posix":
        assert stat.S_IMODE(os.stat(home.db_path()).st_mode) == 0o600
    # Reversible: restoring the kept file returns to where we were.
    backup.restore(aside)
    assert contents() == ["new state", "old state"]


def test_restore_into_an_empty_home_needs_nothing_set_aside(tmp_path, monkeypatch):
    remember("alpha")
    info = backup.backup(to_dir=str(tmp_path / "safe"))
    monkeypatch.setenv("WAYMARK_HOME", str(tmp_path / "fresh"))
    result = backup.restore(info.path)
    assert result["kept_aside"] is None and contents() == ["alpha"]


def corrupt(path: str) -> str:
    with open(path, "wb") as f:
        f.write(b"this is not sqlite at all\x00" * 400)
    return "unreadable"


def truncated(path: str) -> str:
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(size // 2)
    return "corrupt"


def foreign(path: str) -> str:
    os.unlink(path)
    conn = apsw.Connection(path)
    conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    conn.close()
    return "not_waymark"


def newer(path: str) -> str:
    conn = apsw.Connection(path)
    conn.execute(f"PRAGMA user_version = {HEAD + 1}")
    conn.close()
    return "schema_too_new"


def unknown_step(path: str) -> str:
    conn = apsw.Connection(path)
    conn.execute("INSERT INTO schema_migrations VALUES ('m999_future', 'x')")
    conn.close()
    return "schema_too_new"


@pytest.mark.parametrize("spoil", [corrupt, truncated, foreign, newer, unknown_step])
def test_restore_refuses_a_bad_file_and_changes_nothing(waymark_home, tmp_path, spoil):
    remember("current")
    path = backup.backup(to_dir=str(tmp_path / "elsewhere")).path
    reason = spoil(path)
    before = snapshot(waymark_home)
    with pytest.raises(RestoreRefused) as err:
        backup.restore(path)
    assert err.value.code == "restore_refused" and err.value.details["reason"] == reason
    assert path in err.value.message and "nothing was changed" in err.value.message
    assert snapshot(waymark_home) == before
    assert contents() == ["current"]


def test_restore_refuses_while_another_connection_has_the_database_open(waymark_home):
    remember("current")
    info = backup.backup()
    remember("newer")
    other = db.connect()
    try:
        with pytest.raises(RestoreRefused) as err:
            backup.restore(info.path)
        assert err.value.details["reason"] == "in_use"
    finally:
        other.close()
    assert contents() == ["current", "newer"]
    assert not [n for n in os.listdir(waymark_home / "backups") if n.startswith("pre-restore")]


def test_restore_replaces_a_corrupt_current_database(waymark_home):
    remember("good")
    info = backup.backup()
    corrupt(home.db_path())
    result = backup.restore(info.path)
    assert contents() == ["good"]
    with open(result["kept_aside"], "rb") as f:
        assert f.read().startswith(b"this is not sqlite")


def older_database(applied: int) -> None:
    """A data home written by a Waymark that had only the first `applied` migrations."""
    conn = db.connect(migrate=False)
    db.apply_migrations(conn, stop_before=applied)
    conn.execute(
        "INSERT INTO projects (id, kind, name, created_at) VALUES ('P1', 'named', 'x', 't')"
    )
    conn.close()


@pytest.mark.parametrize("applied", range(1, HEAD))
def test_migrating_an_existing_database_takes_a_backup_first(monkeypatch, waymark_home, applied):
    older_database(applied)
    conn = db.connect()
    assert db.schema_version(conn) == HEAD
    conn.close()
    (name,) = os.listdir(waymark_home / "backups")
    assert name.startswith(f"waymark-s{applied}-")
    copy = apsw.Connection(str(waymark_home / "backups" / name))
    assert db.scalar(copy, "PRAGMA user_version") == applied
    assert copy.execute("SELECT id FROM projects").fetchall() == [("P1",)]
    copy.close()
    db.connect().close()  # current now: no second backup
    assert os.listdir(waymark_home / "backups") == [name]


def test_a_new_database_takes_no_backup(waymark_home):
    db.connect().close()
    db.connect().close()
    assert not (waymark_home / "backups").exists()


def test_a_failed_pre_migration_backup_leaves_the_database_unmigrated(monkeypatch, waymark_home):
    older_database(2)

    def fail(database: str | None = None, to_dir: str | None = None) -> backup.BackupInfo:
        raise BackupFailed("disk full")

    monkeypatch.setattr(backup, "backup", fail)
    with pytest.raises(BackupFailed) as err:
        db.connect()
    assert "was not migrated" in err.value.message and "schema 2 -> " in err.value.message
    conn = apsw.Connection(home.db_path())
    assert db.scalar(conn, "PRAGMA user_version") == 2
    conn.close()


def test_a_migration_accepts_an_identical_backup_taken_the_same_second(monkeypatch, waymark_home):
    older_database(2)
    monkeypatch.setattr(backup.clock, "compact", lambda: "20261130T041502Z")
    first = backup.backup()
    conn = db.connect()
    assert db.schema_version(conn) == HEAD
    conn.close()
    assert os.listdir(waymark_home / "backups") == [os.path.basename(first.path)]


def test_an_older_backup_is_restored_then_migrated_on_next_open(monkeypatch, waymark_home):
    older_database(3)
    old = backup.backup(to_dir=str(waymark_home.parent / "old"))
    assert old.schema_version == 3
    remember("written at head")
    result = backup.restore(old.path)
    assert result["schema_version"] == 3 and result["migrates_on_open"] is True
    conn = db.connect()
    assert db.schema_version(conn) == HEAD
    assert conn.execute("SELECT id FROM projects").fetchall() == [("P1",)]
    conn.close()


# The CLI: exit codes and JSON shapes.


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_backup_prints_path_size_and_sha256(capsys, tmp_path):
    remember("alpha")
    code, out, _ = run(capsys, "backup", "--json")
    data = json.loads(out)
    assert code == 0 and set(data) == {"path", "size", "sha256", "schema_version", "created_at"}
    assert sha256(data["path"]) == data["sha256"]
    code, out, _ = run(capsys, "backup", "--to", str(tmp_path / "usb"))
    assert code == 0 and str(tmp_path / "usb") in out and "sha256" in out and "bytes" in out


def test_cli_restore_reports_what_it_did_and_refusals_exit_1(capsys, tmp_path):
    remember("alpha")
    path = backup.backup().path
    remember("beta")
    code, out, _ = run(capsys, "restore", path, "--json")
    data = json.loads(out)
    assert code == 0 and data["restored_from"] == path and data["kept_aside"]
    assert contents() == ["alpha"]
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 100)
    code, out, _ = run(capsys, "restore", str(bad), "--json")
    err = json.loads(out)
    assert code == 1 and err["code"] == "restore_refused"
    assert err["details"]["reason"] == "unreadable"
    code, _, stderr = run(capsys, "restore", str(tmp_path / "missing.db"))
    assert code == 1 and "[restore_refused]" in stderr


def test_cli_backup_without_a_database_exits_1(capsys):
    code, out, _ = run(capsys, "backup", "--json")
    assert code == 1 and json.loads(out)["code"] == "backup_failed"


def test_restore_refuses_a_sound_backup_whose_content_is_not_what_its_name_says(
    waymark_home, tmp_path
):
    import apsw

    remember("alpha")
    info = backup.backup()
    tampered = apsw.Connection(info.path)  # still a sound Waymark database afterwards
    tampered.execute("UPDATE memories SET content = 'planted', title = 'planted'")
    tampered.close()
    remember("beta")
    with pytest.raises(RestoreRefused) as err:
        backup.restore(info.path)
    assert err.value.details["reason"] == "digest_mismatch"
    assert info.sha256 in err.value.message
    assert sorted(contents(home.db_path())) == ["alpha", "beta"]  # nothing changed


def test_erase_names_the_backups_that_still_hold_the_text_and_erases_it_there_too(
    capsys, waymark_home
):
    """`erase` is for good: it says which backups taken before still hold the text, and
    `--from-backups` erases it there too; the backup stays restorable (#44)."""
    secret_id = remember("Customer Jane Roe lives at 12 Quay Street")
    remember("Deploys run on Tuesdays")
    taken = backup.backup().path
    assert b"Jane Roe" in pathlib.Path(taken).read_bytes()

    erase = ("erase", secret_id, "--project", "notes", "--reason", "a customer's address")
    code, out, _ = run(capsys, *erase, "--json")
    erased = json.loads(out)
    assert code == 0 and erased["status"] == "erased"
    assert erased["backups_holding"] == [taken] and erased["backups_rewritten"] == []
    code, out, err = run(capsys, *erase)
    assert code == 1 and "already erased" in out + err  # nothing asked of the backups

    code, out, _ = run(capsys, *erase, "--from-backups")
    assert code == 0 and "was erased already; erased from 1 backup(s) too" in out
    assert "still hold" not in out
    (now,) = os.listdir(waymark_home / "backups")
    rewritten = str(waymark_home / "backups" / now)
    assert not os.path.exists(taken) and rewritten != taken
    assert now.split("-")[2] == os.path.basename(taken).split("-")[2]  # the time it was taken
    data = pathlib.Path(rewritten).read_bytes()
    assert b"Jane Roe" not in data and b"Quay Street" not in data
    assert now.endswith(f"-{sha256(rewritten)}.db")  # named by its new content
    assert backup.holding(secret_id) == []
    assert contents(rewritten).count("Deploys run on Tuesdays") == 1  # the rest is there
    assert backup.restore(rewritten)["schema_version"] == HEAD  # and it restores
    conn = db.connect()
    try:
        assert store.get(conn, secret_id).status == "erased"
    finally:
        conn.close()


def test_the_mcp_forget_erase_names_the_backups_that_still_hold_the_text(repo, waymark_home):
    """The agent's erase says, as the CLI's does, which backups taken before still hold the
    text and the command that erases it there (a person's act: backups are the user's)."""
    from conftest import call_tool

    saved = call_tool(repo, "remember", {"type": "fact",
                                         "content": "Customer Jane Roe lives at 12 Quay Street"})  # fmt: skip
    memory_id = saved.structured_content["memory"]["id"]
    taken = backup.backup().path
    done = call_tool(repo, "forget", {"id": memory_id, "mode": "erase",
                                      "reason": "a customer's address"})  # fmt: skip
    assert not done.is_error, done.content
    said = done.structured_content
    assert said["status"] == "erased" and said["backups_holding"] == [taken]
    assert f"waymark erase {memory_id} --from-backups" in said["backups"]
