"""The database file: creation, permissions, migrations, refusals."""

from __future__ import annotations

import os
import shutil
import stat
import time

import apsw
import pytest

from waymark import home
from waymark.base import clock
from waymark.errors import DatabaseUnreadable, SchemaTooNew
from waymark.storage import connection as db
from waymark.storage import migrations


def test_the_schema_version_an_open_checks_is_the_migrations_count():
    # connection.py keeps its own constant so that opening an up-to-date file never loads the
    # migrations' SQL (a hook's cost); this keeps the two equal.
    assert db.SCHEMA_VERSION == migrations.SCHEMA_VERSION == len(migrations.MIGRATIONS)


def test_blank_file_migrates_to_head_and_records_each_step():
    conn = db.connect()
    names = [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
    assert names == [name for name, _ in migrations.MIGRATIONS]
    assert db.schema_version(conn) == migrations.SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.mark.parametrize("applied", range(1, migrations.SCHEMA_VERSION))
def test_every_past_schema_migrates_to_head(applied):
    older = db.connect(migrate=False)
    db.apply_migrations(older, stop_before=applied)  # the file an older Waymark wrote
    assert db.schema_version(older) == applied
    older.close()
    conn = db.connect()
    assert db.schema_version(conn) == migrations.SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(
        migrations.MIGRATIONS
    )


def test_data_home_and_file_are_owner_only(waymark_home):
    db.connect().close()
    if os.name != "posix":
        pytest.skip("file modes exist only on POSIX")
    assert stat.S_IMODE(os.stat(waymark_home).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(home.db_path()).st_mode) == 0o600
    wal = home.db_path() + "-wal"
    if os.path.exists(wal):
        assert stat.S_IMODE(os.stat(wal).st_mode) == 0o600


def test_newer_schema_is_refused_with_a_clear_message():
    conn = db.connect()
    conn.execute(f"PRAGMA user_version = {migrations.SCHEMA_VERSION + 3}")
    conn.close()
    with pytest.raises(SchemaTooNew) as err:
        db.connect()
    assert "newer Waymark" in err.value.message
    assert (
        f"schema {migrations.SCHEMA_VERSION + 3} > {migrations.SCHEMA_VERSION}" in err.value.message
    )
    assert err.value.code == "schema_too_new"


def test_unknown_migration_name_is_refused_as_newer():
    conn = db.connect()
    conn.execute("INSERT INTO schema_migrations VALUES ('m999_future', 'x')")
    conn.execute("PRAGMA user_version = 0")
    conn.close()
    with pytest.raises(SchemaTooNew):
        db.connect()


def test_corrupt_file_is_refused_and_never_replaced(waymark_home):
    waymark_home.mkdir(parents=True)
    path = home.db_path()
    garbage = b"this is not sqlite at all\x00" * 400
    with open(path, "wb") as f:
        f.write(garbage)
    with pytest.raises(DatabaseUnreadable) as err:
        db.connect()
    assert err.value.code == "database_unreadable"
    assert path in err.value.message
    with open(path, "rb") as f:
        assert f.read() == garbage


def test_write_rolls_back_on_error():
    conn = db.connect()
    with pytest.raises(RuntimeError), db.write(conn):
        conn.execute(
            "INSERT INTO projects (id, kind, name, created_at) VALUES ('p', 'named', 'x', 'now')"
        )
        raise RuntimeError("boom")
    assert conn.execute("SELECT count(*) FROM projects").fetchone()[0] == 0


def test_deadline_interrupts_a_long_query():
    conn = db.connect()
    with pytest.raises(db.QueryTimeout), db.deadline(conn, 0.05):
        conn.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
        ).fetchall()


def test_ids_sort_by_creation_time():
    first = clock.new_id()
    time.sleep(0.002)
    second = clock.new_id()
    assert len(first) == 26 and first < second


def test_platform_data_dir_follows_platformdirs_rules(monkeypatch):
    import platformdirs

    monkeypatch.delenv("WAYMARK_HOME")
    assert home.data_home() == platformdirs.user_data_dir("waymark", appauthor=False)


def test_apsw_is_the_binding():
    assert isinstance(db.connect(), apsw.Connection)


def test_epoch_matches_the_calendar():
    import calendar

    for stamp in (
        "1970-01-01T00:00:00.000Z",
        "2000-02-29T12:34:56.789Z",
        "2026-11-30T04:00:00Z",
        "2023-05-08T13:56:00",
        "2100-03-01T00:00:01Z",
    ):
        expected = calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S"))
        assert clock.epoch(stamp) == expected, stamp
    assert clock.epoch("1999-12-31") == calendar.timegm(time.strptime("1999-12-31", "%Y-%m-%d"))


def test_an_empty_database_file_is_refused_not_made_a_new_store(waymark_home):
    waymark_home.mkdir(parents=True)
    path = waymark_home / "waymark.db"
    path.write_bytes(b"")
    old = time.time() - 60
    os.utime(path, (old, old))
    with pytest.raises(DatabaseUnreadable, match="empty"):
        db.connect()
    assert path.stat().st_size == 0  # left as it was found


def test_a_data_folder_that_exists_keeps_its_mode(waymark_home):
    waymark_home.mkdir(mode=0o750, parents=True)
    os.chmod(waymark_home, 0o750)
    db.connect().close()
    assert stat.S_IMODE(waymark_home.stat().st_mode) == 0o750


