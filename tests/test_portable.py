"""Exports and full-fidelity imports: real files, real data homes, every kind of row."""

from __future__ import annotations

import io
import json
import os
import re
import stat

import pytest

from waymark import settings
from waymark.base import clock
from waymark.cli import main
from waymark.data import portable
from waymark.errors import DigestMismatch, ImportConflict, SchemaTooNew
from waymark.handoff import checkpoints
from waymark.handoff import revision as handoff
from waymark.memories import links, store
from waymark.memories.draft import make_draft
from waymark.projects import capture
from waymark.projects.resolve import resolve
from waymark.storage import connection as db
from waymark.storage import migrations, tables


def note(conn, project, content, **fields):
    draft = make_draft(project, type=fields.pop("type", "fact"), content=content, **fields)
    return store.remember(conn, project, draft).memory


@pytest.fixture
def rich(conn, repo):
    """A data home with every kind of row an export must carry."""
    project = resolve(conn, str(repo))
    notes = resolve(conn, "notes")
    kept = note(
        conn,
        project,
        "apsw everywhere",
        type="decision",
        title="Use apsw",
        tags=["db", "storage"],
        scope="file",
        target="src/pkg/core.py",
        evidence=[{"path": "README.md", "note": "why"}],
        priority=3,
        pinned=True,
    )
    first = note(conn, project, "tabs for indentation", type="convention")
    second = store.supersede(
        conn, project, first.id, make_draft(project, type="convention", content="spaces")
    ).memory
    third = store.supersede(
        conn, project, second.id, make_draft(project, type="convention", content="4 spaces")
    ).memory
    archived = note(conn, project, "a temporary workaround")
    store.archive(conn, project, archived.id, reason="fixed upstream")
    erased = note(conn, project, "a customer name was here")
    store.erase(conn, project, erased.id, reason="contained a customer name")
    shared = note(conn, project, "always run ruff", type="preference", scope="global")
    note(conn, notes, "Alice likes tea", key="alice")
    links.relate(conn, project, kept.id, third.id, "related")
    links.relate(conn, project, kept.id, shared.id, "depends_on")
    cp = checkpoints.create(conn, project, {"objective": "Add retry", "next_action": "wire it"})
    cp = checkpoints.revise(conn, project, cp.id, cp.revision.id, {"progress": ["backoff done"]})
    cp = checkpoints.revise(
        conn, project, cp.id, cp.revision.id, {"lessons": ["retry only idempotent calls"]},
        operation="record_lesson",
    )  # fmt: skip
    cp = checkpoints.revise(conn, project, cp.id, cp.revision.id, {}, operation="complete")
    settings.set_value(conn, "recall.half_life_days", 30.0)
    capture.set_enabled(conn, project, True)
    with db.write(conn):
        conn.execute(
            "INSERT INTO handoff_markers (project_id, session_id, reason, created_at)"
            " VALUES (?, 's1', 'files changed', ?)",
            (project.id, clock.now()),
        )
        conn.execute(
            "INSERT INTO memory_use (memory_rowid, uses, last_used)"
            " SELECT rowid, 3, ? FROM memories WHERE id = ?",
            (clock.now(), kept.id),
        )
        conn.execute(
            "INSERT INTO sessions (id, client, project_id, started_at) VALUES ('s1', 'codex', ?, ?)",
            (project.id, clock.now()),
        )
        conn.execute(
            "INSERT INTO session_ledger (session_id, at, kind, path) VALUES ('s1', ?, 'edit', 'a.py')",
            (clock.now(),),
        )
        conn.execute(
            "INSERT INTO session_injected (session_id, memory_id) VALUES ('s1', ?)", (kept.id,)
        )
    return {
        "project": project,
        "notes": notes,
        "kept": kept,
        "chain": [first.id, second.id, third.id],
        "archived": archived.id,
        "erased": erased.id,
        "checkpoint": cp,
    }


def data_lines(path) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()[1:]


def move_home(monkeypatch, tmp_path, name):
    monkeypatch.setenv("WAYMARK_HOME", str(tmp_path / name))
    return db.connect()


def count(conn, table: str) -> int:
    return int(db.scalar(conn, f"SELECT count(*) FROM {table}"))


