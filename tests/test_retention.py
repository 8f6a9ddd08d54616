"""Retention: a sweep archives what expired or went unused with low salience, purges what
stayed archived, keeps what is exempt, and does nothing unless asked or scheduled."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from waymark import settings
from waymark.base import clock
from waymark.curation import retention
from waymark.errors import InvalidArgument
from waymark.memories import observations, store
from waymark.memories.draft import make_draft
from waymark.recall import ranked
from waymark.storage import connection as db
from waymark.storage.events import count_use

DAY = 86400.0


def saved(conn, project, content, **kw):
    kw.setdefault("type", "lesson")
    return store.remember(conn, project, make_draft(project, content=content, **kw)).memory


def later(days: float) -> float:
    return time.time() + days * DAY


def ids(entries) -> set[str]:
    return {e["id"] for e in entries}


def test_salience_is_remem_mcps_formula():
    assert retention.salience(0, 0, 0, 90) == pytest.approx(1.0)
    assert retention.salience(90, 0, 90, 90) == pytest.approx(0.5)
    used = retention.salience(90, 3, 30, 90)  # 0.5 + 0.5 * ln 4 * 0.5
    assert used == pytest.approx(0.5 + 0.25 * 1.3862944, rel=1e-6)


def test_a_sweep_plans_archives_for_the_unused_and_expired_and_keeps_the_exempt(
    conn, project, repo
):
    (repo / "docs").mkdir()
    (repo / "docs" / "deploy.md").write_text("how we deploy\n")
    stale = saved(conn, project, "The old staging box needs a manual restart")
    used = saved(conn, project, "Retry the flaky webhook test once before digging")
    expiring = saved(conn, project, "Freeze merges until the audit", pinned=True,
                     valid_until="2027-01-15")  # fmt: skip
    kept = [
        saved(conn, project, "Money is integer cents", type="convention"),
        saved(conn, project, "We chose apsw over sqlite3", type="decision"),
        saved(conn, project, "Never log payloads", pinned=True),
        saved(conn, project, "Ping #ops before deploys", priority=3),
        saved(conn, project, "The CDN caches 5 minutes", tags=["verified"]),
        saved(
            conn, project, "Deploys follow docs/deploy.md", evidence=[{"path": "docs/deploy.md"}]
        ),
    ]
    (repo / "docs" / "old.md").write_text("the old runbook\n")
    gone_evidence = saved(conn, project, "See the old runbook", evidence=[{"path": "docs/old.md"}])
    (repo / "docs" / "old.md").unlink()  # its evidence is gone since
    passing = saved(conn, project, "The deploy script retries twice")
    observations.observe(conn, project, passing.id, "REPORTED_PASS",
                         [{"role": "test", "path": "docs/deploy.md"}], "ran it")  # fmt: skip
    asked = saved(conn, project, "Someone should script the rollback")
    observations.observe(conn, project, asked.id, "REQUESTED", note="not built yet")
    with db.write(conn):
        count_use(conn, [used.id], clock.second(later(250)))  # used recently, in that future
    found = retention.plan(conn, project, now=later(300))
    assert ids(found["archive"]) == {stale.id, expiring.id, gone_evidence.id, asked.id}
    why = {e["id"]: e["why"] for e in found["archive"]}
    assert why[expiring.id] == "expired on 2027-01-15"
    assert why[stale.id].startswith("unused for 300 days, salience 0.")
    assert found["kept"] == {"a convention": 1, "a decision": 1, "pinned": 1,
                             "raised priority": 1, "verified": 1, "fresh evidence": 1,
                             "reported implemented or passing": 1}  # fmt: skip
    assert found["purge"] == []
    assert not ids(found["archive"]) & {m.id for m in kept}
    assert retention.plan(conn, project)["archive"] == []  # today nothing is due


def test_the_sweep_archives_reversibly_then_purges_to_a_tombstone(conn, project):
    stale = saved(conn, project, "The old staging box needs a manual restart")
    before = retention.plan(conn, project, now=later(300))
    assert store.get(conn, stale.id).status == "active"  # a plan changes nothing
    done = retention.sweep(conn, project, now=later(300))
    assert ids(done["archive"]) == ids(before["archive"]) == {stale.id}
    assert store.get(conn, stale.id).status == "archived"
    assert ranked.recall(conn, project, "staging box restart") == []
    ops = [r[0] for r in conn.execute("SELECT op FROM events ORDER BY seq")]
    assert ops[-2:] == ["archive", "sweep"]
    reason = conn.execute(
        "SELECT detail FROM events WHERE op = 'archive' AND memory_id = ?", (stale.id,)
    ).fetchone()[0]
    assert "sweep: unused for 300 days" in json.loads(reason)["reason"]
    assert store.unarchive(conn, project, stale.id).status == "active"  # reversible
    retention.sweep(conn, project, now=later(300))
    # Archived at (real) now; 180 days on it is purged: payload gone, tombstone kept.
    purged = retention.sweep(conn, project, now=later(181))
    assert ids(purged["purge"]) == {stale.id}
    tomb = store.get(conn, stale.id)
    assert (tomb.status, tomb.content) == ("erased", "")
    assert tomb.erased_reason.startswith("sweep: archived and unused for 181 days")


def test_nothing_is_swept_unless_asked_or_scheduled(conn, project):
    assert not retention.due(conn, project)  # the default schedule is off
    settings.set_value(conn, "retention.schedule", "daily")
    assert retention.due(conn, project)
    retention.sweep(conn, project)
    assert not retention.due(conn, project)
    assert retention.due(conn, project, now=later(1.01))
    with pytest.raises(InvalidArgument):
        settings.set_value(conn, "retention.schedule", "hourly")


def test_the_mcp_server_runs_the_scheduled_sweep(conn, project, repo):
    from waymark.server.state import State

    settings.set_value(conn, "retention.schedule", "weekly")
    state = State(cwd=str(repo))
    state.start_background()
    try:
        deadline = time.monotonic() + 30
        while retention.due(conn, project) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        state.close()
        import threading

        for thread in threading.enumerate():
            if thread.name.startswith("waymark-"):
                thread.join(timeout=60)
    assert not retention.due(conn, project)
    actor = conn.execute("SELECT actor FROM events WHERE op = 'sweep'").fetchone()[0]
    assert actor == "schedule"


def cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "waymark", *args], cwd=cwd, capture_output=True, text=True
    )


def test_people_sweep_and_undo_with_unarchive(conn, project, repo):
    expired = saved(conn, project, "Use the 2025 staging cert", valid_until="2026-01-01")
    dry = cli("sweep", "--dry-run", "--json", cwd=repo)
    assert dry.returncode == 0, dry.stderr
    out = json.loads(dry.stdout)
    assert out["dry_run"] and ids(out["archive"]) == {expired.id}
    assert store.get(conn, expired.id).status == "active"
    assert "would archive 1" in cli("sweep", "--dry-run", cwd=repo).stdout
    done = cli("sweep", cwd=repo)
    assert done.returncode == 0 and "archived 1" in done.stdout and "unarchive" in done.stdout
    assert store.get(conn, expired.id).status == "archived"
    back = cli("unarchive", expired.id, "--json", cwd=repo)
    assert back.returncode == 0 and json.loads(back.stdout)["status"] == "active"
    again = cli("unarchive", expired.id, "--json", cwd=repo)
    assert again.returncode == 1 and json.loads(again.stdout)["code"] == "conflict"


def test_the_old_name_forget_still_sweeps_for_a_release_and_says_the_new_one(conn, project, repo):
    expired = saved(conn, project, "Use the 2024 staging cert", valid_until="2026-01-01")
    old = cli("forget", "--dry-run", "--json", cwd=repo)
    assert old.returncode == 0 and ids(json.loads(old.stdout)["archive"]) == {expired.id}
    assert "`forget` is now `sweep`" in old.stderr
    overview = cli("--help", cwd=repo).stdout
    assert "  sweep " in overview and "forget" not in overview