def test_processes_creating_the_data_folder_at_once_all_find_it(tmp_path):
    """One makes it, the others find it made: none reads the folder it lost the race to as
    "a file, not a folder" (a warm server's starters did, now and then)."""
    import subprocess
    import sys

    home = tmp_path / "fresh" / "home"
    code = "from waymark import home; print(home.ensure_home())"
    env = {**os.environ, "WAYMARK_HOME": str(home)}
    for _ in range(5):
        starters = [subprocess.Popen([sys.executable, "-c", code], env=env, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                    for _ in range(6)]  # fmt: skip
        said = [p.communicate(timeout=30) for p in starters]
        assert [p.returncode for p in starters] == [0] * 6, said
        assert {out.strip() for out, _ in said} == {str(home)}
        shutil.rmtree(tmp_path / "fresh")


def test_an_unusable_data_home_is_a_stable_error_naming_the_path(tmp_path, monkeypatch, capsys):
    import json

    from waymark.cli import main

    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    for given, why in ((blocker, "is a file, not a folder"), (blocker / "below", "cannot create")):
        monkeypatch.setenv("WAYMARK_HOME", str(given))
        assert main(["remember", "--content", "hi", "--json"]) == 1
        err = json.loads(capsys.readouterr().out)
        assert err["code"] == "data_home_unusable" and why in err["message"]
        assert err["details"]["path"] == str(given)


def test_diagnostics_never_overwrites_and_says_so(tmp_path, capsys):
    import json

    from waymark.cli import main

    taken = tmp_path / "bundle.json"
    taken.write_text("mine", encoding="utf-8")
    assert main(["diagnostics", "--out", str(taken), "--json"]) == 1
    err = json.loads(capsys.readouterr().out)
    assert err["code"] == "conflict" and str(taken) in err["message"]
    assert taken.read_text(encoding="utf-8") == "mine"


def test_a_new_file_has_16_kb_pages_and_compact_moves_an_older_one_over(repo):
    """A vector row fits twice in a 4 KB page (400 bytes a record unused), ten times in
    16 KB. `waymark compact`, run as a person runs it, rebuilds an older file at 16 KB with
    every memory kept; while another process has the file open it keeps the pages it has."""
    import json
    import subprocess
    import sys

    from waymark.memories import store
    from waymark.memories.draft import make_draft
    from waymark.projects.resolve import resolve

    path = home.db_path()
    home.ensure_home()
    old = apsw.Connection(path)  # an older Waymark's file: 4 KB pages, WAL
    old.execute("PRAGMA page_size = 4096")
    old.execute("PRAGMA journal_mode = WAL")
    old.close()
    conn = db.connect()
    assert conn.execute("PRAGMA page_size").fetchone()[0] == 4096
    project = resolve(conn, str(repo))
    ids = [store.remember(conn, project, make_draft(project, type="fact",
                                                    content=f"fact {i} about the build")).memory.id
           for i in range(50)]  # fmt: skip

    def compact() -> dict:
        done = subprocess.run([sys.executable, "-m", "waymark", "compact", "--json"], cwd=repo,
                              capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert compact()["bytes_after"] > 0  # `conn` is open: the pages stay as they are
    assert conn.execute("PRAGMA page_size").fetchone()[0] == 4096
    conn.close()
    assert compact()["bytes_after"] > 0
    conn = db.connect()
    assert conn.execute("PRAGMA page_size").fetchone()[0] == db.PAGE_SIZE == 16384
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    kept = {r[0] for r in conn.execute("SELECT id FROM memories")}
    assert kept == set(ids)
    conn.close()
    other = str(home.db_path()) + ".new"
    fresh = db.connect(other)
    assert fresh.execute("PRAGMA page_size").fetchone()[0] == 16384
    fresh.close()


def test_a_store_a_hook_creates_is_its_file_alone_not_a_log_of_its_schema(repo, waymark_home):
    """The first SessionStart creates the store on a connection that skips the checkpoint
    on close: its whole schema (2 MB) was left in the write-ahead log. It is moved into the
    file as the store is created."""
    import json
    import subprocess
    import sys

    from waymark.base import launch

    payload = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart",
               "source": "startup"}  # fmt: skip
    done = subprocess.run(launch.argv(sys.executable, "session_start", "claude-code"),
                          input=json.dumps(payload).encode(), capture_output=True, timeout=60)  # fmt: skip
    assert done.returncode == 0
    path = home.db_path()
    wal = path + "-wal"
    assert os.path.getsize(path) > 1_000_000  # the schema is in the file
    assert not os.path.exists(wal) or os.path.getsize(wal) < 256 * 1024


def test_a_memory_is_indexed_as_written_and_a_store_from_before_keeps_its_index(repo):
    """The index row is written beside each memory (no trigger: FTS5 wrote a segment at
    each trigger's savepoint); a store whose trigger wrote its rows keeps them (an import's
    rows: test_portable)."""
    from waymark.memories import store
    from waymark.memories.draft import make_draft
    from waymark.projects.resolve import resolve

    older = db.connect(migrate=False)
    db.apply_migrations(older, stop_before=49)  # the insert trigger still there
    store.remember(
        older,
        resolve(older, str(repo)),
        make_draft(resolve(older, str(repo)), type="note", content="Ledger totals round half even"),
    )
    older.close()
    conn = db.connect()
    store.remember(
        conn,
        resolve(conn, str(repo)),
        make_draft(resolve(conn, str(repo)), type="note", content="Invoices close at midnight UTC"),
    )
    unindexed = (
        "SELECT count(*) FROM memories WHERE rowid NOT IN (SELECT id FROM memories_fts_docsize)"
    )
    assert conn.execute(unindexed).fetchone()[0] == 0
    for word in ("ledger", "invoices", "midnight", "even"):
        found = conn.execute(
            "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (word,)
        )
        assert found.fetchone()[0] == 1, word
