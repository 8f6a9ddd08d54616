"""Agents at once across machines: claims travel through the team store on a real
PostgreSQL (two data homes, two checkouts) with the same rules as on one machine."""

from __future__ import annotations

import json

import pytest

from test_team_sync import Machine

pytest.importorskip("psycopg", reason="the team store needs psycopg (the dev extra)")


@pytest.fixture
def pair(store, tmp_path):
    conninfo, _, _ = store
    return [Machine(tmp_path, name, conninfo) for name in ("ann", "bob")]


def _task(machine, objective):
    return next(t for t in machine.json("task")["tasks"] if t["objective"] == objective)


def test_two_machines_claim_one_task_through_the_team_store(pair):
    ann, bob = pair
    made = ann.json("checkpoint", "create", "--objective", "Move the queue", "--open")
    ann.sync(), bob.sync()
    assert _task(bob, "Move the queue")["id"] == made["id"]

    assert ann.json("task", "claim", made["id"], "--session", "ann-session-1")
    refused = bob.run("task", "claim", made["id"], "--session", "bob-session-1", "--json")
    said = json.loads(refused.stdout)
    assert refused.returncode == 1 and said["code"] == "conflict"
    assert said["details"]["holder"] == "ann-session-1" and "on machine" in said["message"]
    assert _task(bob, "Move the queue")["claim"]["state"] == "open"  # nothing taken here

    # a sync brings ann's claim to bob's board, by name, as a local agent's
    bob.sync()
    seen = _task(bob, "Move the queue")["claim"]
    assert seen["state"] == "held" and seen["session"] == "ann-session-1" and seen["remote"]

    # ann hands it on; the next syncs open it everywhere, and bob takes it
    ann.json("task", "release", made["id"], "--session", "ann-session-1", "--next-action",
             "benchmark the consumer")  # fmt: skip
    ann.sync(), bob.sync()
    assert _task(bob, "Move the queue")["claim"]["state"] == "open"
    taken = bob.json("task", "claim", made["id"], "--session", "bob-session-1")
    assert taken["claim"]["session"] == "bob-session-1"
    assert taken["revision"]["body"]["next_action"] == "benchmark the consumer"


def test_an_offline_claim_that_came_second_is_a_candidate_never_two_holders(pair):
    ann, bob = pair
    made = ann.json("checkpoint", "create", "--objective", "Fix the flaky login", "--open")
    ann.sync(), bob.sync()
    offline = {
        **bob.env,
        "WAYMARK_TEAM_URL": f"postgresql://x@/db?host={bob.home}&connect_timeout=2",
    }
    took = bob.run("task", "claim", made["id"], "--session", "bob-train", "--json", env=offline)
    assert took.returncode == 0, took.stdout  # the store is out of reach: the local claim
    ann.json("task", "claim", made["id"], "--session", "ann-desk")  # the store gives it to ann
    report = bob.sync()
    assert report["claims_refused"] == 1 and report["conflicts"] >= 1
    waiting = bob.json("candidates", "--kind", "conflict")["results"]
    assert len(waiting) == 1 and waiting[0]["action"] == "claim"
    assert "bob-trai" in waiting[0]["reason"] and "ann-desk" in waiting[0]["reason"]
    assert bob.sync()["claims_refused"] == 0  # said once
    # approving gives it up on bob's machine; the next sync shows ann's claim there
    done = bob.run("review", waiting[0]["id"], "--approve")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"this machine gives up task {made['id']}" in done.stdout
    bob.sync()
    assert _task(bob, "Fix the flaky login")["claim"]["session"] == "ann-desk"
