"""Implementation evidence on memories: immutable observations a caller reports (never
certified), files hashed by Waymark, RECHECK_REQUIRED on read when a linked file changed or
vanished; memory evidence gets the same check. Library, CLI and MCP, on real files."""

from __future__ import annotations

import json
import subprocess
import sys

import apsw
import pytest

from conftest import call_tool
from waymark.errors import Conflict, InvalidArgument, InvalidScope, TargetNotFound
from waymark.memories import observations, store
from waymark.memories.draft import make_draft

SOURCE = "def refund(cents):\n    return -cents  # the body Waymark must never store\n"


@pytest.fixture
def files(repo):
    (repo / "src/pkg/refund.py").write_text(SOURCE, encoding="utf-8")
    (repo / "tests").mkdir(exist_ok=True)
    (repo / "tests/test_refund.py").write_text("def test_refund():\n    pass\n", "utf-8")
    return repo


def decision(conn, project, **kw):
    draft = make_draft(project, type="decision", content="Refunds are negative charges", **kw)
    return store.remember(conn, project, draft).memory


IMPL = {"role": "implementation", "path": "src/pkg/refund.py", "locator": "refund"}
TEST = {"role": "test", "path": "tests/test_refund.py"}


@pytest.mark.parametrize(
    ("status", "links", "note", "says"),
    [
        ("REQUESTED", [IMPL], None, "no links"),
        ("REPORTED_IMPLEMENTED", [TEST], None, "implementation link"),
        ("REPORTED_PASS", [IMPL], "pytest passed", "test link"),
        ("REPORTED_FAIL", [TEST], None, "verification note"),
        ("CERTIFIED", [], None, "unknown status"),
        ("REPORTED_IMPLEMENTED", [{"role": "code", "path": "src/pkg/refund.py"}], None, "role"),
        ("REPORTED_IMPLEMENTED", [IMPL] * 11, None, "at most 10"),
    ],
)
def test_each_status_needs_its_links_and_note_or_nothing_is_stored(
    conn, project, files, status, links, note, says
):
    memory = decision(conn, project)
    with pytest.raises(InvalidArgument, match=says):
        observations.observe(conn, project, memory.id, status, links, note)
    assert conn.execute("SELECT count(*) FROM observations").fetchone()[0] == 0


@pytest.mark.parametrize(
    ("path", "error"),
    [("../outside.py", InvalidScope), (".git/config", InvalidScope), ("nope.py", TargetNotFound)],
)
def test_links_are_existing_files_inside_the_project(conn, project, files, path, error):
    memory = decision(conn, project)
    (files / ".git").mkdir(exist_ok=True)
    (files / ".git/config").write_text("x", "utf-8")
    with pytest.raises(error):
        observations.observe(conn, project, memory.id, "REPORTED_IMPLEMENTED",
                             [{"role": "implementation", "path": path}])  # fmt: skip


def test_an_observation_is_hashed_immutable_and_holds_no_source_text(conn, project, files):
    memory = decision(conn, project)
    done = observations.observe(
        conn, project, memory.id, "REPORTED_PASS", [IMPL, TEST], "pytest -q tests/test_refund.py"
    )
    assert done["state"] == "FRESH" and done["id"].startswith("obs_")
    impl = done["links"][0]
    assert impl["role"] == "implementation" and impl["locator"] == "refund"
    assert len(impl["sha256"]) == 64 and impl["size"] == len(SOURCE)
    assert impl["state"] == "UNCHANGED"
    with pytest.raises(apsw.ConstraintError, match="immutable"):
        conn.execute("UPDATE observations SET status = 'REPORTED_FAIL'")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db_bytes = b"".join(p.read_bytes() for p in files.parent.rglob("*.db*") if p.is_file())
    assert b"the body Waymark must never store" not in db_bytes
    audit = conn.execute(
        "SELECT detail FROM events WHERE op = 'observe' AND memory_id = ?", (memory.id,)
    ).fetchone()
    assert json.loads(audit[0])["observation"] == done["id"]