def test_export_import_into_an_empty_home_then_export_gives_the_same_digest(
    rich, conn, tmp_path, monkeypatch
):
    first = portable.write_export(conn, str(tmp_path / "a.jsonl"))
    rows = first["rows"]
    assert rows["memories"] == 8 and rows["checkpoint_revisions"] == 4 and rows["links"] == 2
    assert all(rows[t] for t in ("projects", "events", "settings", "memory_use", "sessions"))
    conn.close()
    other = move_home(monkeypatch, tmp_path, "other")
    with open(tmp_path / "a.jsonl", encoding="utf-8") as f:
        report = portable.import_export(other, f)
    assert report["total_inserted"] == sum(rows.values()) and report["total_unchanged"] == 0
    second = portable.write_export(other, str(tmp_path / "b.jsonl"))
    assert second["digest"] == first["digest"]
    assert data_lines(tmp_path / "b.jsonl") == data_lines(tmp_path / "a.jsonl")
    # The imported rows work: statuses, chains, checkpoints, the lexical index.
    statuses = {r[0] for r in other.execute("SELECT status FROM memories")}
    assert statuses == {"active", "superseded", "archived", "erased"}
    assert [m.id for m in store.history(other, rich["chain"][0])] == rich["chain"]
    cp = checkpoints.get(other, rich["project"], rich["checkpoint"].id)
    assert cp.status == "completed" and cp.revision.seq == 4
    assert len(checkpoints.revisions(other, cp.id)) == 4
    hit = other.execute(
        "SELECT m.id FROM memories_fts f JOIN memories m ON m.rowid = f.rowid"
        " WHERE memories_fts MATCH 'apsw'"
    ).fetchall()
    assert hit == [(rich["kept"].id,)]
    unindexed = (
        "SELECT count(*) FROM memories WHERE rowid NOT IN (SELECT id FROM memories_fts_docsize)"
    )
    assert other.execute(unindexed).fetchone()[0] == 0
    erased = store.get(other, rich["erased"])
    assert erased.content == "" and erased.erased_reason == "contained a customer name"
    assert settings.get(other, "recall.half_life_days") == 30.0


def test_importing_the_same_export_twice_is_a_no_op(rich, conn, tmp_path, monkeypatch):
    path = tmp_path / "a.jsonl"
    exported = portable.write_export(conn, str(path))
    # Into the home it came from: everything is already here.
    with open(path, encoding="utf-8") as f:
        again = portable.import_export(conn, f)
    assert again["total_inserted"] == 0 and again["total_unchanged"] == sum(
        exported["rows"].values()
    )
    conn.close()
    other = move_home(monkeypatch, tmp_path, "other")
    for _ in range(2):
        with open(path, encoding="utf-8") as f:
            report = portable.import_export(other, f)
    assert report["total_inserted"] == 0
    assert count(other, "events") == exported["rows"]["events"]
    assert count(other, "session_ledger") == exported["rows"]["session_ledger"]


def tamper(path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: tamper(p, "apsw everywhere", "sqlite3 everywhere"),
        lambda p: p.write_text(
            "\n".join(p.read_text(encoding="utf-8").splitlines()[:-1]) + "\n", encoding="utf-8"
        ),
        lambda p: p.write_text(
            "\n".join(p.read_text(encoding="utf-8").splitlines()[:-2]) + "\n", encoding="utf-8"
        ),
        lambda p: p.write_text(
            p.read_text(encoding="utf-8") + '{"table":"settings","row":{"key":"k","value":"1"}}\n',
            encoding="utf-8",
        ),
    ],
    ids=["changed", "no-digest", "truncated", "appended"],
)
def test_a_tampered_export_is_refused_and_nothing_is_written(
    rich, conn, tmp_path, monkeypatch, damage
):
    path = tmp_path / "a.jsonl"
    portable.write_export(conn, str(path))
    damage(path)
    conn.close()
    other = move_home(monkeypatch, tmp_path, "other")
    with pytest.raises(DigestMismatch) as err, open(path, encoding="utf-8") as f:
        portable.import_export(other, f)
    assert err.value.code == "digest_mismatch" and "nothing was imported" in err.value.message
    assert count(other, "memories") == count(other, "projects") == count(other, "events") == 0


def test_a_conflicting_import_is_refused_and_changes_nothing(rich, conn, tmp_path, monkeypatch):
    portable.write_export(conn, str(tmp_path / "before.jsonl"))
    store.archive(conn, rich["project"], rich["kept"].id)
    added = note(conn, rich["project"], "written after the first export")
    portable.write_export(conn, str(tmp_path / "after.jsonl"))
    conn.close()
    other = move_home(monkeypatch, tmp_path, "other")
    with open(tmp_path / "before.jsonl", encoding="utf-8") as f:
        portable.import_export(other, f)
    counts = {t: count(other, t) for t, _ in tables.TABLES}
    with (
        pytest.raises(ImportConflict) as err,
        open(tmp_path / "after.jsonl", encoding="utf-8") as f,
    ):
        portable.import_export(other, f)
    conflicts = err.value.details["conflicts"]
    assert err.value.code == "import_conflict" and "nothing was imported" in err.value.message
    mine = [c for c in conflicts if c["table"] == "memories"]
    assert mine == [
        {"table": "memories", "key": {"id": rich["kept"].id}, "fields": ["status", "updated_at"]}
    ]
    assert rich["kept"].id in err.value.message
    assert {t: count(other, t) for t, _ in tables.TABLES} == counts
    assert store.get(other, rich["kept"].id).status == "active"
    assert db.scalar(other, "SELECT count(*) FROM memories WHERE id = ?", (added.id,)) == 0


