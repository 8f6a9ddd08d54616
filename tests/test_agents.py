"""Agent scopes: a memory can belong to a named agent (a Claude Code subagent type, a Codex
profile), in the project (agent-workspace) or global (agent-global) tier. An agent reads its
own tiers first; a deeper memory with the same type and key shadows a shallower one, which is
left out (never merged) and named by `recall --explain`. Through the CLI, the MCP tools and
the SubagentStart hook as a process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import call_tool
from test_hooks import context_of, hook, payload
from test_server import error, ok
from waymark.errors import Conflict, InvalidScope
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.recall import ranked


@pytest.fixture
def call(repo):
    def run(name, args=None):
        return call_tool(repo, name, args or {})

    return run


def cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "waymark", *args], cwd=cwd, capture_output=True, text=True
    )


def saved(conn, project, content, **kw):
    kw.setdefault("type", "convention")
    return store.remember(conn, project, make_draft(project, content=content, **kw)).memory


def four_tiers(conn, project):
    """The same convention (type and key) in every tier, worded differently."""
    return {
        "global": saved(conn, project, "Test runner: make test everywhere", key="runner",
                        scope="global"),
        "workspace": saved(conn, project, "Test runner: pytest -x in this repository",
                           key="runner"),
        "agent-global": saved(conn, project, "Test runner: the reviewer runs tox everywhere",
                              key="runner", scope="global", agent="reviewer"),
        "agent-workspace": saved(conn, project, "Test runner: the reviewer runs pytest -q "
                                 "--full-trace here", key="runner", agent="reviewer"),
    }  # fmt: skip


def test_each_reader_gets_the_deepest_tier_it_reads_and_never_another_agents(conn, project):
    tiers = four_tiers(conn, project)
    ids = {name: m.id for name, m in tiers.items()}

    def found(agent):
        hits = ranked.recall(conn, project, "which test runner", agent=agent)
        return [h.memory.id for h in hits], hits

    shown, hits = found(None)  # the main session: no agent's memories at all
    assert shown == [ids["workspace"]]
    assert hits[0].explain["shadowed"] == [{"id": ids["global"], "tier": "global"}]
    shown, hits = found("reviewer")
    assert shown == [ids["agent-workspace"]]
    assert sorted(n["tier"] for n in hits[0].explain["shadowed"]) == [
        "agent-global", "global", "workspace",
    ]  # fmt: skip
    shown, _ = found("explorer")  # another agent reads everyone's, not the reviewer's
    assert shown == [ids["workspace"]]
    store.archive(conn, project, ids["agent-workspace"])  # the next tier down takes over
    shown, hits = found("reviewer")
    assert shown == [ids["agent-global"]]
    assert {n["id"] for n in hits[0].explain["shadowed"]} == {ids["workspace"], ids["global"]}
    # Nothing was merged or changed: every shadowed memory is still active as written.
    for name in ("global", "workspace", "agent-global"):
        assert store.get(conn, ids[name]).status == "active"


def test_a_deeper_memory_the_query_misses_still_stands_in_for_the_one_it_shadows(conn, project):
    everyone = saved(conn, project, "Deploys go through the blue pipeline", key="deploy")
    mine = saved(conn, project, "Use the staging cluster only", key="deploy", agent="ops")
    hits = ranked.recall(conn, project, "blue pipeline deploys", agent="ops")
    assert [h.memory.id for h in hits] == [mine.id]  # its words did not match; its identity does
    assert hits[0].explain["shadowed"] == [{"id": everyone.id, "tier": "workspace"}]
    other_type = saved(conn, project, "Deploys: the blue pipeline is slow", type="warning",
                       key="deploy-speed", agent="ops")  # fmt: skip
    hits = ranked.recall(conn, project, "blue pipeline", agent="ops")
    assert other_type.id in [h.memory.id for h in hits]  # no key in common: no shadowing


def test_a_key_names_one_memory_per_tier_and_a_revision_stays_in_its_tier(conn, project):
    first = saved(conn, project, "Reviewer reads diffs first", key="style", agent="reviewer")
    saved(conn, project, "Everyone reads diffs first", key="style")  # another tier: fine
    saved(conn, project, "Explorer reads diffs first", key="style", agent="explorer")
    with pytest.raises(Conflict):
        saved(conn, project, "Reviewer again", key="style", agent="reviewer")
    revised = store.supersede(
        conn, project, first.id,
        make_draft(project, type="convention", content="Reviewer reads tests first", key="style"),
    ).memory  # fmt: skip
    assert revised.agent == "reviewer" and revised.supersedes == first.id
    event = conn.execute(
        "SELECT op, detail FROM events WHERE memory_id = ? ORDER BY seq", (first.id,)
    ).fetchone()
    assert event[0] == "remember" and json.loads(event[1])["agent"] == "reviewer"


@pytest.mark.parametrize(
    "name", ["", "has space", "-leading", "x" * 65, "semi;colon", "ghp_" + "a1B2" * 9]
)
def test_an_agent_name_that_is_not_a_name_or_holds_a_secret_is_refused(conn, project, name):
    before = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    if name == "":
        assert make_draft(project, type="note", content="x", agent=name).agent is None
        return
    with pytest.raises(InvalidScope):
        saved(conn, project, "a note", agent=name)
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == before


def test_the_cli_writes_lists_shows_and_explains_agent_tiers(enabled, repo):
    cwd = str(repo)
    base = ["remember", "--type", "convention", "--key", "runner", "--json"]
    everyone = json.loads(cli(*base, "--content", "Run pytest -x", cwd=cwd).stdout)
    mine = json.loads(
        cli(*base, "--agent", "reviewer", "--content", "Reviewer runs pytest -q", cwd=cwd).stdout
    )
    mine_id, everyone_id = mine["memory"]["id"], everyone["memory"]["id"]
    assert mine["memory"]["agent"] == "reviewer" and everyone["memory"]["agent"] is None

    plain = cli("recall", "pytest runner", "--explain", cwd=cwd).stdout
    assert everyone_id in plain and mine_id not in plain
    as_agent = cli("recall", "pytest runner", "--agent", "reviewer", "--explain", cwd=cwd)
    first = as_agent.stdout.splitlines()[0]
    assert mine_id in first and "(agent reviewer)" in first
    assert f"shadows {everyone_id} (workspace, same type and key)" in as_agent.stdout
    data = json.loads(
        cli("recall", "pytest runner", "--agent", "reviewer", "--explain", "--json",
            cwd=cwd).stdout
    )  # fmt: skip
    assert [r["memory"]["id"] for r in data["results"]] == [mine_id]
    assert data["results"][0]["explain"]["shadowed"] == [{"id": everyone_id, "tier": "workspace"}]

    listed = cli("list", "--agent", "reviewer", cwd=cwd).stdout
    assert mine_id in listed and everyone_id not in listed
    shown = cli("show", mine_id, cwd=cwd).stdout
    assert "agent: reviewer" in shown and "tier: agent-workspace" in shown

    bad = cli("remember", "--type", "note", "--content", "x", "--agent", "no spaces", "--json",
              cwd=cwd)  # fmt: skip
    assert bad.returncode != 0 and json.loads(bad.stdout)["code"] == "invalid_scope"
    conflict = cli(*base, "--agent", "reviewer", "--content", "again", cwd=cwd)
    assert conflict.returncode != 0 and json.loads(conflict.stdout)["details"]["current"] == mine_id


def test_the_mcp_tools_write_and_read_an_agents_tier(call):
    everyone = ok(call("remember", {"type": "warning", "key": "db", "content": "Never drop "
                                    "the events table"}))["memory"]  # fmt: skip
    mine = ok(
        call(
            "remember",
            {
                "type": "warning",
                "key": "db",
                "agent": "migrator",
                "content": "The migrator may drop the events table in tests",
            },
        )
    )
    mine = mine["memory"]
    assert mine["agent"] == "migrator"
    plain = ok(call("recall", {"query": "drop the events table", "include_session": False}))
    assert [r["id"] for r in plain["results"]] == [everyone["id"]]
    agent = ok(call("recall", {"query": "drop the events table", "agent": "migrator",
                               "explain": True, "include_session": False}))  # fmt: skip
    assert [r["id"] for r in agent["results"]] == [mine["id"]]
    assert agent["results"][0]["agent"] == "migrator"
    assert agent["results"][0]["explain"]["shadowed"] == [
        {"id": everyone["id"], "tier": "workspace"}
    ]
    listed = ok(call("recall", {"agent": "migrator"}))["results"]
    assert [m["id"] for m in listed] == [mine["id"]]
    bad = error(call("recall", {"query": "x", "agent": "two words"}))
    assert bad["code"] == "invalid_scope"


def test_a_subagent_packet_carries_its_types_rules_and_the_main_packet_none(conn, enabled, repo):
    everyone = saved(conn, enabled, "Commit messages are imperative", key="commits",
                     pinned=True)  # fmt: skip
    mine = saved(conn, enabled, "The reviewer never commits; it comments", key="commits",
                 pinned=True, agent="reviewer")  # fmt: skip
    lone = saved(conn, enabled, "The reviewer quotes line numbers", pinned=True, agent="reviewer")

    def packet(agent_type):
        data = payload("claude-code", "SubagentStart", cwd=str(repo), session_id="s1")
        data["agent_type"] = agent_type
        return context_of(hook("SubagentStart", data, "claude-code"))

    reviewer = packet("reviewer")
    assert mine.id in reviewer and lone.id in reviewer and everyone.id not in reviewer
    explorer = packet("Explore")
    assert everyone.id in explorer and mine.id not in explorer and lone.id not in explorer
    start = payload("claude-code", "SessionStart", cwd=str(repo), session_id="s2")
    main = context_of(hook("SessionStart", start))
    assert everyone.id in main and mine.id not in main and lone.id not in main