def test_a_changed_vanished_or_unreadable_file_requires_a_recheck(conn, project, files):
    memory = decision(conn, project)
    big = files / "model.bin"
    big.write_bytes(b"0" * 100)
    links = [IMPL, TEST, {"role": "model", "path": "model.bin"}]
    observations.observe(conn, project, memory.id, "REPORTED_PASS", links, "ran pytest")

    def latest():
        return observations.history(conn, project, memory.id)["observations"][0]

    assert latest()["state"] == "FRESH"
    (files / "src/pkg/refund.py").write_text(SOURCE + "# edited\n", encoding="utf-8")
    (files / "tests/test_refund.py").unlink()
    big.write_bytes(b"0" * (2 * 1024 * 1024 + 1))  # over the 2 MiB a file Waymark reads
    now = latest()
    assert now["state"] == "RECHECK_REQUIRED"
    assert [link["state"] for link in now["links"]] == ["CHANGED", "MISSING", "UNKNOWN"]
    assert "2 MiB" in now["links"][2]["reason"]
    view = observations.latest(conn, project, [memory.id])[memory.id]
    assert view["state"] == "RECHECK_REQUIRED" and "src/pkg/refund.py CHANGED" in view["recheck"]
    # Refreshing is a new observation; the old one stays, as it was.
    (files / "tests/test_refund.py").write_text("def test_refund():\n    pass\n", "utf-8")
    big.write_bytes(b"1")
    observations.observe(conn, project, memory.id, "REPORTED_PASS", links, "ran pytest again")
    page = observations.history(conn, project, memory.id)
    assert page["total"] == 2 and page["observations"][0]["state"] == "FRESH"
    assert page["observations"][1]["note"] == "ran pytest"


def test_history_is_newest_first_a_page_at_a_time(conn, project, files):
    memory = decision(conn, project)
    made = [
        observations.observe(conn, project, memory.id, "REQUESTED", note=f"ask {i}")["id"]
        for i in range(5)
    ]
    first = observations.history(conn, project, memory.id, limit=2)
    assert [o["id"] for o in first["observations"]] == made[::-1][:2]
    assert first["has_more"] and first["next_offset"] == 2 and first["total"] == 5
    last = observations.history(conn, project, memory.id, limit=2, offset=4)
    assert [o["id"] for o in last["observations"]] == [made[0]] and not last["has_more"]


def test_only_an_active_memory_is_observed_and_erase_takes_observations_along(conn, project, files):
    memory = decision(conn, project)
    observations.observe(conn, project, memory.id, "REQUESTED", note="build it")
    store.archive(conn, project, memory.id)
    with pytest.raises(Conflict):
        observations.observe(conn, project, memory.id, "REQUESTED")
    store.erase(conn, project, memory.id, reason="wrong")
    assert conn.execute("SELECT count(*) FROM observations").fetchone()[0] == 0


def test_a_note_and_a_locator_are_redacted(conn, project, files):
    memory = decision(conn, project)
    secret = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    done = observations.observe(
        conn, project, memory.id, "REPORTED_PASS",
        [{**TEST, "locator": f"token={secret}"}], f"ran with OPENAI_API_KEY={secret}",
    )  # fmt: skip
    stored = conn.execute("SELECT note, links FROM observations").fetchone()
    assert secret not in stored[0] and secret not in stored[1] and done["note"] == stored[0]


def test_memory_evidence_is_hashed_when_written_and_checked_when_read(conn, project, files):
    memory = decision(conn, project, evidence=[{"path": "src/pkg/refund.py"}, {"command": "make"}])
    assert memory.evidence[0]["sha256"] and "sha256" not in memory.evidence[1]
    assert observations.evidence_state(memory, project.files) == {"state": "FRESH"}
    (files / "src/pkg/refund.py").write_text("changed\n", encoding="utf-8")
    state = observations.evidence_state(store.get(conn, memory.id), project.files)
    assert state == {"state": "RECHECK_REQUIRED", "recheck": ["src/pkg/refund.py CHANGED"]}
    given = make_draft(project, type="fact", content="x",
                       evidence=[{"path": "src/pkg/refund.py", "sha256": "0" * 64}])  # fmt: skip
    assert given.evidence[0]["sha256"] != "0" * 64  # a caller's hash is never trusted


def cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "waymark", *args], cwd=cwd, capture_output=True, text=True
    )


def test_the_cli_observes_lists_and_shows_the_latest_with_its_freshness(conn, enabled, files):
    cwd = str(files)
    memory = decision(conn, enabled)
    done = cli("observe", memory.id, "--status", "REPORTED_PASS", "--link",
               "test:tests/test_refund.py#test_refund", "--link", "implementation:src/pkg/refund.py",
               "--note", "pytest -q passed", "--json", cwd=cwd)  # fmt: skip
    assert done.returncode == 0, done.stderr
    made = json.loads(done.stdout)
    assert made["state"] == "FRESH" and made["links"][0]["locator"] == "test_refund"
    (files / "src/pkg/refund.py").write_text("changed\n", encoding="utf-8")
    shown = cli("show", memory.id, cwd=cwd).stdout
    assert "observation: REPORTED_PASS" in shown and "RECHECK_REQUIRED" in shown
    assert "src/pkg/refund.py CHANGED" in shown
    recalled = cli("recall", "refunds negative charges", "--lexical", cwd=cwd).stdout
    assert "[REPORTED_PASS, RECHECK_REQUIRED]" in recalled.splitlines()[0]
    found = json.loads(cli("recall", "refunds negative charges", "--json", cwd=cwd).stdout)
    assert found["results"][0]["observation"]["recheck"] == ["src/pkg/refund.py CHANGED"]
    listed = json.loads(cli("observations", memory.id, "--limit", "1", "--json", cwd=cwd).stdout)
    assert listed["total"] == 1 and listed["observations"][0]["state"] == "RECHECK_REQUIRED"
    text = cli("observations", memory.id, cwd=cwd).stdout
    assert made["id"] in text and "REPORTED_PASS" in text and "CHANGED" in text
    bad = cli("observe", memory.id, "--status", "REPORTED_PASS", "--link",
              "test:tests/test_refund.py", "--json", cwd=cwd)  # fmt: skip
    assert bad.returncode != 0 and json.loads(bad.stdout)["code"] == "invalid_argument"
    bad_link = cli("observe", memory.id, "--status", "REPORTED_IMPLEMENTED", "--link",
                   "src/pkg/refund.py", cwd=cwd)  # fmt: skip
    assert bad_link.returncode != 0 and "ROLE:PATH" in bad_link.stderr


def test_the_mcp_tools_observe_recall_and_page_observations(conn, enabled, files):
    memory = decision(conn, enabled, evidence=[{"path": "src/pkg/refund.py"}])
    done = call_tool(files, "remember", {"supersedes": memory.id, "observe": {
        "status": "REPORTED_IMPLEMENTED", "links": [IMPL]}})  # fmt: skip
    assert not done.is_error, done.content
    observed = done.structured_content["observation"]
    assert observed["status"] == "REPORTED_IMPLEMENTED" and observed["state"] == "FRESH"
    assert store.get(conn, memory.id).status == "active"  # observing supersedes nothing
    (files / "src/pkg/refund.py").write_text("changed\n", encoding="utf-8")
    found = call_tool(
        files, "recall", {"query": "refunds negative charges", "include_session": False}
    ).structured_content
    hit = found["results"][0]
    assert hit["id"] == memory.id
    assert hit["observation"]["state"] == "RECHECK_REQUIRED"
    assert hit["evidence_state"]["state"] == "RECHECK_REQUIRED"
    page = call_tool(files, "recall", {"id": memory.id}).structured_content
    assert page["observations"][0]["id"] == observed["id"] and page["observations_total"] == 1
    later = call_tool(files, "recall", {"id": memory.id, "offset": 1}).structured_content
    assert later["observations"] == []
    bad = call_tool(files, "remember", {"supersedes": memory.id, "observe": {
        "status": "REPORTED_PASS", "links": [TEST]}})  # fmt: skip
    assert bad.is_error and "verification note" in bad.content[0].text
