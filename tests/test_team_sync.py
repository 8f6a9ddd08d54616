"""`waymark sync` between three machines (three data homes and three checkouts) and one team
store on a real PostgreSQL: every machine ends with every shared memory, nothing twice,
secrets never leave, a conflict is a candidate, offline writes converge later, and kill -9
in the middle of a sync loses nothing."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from conftest import git_env

pytest.importorskip("psycopg", reason="the team store needs psycopg (the dev extra)")

TOML = 'name = "shop"\n\n[team]\nshare = true\n'


class Machine:
    """One machine: its own data home and its own checkout of the shop repository."""

    def __init__(self, root, name: str, url: str):
        self.home = root / f"{name}-home"
        self.repo = root / f"{name}-repo"
        self.repo.mkdir()
        (self.repo / ".waymark.toml").write_text(TOML, encoding="utf-8")
        (self.repo / "README.md").write_text("# shop\n", encoding="utf-8")
        self.env = {**git_env(root), "WAYMARK_HOME": str(self.home)}
        self.env.pop("WAYMARK_TEAM_URL", None)
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
            subprocess.run(["git", "-C", str(self.repo), *args], check=True, env=self.env)
        assert self.run("team", "connect", url).returncode == 0

    def run(self, *args, env=None):
        return subprocess.run([sys.executable, "-m", "waymark", *args], cwd=self.repo,
                              env=env or self.env, capture_output=True, text=True, timeout=60)  # fmt: skip

    def json(self, *args):
        done = self.run(*args, "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout)

    def remember(self, text, *extra):
        return self.json("remember", "--type", "decision", "--content", text, *extra)["memory"]

    def sync(self):
        return self.json("sync")

    def active(self):
        found = self.json("list", "--limit", "100")["results"]
        return sorted(m["content"] for m in found)


@pytest.fixture
def team(store, tmp_path):
    conninfo, _, _ = store
    return [Machine(tmp_path, name, conninfo) for name in ("ann", "bob", "cyd")]


def _server_counts(conninfo):
    import psycopg

    with psycopg.connect(conninfo) as c:
        events = c.execute("SELECT count(*), count(DISTINCT event_id) FROM team_events").fetchone()
        memories = c.execute("SELECT count(*) FROM team_memories").fetchone()[0]
        text = c.execute("SELECT coalesce(string_agg(record::text, ' '), '') FROM team_memories")
        return events, memories, text.fetchone()[0]


def test_three_machines_converge_and_nothing_arrives_twice(team, store):
    ann, bob, cyd = team
    ann.remember("Money is integer cents")
    ann.remember("Refunds go through the ledger")
    bob.remember("The API listens on 8080")
    first = [m.sync() for m in (ann, bob, cyd)] + [ann.sync()]
    assert first[0]["pushed"] == 2 and first[1]["pushed"] == 1 and first[1]["applied"] == 2
    assert first[3]["applied"] == 1  # ann gets bob's
    want = ["Money is integer cents", "Refunds go through the ledger", "The API listens on 8080"]
    assert ann.active() == bob.active() == cyd.active() == want
    lag = [f for f in ann.json("doctor")["findings"] if f["check"] == "team sync"]
    assert lag and "name:shop: last sync 20" in lag[0]["detail"] and lag[0]["status"] == "ok"
    said = ann.run("team", "status").stdout
    assert (
        "this project name:shop: last sync 20" in said
        and "0 memory and checkpoint events not sent" in said
    )
    again = [m.sync() for m in (ann, bob, cyd)]
    assert all(r["pushed"] == 0 and r["applied"] == 0 for r in again)
    (events, distinct), memories, _ = _server_counts(store[0])
    assert events == distinct == 3 and memories == 3
    listed = bob.json("list")["results"]
    theirs = next(m for m in listed if m["content"] == "Money is integer cents")
    assert theirs["client"] == "team:postgres"  # authorship, stamped by the server side


def test_a_supersede_travels_and_a_double_revision_is_a_conflict(team):
    ann, bob, cyd = team
    base = ann.remember("Deploys need the VPN")
    ann.sync(), bob.sync(), cyd.sync()
    ann.json("supersede", base["id"], "--content", "Deploys need the VPN and a reviewer")
    ann.sync()
    assert bob.sync()["applied"] == 1
    assert bob.active() == ["Deploys need the VPN and a reviewer"]
    # cyd revised the same memory from the same revision, before seeing ann's: ann's reached
    # the team first, so every machine goes on from it and cyd's waits for review, on cyd's
    # machine as on everyone's (no fork of the chain anywhere).
    cyd.json("supersede", base["id"], "--content", "Deploys need the VPN and a second key")
    done = cyd.sync()
    assert done["conflicts"] == 1 and cyd.active() == ["Deploys need the VPN and a reviewer"]
    (waiting,) = cyd.json("candidates", "--kind", "conflict")["results"]
    assert [c["candidate"] for c in done["conflicted"]] == [waiting["id"]]  # sync says which
    assert "a team conflict" in waiting["reason"] and base["id"] in waiting["reason"]
    assert waiting["fields"]["content"] == "Deploys need the VPN and a second key"
    said = ann.run("sync").stdout
    assert "1 conflict waits" in said and "  conflict cand_" in said and "--approve" in said
    assert "1 conflict waits for review" in ann.run("team", "status").stdout
    again = ann.run("sync").stdout  # nothing new met: nothing said to wait that was not
    assert "conflict" not in again.split("\n")[1]
    assert ann.active() == ["Deploys need the VPN and a reviewer"]
    (theirs,) = ann.json("candidates", "--kind", "conflict")["results"]
    assert theirs["fields"]["content"] == "Deploys need the VPN and a second key"

    # Approving it on one machine replaces the team's line, everywhere.
    cyd.json("review", waiting["id"], "--approve")
    cyd.sync(), ann.sync(), bob.sync()
    for machine in (ann, bob, cyd):
        assert machine.active() == ["Deploys need the VPN and a second key"]
    assert ann.json("candidates", "--kind", "conflict")["results"] == []  # settled there too


def test_what_the_redactor_flagged_never_leaves_the_machine(team, store):
    ann, bob, _ = team
    secret = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
    refused = ann.run("remember", "--content", f"the staging token is {secret}", "--json")
    error = json.loads(refused.stdout)
    assert refused.returncode == 1 and error["code"] == "secret_refused"
    assert "--personal" in error["message"] and ann.active() == []  # nothing saved
    for line in ("E   db.internal:5432:orders:app:Pg#6oukfbH0bu7F",  # a .pgpass line, mid-line
                 "event:root:$6$xyzsalt$Q3pP8fQ1.Jd1m0bAaG9N8q8h1kqYk1eX7w0",
                 "heroku api key: 6f1d2c3b-4a5e-6f70-8192-a3b4c5d6e7f8"):  # fmt: skip
        refused = ann.run("remember", "--content", line, "--json")
        assert refused.returncode == 1, line
        assert json.loads(refused.stdout)["code"] == "secret_refused", line
    ann.remember(f"my staging token is {secret}", "--personal")  # kept here, redacted
    (ann.repo / ".waymark.toml").write_text('name = "shop"\n', encoding="utf-8")
    ann.remember(f"written before sharing: {secret}")  # stored redacted, locally
    (ann.repo / ".waymark.toml").write_text(TOML, encoding="utf-8")
    ann.remember("Staging resets nightly")
    done = ann.sync()
    assert (done["pushed"], done["blocked"], done["personal"]) == (1, 1, 1)
    assert (
        "REDACTED" not in _server_counts(store[0])[2] and secret not in _server_counts(store[0])[2]
    )
    bob.sync()
    assert bob.active() == ["Staging resets nightly"]


def test_a_push_scans_again_only_what_this_redactor_has_not_cleared(team, store, monkeypatch):
    """A memory is stamped when written (the redactor found nothing in what it would share),
    and a push checks the stamp instead of scanning it again. A revision whose text is not
    what was stamped (here: changed under the store, as an older redactor's pass would have
    left it), or that has no stamp (written before stamps), is scanned and held back."""
    from waymark.base import redact
    from waymark.projects.resolve import resolve
    from waymark.storage import connection as db
    from waymark.team import sync

    ann, bob, _ = team
    kept = ann.remember("Staging resets nightly")
    stale = ann.remember("The deploy key rotates monthly")
    unstamped = ann.remember("Builds run on the big runner")
    secret = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
    monkeypatch.setenv("WAYMARK_HOME", str(ann.home))
    conn = db.connect()
    stamps = dict(conn.execute("SELECT id, cleared FROM memories"))
    assert all(stamps[m["id"]] for m in (kept, stale, unstamped))
    conn.execute("UPDATE memories SET content = ? WHERE id = ?",
                 (f"the deploy key is {secret}", stale["id"]))  # fmt: skip
    conn.execute("UPDATE memories SET content = ?, cleared = NULL WHERE id = ?",
                 (f"the runner token is {secret}", unstamped["id"]))  # fmt: skip
    scanned = []
    flagged = redact.flagged
    monkeypatch.setattr(redact, "flagged", lambda text: scanned.append(text) or flagged(text))
    done = sync.sync(conn, resolve(conn, str(ann.repo)))
    assert (done["pushed"], done["blocked"]) == (1, 2)
    assert len(scanned) == 2 and all(secret in text for text in scanned)
    assert secret not in _server_counts(store[0])[2]
    bob.sync()
    assert bob.active() == ["Staging resets nightly"]


def test_a_personal_memory_is_shared_through_review(team):
    ann, bob, _ = team
    mine = ann.remember("I keep my notes in ~/notes", "--personal")
    assert ann.sync()["personal"] == 1
    queued = ann.json("share", mine["id"])["queued"]
    assert bob.sync()["applied"] == 0  # nothing until it is approved
    assert ann.run("review", queued["id"], "--approve").returncode == 0
    assert ann.sync()["pushed"] == 1
    bob.sync()
    assert bob.active() == ["I keep my notes in ~/notes"]
    (ann.repo / ".waymark.toml").write_text(TOML + 'promote = "direct"\n', encoding="utf-8")
    direct = ann.remember("Another personal note", "--personal")
    assert ann.json("share", direct["id"])["shared"] == direct["id"]
    ann.sync(), bob.sync()
    assert "Another personal note" in bob.active()


def test_a_project_not_shared_syncs_nothing_and_says_how(team):
    ann = team[0]
    (ann.repo / ".waymark.toml").write_text('name = "shop"\n', encoding="utf-8")
    done = ann.run("sync", "--json")
    assert done.returncode == 1 and "share = true" in json.loads(done.stdout)["message"]


def test_offline_writes_wait_and_converge_when_the_store_answers(team):
    ann, bob, _ = team
    offline = {
        **ann.env,
        "WAYMARK_TEAM_URL": f"postgresql://x@/db?host={ann.home}&connect_timeout=2",
    }
    ann.remember("Written on the train")
    failed = ann.run("sync", "--json", env=offline)
    assert failed.returncode == 1 and json.loads(failed.stdout)["code"] == "team_unreachable"
    assert ann.json("sync", "--dry-run")["pushed"] == 1  # still waiting, nothing lost
    assert ann.sync()["pushed"] == 1
    bob.sync()
    assert bob.active() == ["Written on the train"]


def test_kill_9_during_sync_loses_nothing_and_duplicates_nothing(team, store):
    ann, bob, _ = team
    rng = random.Random(7)
    written, saves = [], []
    started = time.monotonic()
    for round_ in range(12):
        if time.monotonic() - started > 60:
            break
        for machine in (ann, bob):
            text = f"{machine.home.name} fact {round_}"
            machine.remember(text)
            written.append(text)
            if machine is ann:  # and ann's checkpoint moves on each round
                step = ["revise"] if round_ else ["create", "--objective", "Keep it all"]
                machine.json("checkpoint", *step, "--next-action", f"step {round_}")
                saves.append(f"step {round_}")
            process = subprocess.Popen([sys.executable, "-m", "waymark", "sync"],
                                       cwd=machine.repo, env=machine.env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
            time.sleep(rng.uniform(0.05, 0.6))
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
            process.wait()
    for _ in range(2):
        ann.sync(), bob.sync()
    assert ann.active() == bob.active() == sorted(written)
    (events, distinct), memories, _ = _server_counts(store[0])
    assert events == distinct == len(written) + len(saves) and memories == len(written)
    assert bob.json("checkpoint")["revision"]["body"]["next_action"] == saves[-1]
    import psycopg

    with psycopg.connect(store[0]) as c:
        lines = c.execute("SELECT count(*), bool_and(mainline) FROM team_checkpoint_revisions")
        assert lines.fetchone() == (len(saves), True)  # one line, no fork


def test_team_recall_searches_the_server_by_words_and_meaning(team, store):
    import psycopg

    ann, bob, _ = team
    ann.remember("Money is stored as integer cents, never floats")
    ann.remember("The deploy script retries twice before paging")
    ann.remember("Refunds are written to the ledger first")
    assert ann.run("index").returncode == 0  # vectors, which the sync sends along
    ann.sync()
    with psycopg.connect(store[0]) as c:
        assert c.execute("SELECT count(embedding) FROM team_memories").fetchone()[0] == 3
    found = bob.json("recall", "integer cents", "--team")
    assert found["semantic"] is True and found["project_key"] == "name:shop"
    top = found["results"][0]
    assert top["memory"]["content"].startswith("Money is stored") and top["author"] == "postgres"
    lexical = bob.json("recall", "ledger refunds", "--team", "--lexical")
    assert lexical["semantic"] is False
    assert [r["memory"]["content"] for r in lexical["results"]] == [
        "Refunds are written to the ledger first"
    ]
    text = bob.run("recall", "deploy", "--team").stdout
    assert "postgres: The deploy script retries twice" in text


def test_a_pull_brings_the_senders_vectors_so_nothing_is_embedded_again(team, store):
    """The receiving machine stores the sender's vectors (the team's one model) as current
    for the text it would embed: `waymark index` then has nothing to do, and local recall
    finds the pulled memory by meaning at once."""
    ann, bob, _ = team
    ann.remember("Money is stored as integer cents, never floats")
    ann.remember("The deploy script retries twice before paging")
    assert ann.run("index").returncode == 0
    ann.sync()
    pulled = bob.sync()
    assert pulled["applied"] == 2 and pulled["vectors"] == 2
    indexed = bob.json("index")
    assert indexed["embedded"] == 0 and indexed["skipped"] == 2  # current already
    import apsw

    here = apsw.Connection(str(bob.home / "waymark.db"))
    there = apsw.Connection(str(ann.home / "waymark.db"))
    query = "SELECT m.id, v.vector FROM vectors v JOIN memories m ON m.rowid = v.memory_rowid"
    assert dict(here.execute(query).fetchall()) == dict(there.execute(query).fetchall())
    found = bob.json("recall", "how are amounts of money kept?")
    assert found["semantic"] is True
    assert found["results"][0]["memory"]["content"].startswith("Money is stored")


def test_the_mcp_server_syncs_on_the_schedule_the_user_sets(team):
    ann, bob, _ = team
    assert ann.run("config", "team.sync_minutes", "0.05").returncode == 0  # every 3 seconds
    ann.remember("Synced by the server, not by hand")
    server = subprocess.Popen([sys.executable, "-m", "waymark", "mcp"], cwd=ann.repo,
                              env=ann.env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            bob.sync()
            if bob.active() == ["Synced by the server, not by hand"]:
                break
            time.sleep(1)
        assert bob.active() == ["Synced by the server, not by hand"]
        assert "checkpoint events not sent" in ann.run("team", "status").stdout
    finally:
        server.stdin.close()
        assert server.wait(timeout=20) == 0  # and it stops at end of input, as before


def test_the_mcp_recall_tool_searches_the_team_store_with_team(team, monkeypatch):
    import asyncio

    from mcp import Client  # the SDK's in-memory client, as test_server uses

    from waymark.server.app import build_server
    from waymark.server.state import State

    ann, bob, _ = team
    ann.remember("Invoices are numbered per tenant")
    ann.sync(), bob.sync()  # bob's project exists once it has synced
    monkeypatch.setenv("WAYMARK_HOME", str(bob.home))
    monkeypatch.delenv("WAYMARK_TEAM_URL", raising=False)
    server, state = build_server(State(cwd=str(bob.repo)))

    async def go():
        async with Client(server) as client:
            return await client.call_tool("recall", {"query": "invoices tenant", "team": True})

    try:
        result = asyncio.run(go())
    finally:
        state.close()
    assert not result.is_error, result.content
    told = result.structured_content
    assert told["team"] == "name:shop" and told["results"][0]["author"] == "postgres"
    assert told["results"][0]["title"].startswith("Invoices are numbered")


def test_archiving_or_erasing_the_teams_memory_needs_team_and_says_who(team, store):
    import psycopg

    ann, bob, _ = team
    kept = ann.remember("Money is integer cents")
    gone = ann.remember("Ship on Fridays")
    ann.sync(), bob.sync()
    for args in (["archive", kept["id"]], ["erase", gone["id"], "--reason", "wrong"]):
        refused = bob.run(*args, "--json")
        error = json.loads(refused.stdout)
        assert refused.returncode == 1 and error["code"] == "team_memory", refused.stdout
        assert f"waymark {args[0]} {args[1]} --team" in error["message"]
    assert bob.active() == ["Money is integer cents", "Ship on Fridays"]  # nothing changed

    bob.json("archive", kept["id"], "--reason", "moved to the handbook", "--team")
    bob.json("erase", gone["id"], "--reason", "we ship any day now", "--team")
    bob.sync(), ann.sync()
    assert ann.active() == []
    why = ann.json("show", kept["id"])["archived"]
    assert why["actor"] == "postgres" and why["reason"] == "moved to the handbook" and why["team"]
    assert "by postgres (team, machine " in ann.run("show", kept["id"]).stdout
    assert ann.json("show", gone["id"])["status"] == "erased"
    with psycopg.connect(store[0]) as c:
        said = c.execute(
            "SELECT op, author, payload FROM team_events WHERE memory_id = %s ORDER BY seq",
            (kept["id"],),
        ).fetchall()
        assert said[-1][:2] == ("archive", "postgres")
        assert said[-1][2]["reason"] == "moved to the handbook" and said[-1][2]["team"] == "yes"
        content = c.execute(
            "SELECT content FROM team_memories WHERE id = %s", (gone["id"],)
        ).fetchone()[0]
        assert "Fridays" not in content  # erased on the server too


def test_a_sweep_and_an_agent_leave_the_teams_memories_alone(team, monkeypatch):
    from conftest import call_tool

    ann, bob, _ = team
    old = ann.remember("Use the staging bucket for fixtures")
    mine = ann.remember("My scratch note", "--personal")
    ann.sync()
    plan = ann.json("forget", "--dry-run")
    assert plan["kept"].get("the team's") == 1 and old["id"] not in json.dumps(plan["archive"])
    monkeypatch.setenv("WAYMARK_HOME", str(ann.home))
    monkeypatch.delenv("WAYMARK_TEAM_URL", raising=False)
    refused = call_tool(ann.repo, "forget", {"id": old["id"], "reason": "stale"})
    assert refused.is_error and "team_memory" in refused.content[0].text
    assert not call_tool(ann.repo, "forget", {"id": mine["id"]}).is_error  # personal: theirs
    assert ann.active() == ["Use the staging bucket for fixtures"]


def test_show_and_explain_say_who_wrote_a_team_memory(team, monkeypatch):
    from conftest import call_tool

    ann, bob, _ = team
    written = ann.remember("Invoices are numbered per tenant")
    ann.sync(), bob.sync()
    shown = bob.json("show", written["id"])
    assert shown["team"]["author"] == "postgres" and shown["team"]["machine"]
    assert "from the team: postgres on machine " in bob.run("show", written["id"]).stdout
    found = bob.json("recall", "invoices tenant", "--explain", "--lexical")["results"][0]
    assert (
        found["memory"]["id"] == written["id"] and found["explain"]["team"]["author"] == "postgres"
    )
    text = bob.run("recall", "invoices tenant", "--explain", "--lexical").stdout
    assert "from the team: postgres" in text
    assert "team" not in ann.json("show", written["id"])  # written there, not pulled
    monkeypatch.setenv("WAYMARK_HOME", str(bob.home))
    monkeypatch.delenv("WAYMARK_TEAM_URL", raising=False)
    told = call_tool(bob.repo, "recall", {"query": "invoices tenant", "explain": True})
    assert told.structured_content["results"][0]["explain"]["team"]["author"] == "postgres"


def _checkpoint(machine):
    return machine.json("checkpoint")


def test_checkpoints_travel_and_two_revisions_of_one_are_a_conflict(team):
    ann, bob, cyd = team
    made = ann.json("checkpoint", "create", "--objective", "Add retry to payments",
                    "--next-action", "wire backoff into charge()")  # fmt: skip
    ann.sync(), bob.sync()
    there = _checkpoint(bob)
    assert there["id"] == made["id"] and there["revision"]["id"] == made["revision"]["id"]
    assert there["revision"]["body"]["next_action"] == "wire backoff into charge()"

    # Both revise the same revision, offline: ann's reaches the team first.
    ann.json("checkpoint", "revise", "--next-action", "ann: add jitter")
    bob.json("checkpoint", "revise", "--next-action", "bob: cap the retries")
    ann.sync()
    sent = bob.sync()
    assert sent["conflicts"] == 1  # bob's came second: a candidate on bob's machine
    ann_sync = ann.sync()
    assert ann_sync["conflicts"] == 1  # and on ann's, naming bob's
    cyd.sync()
    for machine in (ann, bob, cyd):  # every machine goes on from the team's line
        assert _checkpoint(machine)["revision"]["body"]["next_action"] == "ann: add jitter"
    waiting = ann.json("candidates", "--kind", "conflict")["results"]
    assert len(waiting) == 1 and waiting[0]["action"] == "checkpoint"
    assert "postgres's (machine " in waiting[0]["reason"]  # who made it: the server's stamp
    assert "bob: cap the retries" in waiting[0]["fields"]["content"]

    # Approving on ann's machine puts bob's on top; every machine converges on it.
    said = ann.run("review", waiting[0]["id"], "--approve").stdout
    assert "the checkpoint goes on from it as revision" in said
    assert _checkpoint(ann)["revision"]["body"]["next_action"] == "bob: cap the retries"
    ann.sync(), bob.sync(), cyd.sync()
    for machine in (ann, bob, cyd):
        assert _checkpoint(machine)["revision"]["body"]["next_action"] == "bob: cap the retries"
        assert machine.json("candidates", "--kind", "conflict")["results"] == []  # settled
    assert bob.sync()["conflicts"] == 0 and ann.sync()["conflicts"] == 0  # nothing new


def test_the_dashboard_shows_sync_state_conflicts_who_wrote_what_and_team_or_personal(team):
    import re

    from test_web import Dashboard

    ann, bob, _ = team
    base = ann.remember("Deploys need the VPN")
    ann.sync(), bob.sync()
    ann.json("supersede", base["id"], "--content", "Deploys need the VPN and a reviewer")
    ann.sync()
    bob.json("supersede", base["id"], "--content", "Deploys need the VPN and a second key")
    assert bob.sync()["conflicts"] == 1
    mine = bob.remember("My scratch notes live in /tmp/bob", "--personal")
    pending = bob.remember("Bob decided this, not sent yet")
    board = Dashboard(bob.home, bob.repo, env=bob.env)
    try:
        client = board.client()
        page = client.get("/overview").text
        assert "<h2>Team store <small>" in page and "postgres@" in page
        assert re.search(r"last sync \d{4}-\d\d-\d\d \d\d:\d\d", page)
        assert re.search(r"<strong>[1-9]\d*</strong> events not sent yet", page)
        assert "<strong>1</strong> conflicts waiting" in page
        # who wrote the team's memories held here, counted whole from the memories (not
        # among the newest pulls): ann's revision; the first one it replaced no longer counts
        assert '<span class="author">postgres 1</span>' in page
        listed = client.get("/memories").text
        rows = dict(re.findall(r'>([^<]+)</a> <span class="badge (team|personal)"', listed))
        assert rows == {"Deploys need the VPN and a reviewer": "team",
                        mine["title"]: "personal", pending["title"]: "team"}  # fmt: skip
        assert "team ↓" in listed  # the one pulled from the store, marked as such
        (pulled,) = [m for m in bob.json("list")["results"] if "reviewer" in m["content"]]
        page = client.get(f"/memories/{pulled['id']}").text
        assert "From the team: postgres on machine" in page
        assert "it is the team's: archive it on every machine" in page
        review = client.get("/review").text
        assert "a team conflict" in review and "Deploys need the VPN and a second key" in review
    finally:
        board.stop()


def test_a_handoff_holding_a_flagged_secret_says_so_and_its_clean_revision_travels(team):
    """A checkpoint whose text the redactor flagged stays on its machine: the save itself
    says so and which fields to clean; the revision saved without it reaches the other
    machine, whose next session then has the handoff."""
    ann, bob, _ = team
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    made = ann.json("checkpoint", "create", "--objective", "Rotate the deploy key",
                    "--progress", f"old token {token} revoked", "--next-action", "update CI")  # fmt: skip
    assert "progress" in made["team"]["held_back"] and "team" in made["team"]["said"]
    text = ann.run("checkpoint", "revise", "--next-action", "update CI secrets").stdout
    assert "stays on this machine" in text and "progress" in text
    clean = ann.json("checkpoint", "revise", "--progress", "old token revoked")
    assert "team" not in clean
    ann.sync(), bob.sync()
    there = _checkpoint(bob)
    assert there["id"] == made["id"] and there["revision"]["id"] == clean["revision"]["id"]
    assert there["revision"]["body"]["progress"] == ["old token revoked"]
    assert there["revision"]["body"]["next_action"] == "update CI secrets"