def test_a_project_name_taken_by_another_project_is_a_conflict(rich, conn, tmp_path, monkeypatch):
    portable.write_export(conn, str(tmp_path / "a.jsonl"))
    conn.close()
    other = move_home(monkeypatch, tmp_path, "other")
    resolve(other, "notes")  # same name, a different id
    with pytest.raises(ImportConflict) as err, open(tmp_path / "a.jsonl", encoding="utf-8") as f:
        portable.import_export(other, f)
    assert "'notes'" in err.value.message
    assert count(other, "memories") == 0 and count(other, "projects") == 1


def test_an_export_from_a_newer_waymark_is_refused(rich, conn, tmp_path):
    path = tmp_path / "a.jsonl"
    portable.write_export(conn, str(path))
    head = migrations.SCHEMA_VERSION
    tamper(path, f'"schema_version":{head}', f'"schema_version":{head + 1}')
    with pytest.raises(SchemaTooNew), open(path, encoding="utf-8") as f:
        portable.import_export(conn, f)


def test_a_project_export_holds_its_rows_and_the_global_ones(rich, conn, tmp_path, monkeypatch):
    data = portable.write_export(conn, str(tmp_path / "p.jsonl"), rich["notes"].id)
    lines = [json.loads(line) for line in data_lines(tmp_path / "p.jsonl")[:-1]]
    memories = [r["row"] for r in lines if r["table"] == "memories"]
    assert {m["project_id"] for m in memories} == {rich["notes"].id, None}
    assert [r["row"]["id"] for r in lines if r["table"] == "projects"] == [rich["notes"].id]
    assert not [r for r in lines if r["table"] in ("settings", "checkpoints", "links")]
    conn.close()
    other = move_home(monkeypatch, tmp_path, "other")
    with open(tmp_path / "p.jsonl", encoding="utf-8") as f:
        assert portable.import_export(other, f)["total_inserted"] == sum(data["rows"].values())


def test_every_table_is_exported_or_declared_derived(conn):
    found = {
        str(r[0])
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if not re.fullmatch(
            r"sqlite_.*|(memories|notes)_fts_(data|idx|docsize|config|content)", r[0]
        )
    }
    assert found == {t for t, _ in tables.TABLES} | set(tables.DERIVED)


def test_markdown_export_is_a_folder_a_person_can_read(rich, conn, tmp_path):
    out = tmp_path / "md"
    data = portable.export_markdown(conn, str(out))
    assert data["memories"] == 8 and data["checkpoints"] == 1
    index = (out / "MEMORY.md").read_text(encoding="utf-8")
    assert index.startswith("# Waymark memory")
    assert "## Decisions (1)" in index and "## Conventions (3)" in index
    kept = rich["kept"]
    page = out / "decision" / f"{kept.id}-use-apsw.md"
    assert f"(decision/{kept.id}-use-apsw.md)" in index
    text = page.read_text(encoding="utf-8")
    front, body = re.fullmatch(r"---\n(.*?)\n---\n\n(.*)", text, re.S).groups()
    meta = dict(line.split(": ", 1) for line in front.splitlines())
    assert meta["id"] == kept.id and meta["type"] == "decision" and meta["status"] == "active"
    assert meta["scope"] == "file" and meta["target"] == "src/pkg/core.py"
    assert json.loads(meta["tags"]) == ["db", "storage"] and meta["pinned"] == "true"
    assert meta["created_at"] == kept.created_at
    assert body == "# Use apsw\n\napsw everywhere\n"
    erased = next((out / "fact").glob(f"{rich['erased']}-*.md")).read_text(encoding="utf-8")
    assert "status: erased" in erased and "customer name was here" not in erased
    cp = rich["checkpoint"]
    cp_text = (out / "checkpoints" / f"{cp.id}.md").read_text(encoding="utf-8")
    assert handoff.render(cp.revision.body, status="completed") in cp_text
    assert "status: completed" in cp_text and "revisions: 4" in cp_text
    if os.name == "posix":
        assert stat.S_IMODE(os.stat(page).st_mode) == 0o600
    with pytest.raises(portable.InvalidArgument):
        portable.export_markdown(conn, str(out))  # never into an existing folder


