"""The team store on a real PostgreSQL with pgvector (pgserver, started by these tests):
connecting keeps no password, the schema is versioned and an older client refuses a newer
server, a read-only role is told it only reads, and status and doctor say what they find."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

psycopg = pytest.importorskip("psycopg", reason="the team store needs psycopg (the dev extra)")
pgserver = pytest.importorskip("pgserver", reason="the tests' PostgreSQL is pgserver's")

from conftest import PASSWORD  # noqa: E402
from waymark import home  # noqa: E402
from waymark.errors import SchemaTooNew, TeamNotConnected, TeamUnreachable  # noqa: E402
from waymark.team import link  # noqa: E402
from waymark.teamstore import connection as team_db  # noqa: E402
from waymark.teamstore import migrations as team_migrations  # noqa: E402
from waymark.teamstore.migrations import SCHEMA_VERSION  # noqa: E402


def test_connect_keeps_the_store_without_a_password_and_says_how_to_supply_it(store):
    _, name, socket = store
    url = f"postgresql://alice:{PASSWORD}@/{name}?host={socket}&sslmode=disable"
    done = link.connect(url)
    assert done["writes"] is True and done["schema"] == {
        "server": SCHEMA_VERSION,
        "client": SCHEMA_VERSION,
    }
    kept = pathlib.Path(home.data_home(), link.TEAM_FILE)
    assert PASSWORD not in kept.read_text(encoding="utf-8")
    assert oct(kept.stat().st_mode & 0o777) == "0o600"
    assert PASSWORD not in json.dumps(done)
    (note,) = done["notes"]  # scram: later connections need the password from PostgreSQL's places
    assert "~/.pgpass" in note and f"{socket}:5432:{name}:alice:PASSWORD" in note
    said = link.status()
    assert said["reachable"] is False and "password" in said["why"]
    assert PASSWORD not in json.dumps(said)
    line = note.split("`")[1].replace("PASSWORD", PASSWORD)  # the line the note gives
    pgpass = pathlib.Path(home.data_home()).parent / "pgpass"
    pgpass.write_text(line + "\n", encoding="utf-8")
    pgpass.chmod(0o600)
    os.environ["PGPASSFILE"] = str(pgpass)  # one of the usual places
    try:
        said = link.status()
    finally:
        del os.environ["PGPASSFILE"]
    assert said["reachable"] is True and said["options"] == {"sslmode": "disable"}
    assert said["store"] == f"postgresql://alice@/{name}?host={socket}&sslmode=disable"


def test_the_schema_is_versioned_and_a_newer_server_is_refused(store):
    conninfo, name, _ = store
    conn = team_db.connect(conninfo, migrate=False)
    try:
        assert team_db.schema_version(conn) == 0
        team_db.apply_migrations(conn)
        team_db.apply_migrations(conn)  # once
        assert team_db.schema_version(conn) == team_migrations.SCHEMA_VERSION
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables")}
        assert {"team_memories", "team_events", "team_schema_migrations"} <= tables
        extension = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        assert extension.fetchone() is not None  # pgvector for team recall
        conn.execute(
            "INSERT INTO team_schema_migrations (name, waymark, applied_at)"
            " VALUES ('m999_from_the_future', '9.1.0', now() + interval '1 minute')"
        )
    finally:
        conn.close()
    with pytest.raises(SchemaTooNew, match="install the Waymark the rest of the team runs") as err:
        team_db.connect(conninfo)
    assert "(Waymark 9.1.0 or later)" in err.value.message and err.value.details["needs"] == "9.1.0"


def test_a_read_only_role_is_told_it_only_reads(store):
    conninfo, name, socket = store
    team_db.connect(conninfo).close()  # the owner creates the schema
    with psycopg.connect(conninfo, autocommit=True) as c:
        c.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
    done = link.connect(f"postgresql://reader@/{name}?host={socket}")
    assert done["writes"] is False and done["notes"] == []


def test_a_read_only_role_cannot_create_the_schema_and_is_told_why(store):
    _, name, socket = store
    with pytest.raises(TeamUnreachable, match="may not create the team store's schema"):
        link.connect(f"postgresql://reader@/{name}?host={socket}")
    assert not pathlib.Path(home.data_home(), link.TEAM_FILE).exists()  # nothing kept


def test_an_unreachable_store_changes_nothing_and_says_why(tmp_path):
    with pytest.raises(TeamUnreachable, match="cannot reach the team store"):
        link.connect(f"postgresql://nobody@/db?host={tmp_path}&connect_timeout=2")
    assert link.configured() is None
    with pytest.raises(TeamNotConnected):
        link.disconnect()


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "waymark", *args], capture_output=True,
                          text=True, timeout=60, env=env)  # fmt: skip


def test_the_cli_connects_shows_and_disconnects(store, repo):
    conninfo, name, socket = store
    url = f"postgresql://postgres@/{name}?host={socket}"
    done = _cli("team", "connect", url, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["schema"]["server"] == team_migrations.SCHEMA_VERSION
    status = _cli("team", "status")
    assert status.returncode == 0 and f"team store  {url}" in status.stdout
    assert "reachable   yes" in status.stdout and "writes      yes" in status.stdout
    doctor = _cli("doctor", "--json")
    (team,) = [f for f in json.loads(doctor.stdout)["findings"] if f["check"] == "team store"]
    assert team["status"] == "ok" and f"schema {SCHEMA_VERSION}" in team["detail"]
    gone = _cli("team", "disconnect")
    assert gone.returncode == 0 and "every local memory stays" in gone.stdout
    again = _cli("--json", "team", "disconnect")
    assert again.returncode == 1 and json.loads(again.stdout)["code"] == "team_not_connected"
    env = {**os.environ, "WAYMARK_TEAM_URL": url}
    assert "(from WAYMARK_TEAM_URL)" in _cli("team", "status", env=env).stdout
    with psycopg.connect(conninfo, autocommit=True) as c:  # a newer Waymark migrated it
        c.execute("INSERT INTO team_schema_migrations (name, waymark, applied_at)"
                  " VALUES ('m999_from_the_future', '9.1.0', now())")  # fmt: skip
    newer = _cli("team", "status", env=env)
    assert "writes      no: the server's schema is newer" in newer.stdout
    facts = json.loads(_cli("team", "status", "--json", env=env).stdout)
    assert facts["writes"] is False


def test_a_bad_url_is_a_clear_error():
    done = _cli("team", "connect", "postgresql://a:b@host:notaport/db", "--json")
    assert done.returncode == 1 and json.loads(done.stdout)["code"] in (
        "invalid_argument", "team_unreachable",
    )  # fmt: skip
    assert "b@" not in done.stdout