# The CLI: exit codes and JSON shapes.


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str) -> tuple[int, dict]:
    code, out, _ = run(capsys, *argv, "--json")
    return code, json.loads(out)


def test_cli_export_then_import_elsewhere(rich, conn, capsys, tmp_path, monkeypatch):
    conn.close()
    path = str(tmp_path / "all.jsonl")
    code, data = run_json(capsys, "export", "--all", "--out", path)
    assert code == 0 and data["path"] == path and data["format"] == "jsonl"
    assert set(data) == {"path", "format", "digest", "rows", "header"}
    code, err = run_json(capsys, "export", "--all", "--out", path)
    assert code == 1 and err["code"] == "invalid_argument"  # never replaced
    monkeypatch.setenv("WAYMARK_HOME", str(tmp_path / "other"))
    code, report = run_json(capsys, "import", path)
    assert code == 0 and report["digest"] == data["digest"]
    assert report["total_inserted"] == sum(data["rows"].values())
    code, out, _ = run(capsys, "import", path)
    assert code == 0 and "0 rows new" in out
    code, err = run_json(capsys, "import", path, "--project", "notes")
    assert code == 1 and err["code"] == "invalid_argument"


def test_cli_import_refusals_have_stable_codes(rich, conn, capsys, tmp_path):
    path = tmp_path / "a.jsonl"
    portable.write_export(conn, str(path))
    store.archive(conn, rich["project"], rich["kept"].id)
    conn.close()
    code, err = run_json(capsys, "import", str(path))
    assert code == 1 and err["code"] == "import_conflict"
    assert err["details"]["conflicts"][0]["key"] == {"id": rich["kept"].id}
    tamper(path, "apsw everywhere", "apsw nowhere")
    code, err = run_json(capsys, "import", str(path))
    assert code == 1 and err["code"] == "digest_mismatch"


def test_cli_export_to_stdout_and_to_markdown(rich, conn, capsys, tmp_path, monkeypatch):
    conn.close()
    code, out, _ = run(capsys, "export", "--all", "--out", "-")
    lines = out.splitlines()
    assert code == 0 and json.loads(lines[0])["waymark_export"] == 1
    assert set(json.loads(lines[-1])) == {"digest"}
    monkeypatch.setattr("sys.stdin", io.StringIO(out))
    code, report = run_json(capsys, "import", "-")
    assert code == 0 and report["total_inserted"] == 0
    code, data = run_json(
        capsys, "export", "--all", "--format", "markdown", "--out", str(tmp_path / "md")
    )
    assert code == 0 and data["memories"] == 8 and (tmp_path / "md" / "MEMORY.md").exists()
    code, err = run_json(capsys, "export", "--all", "--project", "notes")
    assert code == 2 and err["code"] == "usage"


def test_cli_project_export_and_default_file_name(
    rich, conn, capsys, tmp_path, monkeypatch, waymark_home
):
    conn.close()
    monkeypatch.chdir(tmp_path)
    code, data = run_json(capsys, "export", "--project", "notes")
    assert code == 0 and data["header"]["scope"] == "project"
    assert data["header"]["project_id"] == rich["notes"].id
    # Never into the repository: an owner-only folder of the data home.
    assert os.path.dirname(data["path"]) == str(waymark_home / "exports")
    assert re.fullmatch(r"waymark-export-notes-\d{8}T\d{6}Z\.jsonl", os.path.basename(data["path"]))
    assert not list(tmp_path.glob("waymark-export-*"))
    again = [run_json(capsys, "export", "--project", "notes")[1]["path"] for _ in range(2)]
    assert len({data["path"], *again}) == 3  # within one second too: each its own file
    if os.name == "posix":
        assert os.stat(waymark_home / "exports").st_mode & 0o777 == 0o700
        assert os.stat(data["path"]).st_mode & 0o777 == 0o600


def test_a_plain_export_is_this_directorys_project_only(rich, conn, capsys, monkeypatch):
    conn.close()
    monkeypatch.chdir(rich["project"].root)
    code, data = run_json(capsys, "export")
    assert code == 0 and data["header"]["scope"] == "project"
    assert data["header"]["project_id"] == rich["project"].id
    code, everything = run_json(capsys, "export", "--all")
    assert code == 0 and everything["header"]["scope"] == "all"
    assert sum(everything["rows"].values()) > sum(data["rows"].values())


def test_folders_an_export_creates_are_owner_only(rich, conn, capsys, tmp_path):
    conn.close()
    out = tmp_path / "new" / "deeper" / "x.jsonl"
    code, data = run_json(capsys, "export", "--all", "--out", str(out))
    assert code == 0 and out.exists()
    if os.name == "posix":
        assert os.stat(tmp_path / "new" / "deeper").st_mode & 0o777 == 0o700
