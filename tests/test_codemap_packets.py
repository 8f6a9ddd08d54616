"""The code map in the packets, hooks as real processes: SessionStart says what changed in
the code's structure since the last session began and what depends on the checkpoint's
files; a prompt naming a file or a declaration gets its dependents and their memories; an
edit to a file with dependents says how many and which. The map is refreshed by
SessionStart within its budget (else in the background), on an unsaved Stop, and after a
checkpoint saved from the CLI; a first map is never built in a hook."""

from __future__ import annotations

import time

from test_codemap import APP, cli
from test_hooks import context_of, hook, modules_loaded, payload, remember
from test_pre_tool_use import before_edit, context, silent
from waymark import settings
from waymark.codemap import changes, facts, questions, snapshot
from waymark.codemap.freshness import freshen
from waymark.handoff import checkpoints


def _app(repo):
    for path, text in APP.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text, "utf-8")


def start(repo, session, client="claude-code"):
    return hook("SessionStart", payload(client, "SessionStart", cwd=str(repo), session_id=session),
                client)  # fmt: skip


def snapshots(conn, project):
    return [s["id"] for s in questions.status(conn, project)["snapshots"]]


def test_the_next_session_names_the_modified_declaration_and_its_dependents(conn, enabled, repo):
    _app(repo)
    # The packet is the subject here, not the hook's time budget (the next tests): the most
    # the budget allows, so a busy machine's slow walk still finishes inside the hook (#44).
    settings.set_value(conn, "map.refresh_ms", 5000)
    first = snapshot.refresh(conn, enabled)["snapshot"]["id"]
    start(repo, "s1")
    store = repo / "app/store.py"
    store.write_text(store.read_text("utf-8").replace("return Cache()", "return Cache(1)"))
    checkpoints.create(conn, enabled, {"objective": "Cache sizes", "relevant_files": ["app/store.py"],
                                       "next_action": "size the cache"})  # fmt: skip
    text = context_of(start(repo, "s2"))
    newest = snapshots(conn, enabled)[0]
    assert newest != first  # refreshed in the hook, within its budget
    assert f"- map {first} (last session's start) -> {newest}: 1 modified" in text
    assert "- modified app/store.py::open_cache (1 dependent file: app/service.py)" in text
    assert f"- app/store.py: 1 file depends on it (map {newest}): app/service.py" in text
    assert f"- map {newest}: " in text and "Python" in text  # the overview, room allowing
    again = context_of(start(repo, "s3"))  # s2 saw no change: nothing to say of one
    assert "(last session's start)" not in again


def test_no_map_no_section_and_a_hook_never_builds_the_first(conn, enabled, repo):
    _app(repo)
    text = context_of(start(repo, "s1")) if start(repo, "s0").stdout else ""
    assert "Code map" not in text
    assert snapshots(conn, enabled) == []
    assert freshen(conn, enabled, "start") == "no map"


def test_past_its_budget_the_refresh_goes_on_in_the_background(conn, enabled, repo):
    _app(repo)
    first = snapshot.refresh(conn, enabled)["snapshot"]["id"]
    (repo / "app/a.py").write_text("def render():\n    return 2\n", "utf-8")
    settings.set_value(conn, "map.refresh_ms", 0)  # no time at all: the walk is overdue
    assert start(repo, "s1").returncode == 0
    deadline = time.monotonic() + 30
    while snapshots(conn, enabled)[0] == first and time.monotonic() < deadline:
        time.sleep(0.2)
    assert snapshots(conn, enabled)[0] != first, "the background refresh took no snapshot"
    while not snapshot.rows.resolved(conn, snapshot.rows.latest_seq(conn, enabled.id)):
        assert time.monotonic() < deadline, "the background refresh resolved nothing"
        time.sleep(0.2)
    assert changes.changes(conn, enabled)["declarations"]["modified"] == ["app/a.py::render"]


def test_a_background_refresh_costs_the_hook_no_subprocess_import(conn, enabled, repo):
    """The refresh is spawned without the subprocess module (7 ms of a SessionStart)."""
    _app(repo)
    first = snapshot.refresh(conn, enabled)["snapshot"]["id"]
    (repo / "app/a.py").write_text("def render():\n    return 3\n", "utf-8")
    settings.set_value(conn, "map.refresh_ms", 0)
    data = payload("claude-code", "SessionStart", cwd=str(repo), session_id="s-spawn")
    done, loaded = modules_loaded("session_start", data, ("subprocess",))
    assert done.returncode == 0 and loaded == "[]"
    deadline = time.monotonic() + 30
    while snapshots(conn, enabled)[0] == first:  # and the refresh did run
        assert time.monotonic() < deadline, "the background refresh took no snapshot"
        time.sleep(0.2)


def test_an_unsaved_stop_and_a_cli_checkpoint_bring_the_map_up_to_date(conn, enabled, repo):
    _app(repo)
    first = snapshot.refresh(conn, enabled)["snapshot"]["id"]
    start(repo, "s1")
    edit = payload("claude-code", "PostToolUse-write", cwd=str(repo), session_id="s1")
    edit["tool_input"] = {"file_path": str(repo / "app/a.py"), "content": "x"}
    (repo / "app/a.py").write_text("def render():\n    return 3\n", "utf-8")
    assert hook("PostToolUse", edit).returncode == 0
    stop = hook("Stop", payload("claude-code", "Stop", cwd=str(repo), session_id="s1"))
    assert b"checkpoint" in stop.stdout  # the handoff is asked for ...
    deadline = time.monotonic() + 30
    while snapshots(conn, enabled)[0] == first and time.monotonic() < deadline:
        time.sleep(0.2)
    assert snapshots(conn, enabled)[0] != first  # ... and the map caught up meanwhile
    (repo / "app/b.py").write_text("def helpers():\n    return 1\n", "utf-8")
    before = snapshots(conn, enabled)[0]
    cli("checkpoint", "create", "--objective", "Render", "--next-action", "check b", cwd=str(repo))
    assert snapshots(conn, enabled)[0] != before
    assert "app/b.py::helpers" in changes.changes(conn, enabled)["declarations"]["modified"]


def test_an_edit_to_a_file_with_dependents_says_how_many_once(conn, enabled, repo):
    _app(repo)
    snap = snapshot.refresh(conn, enabled)["snapshot"]["id"]
    text = context(before_edit(repo, "app/store.py"))
    assert f"app/store.py: 1 file depends on it (map {snap}): app/service.py" in text
    assert "app/service.py: 1 file depends on it" in context(before_edit(repo, "app/service.py"))
    assert silent(before_edit(repo, "app/store.py"))  # never the same thing twice
    assert silent(before_edit(repo, "app/cli.py"))  # nothing depends on it


def test_a_prompt_naming_a_declaration_gets_its_dependents_and_their_memories(conn, enabled, repo):
    _app(repo)
    snap = snapshot.refresh(conn, enabled)["snapshot"]["id"]
    note = remember(conn, enabled, "serve() must stay idempotent: retried by the queue",
                    type="warning", scope="file", target="app/service.py")  # fmt: skip
    data = payload("claude-code", "UserPromptSubmit", cwd=str(repo), session_id="s1")
    data["prompt"] = "Make open_cache take a size"
    text = context_of(hook("UserPromptSubmit", data))
    assert f"- app/store.py::open_cache: 1 file depends on it (map {snap}): app/service.py" in text
    assert note.id in text and "idempotent" in text
    data["prompt"] = "Rename things in app/store.py please"
    named = context_of(hook("UserPromptSubmit", data))
    assert "- app/store.py: 1 file depends on it" in named


def test_code_words_are_the_shapes_of_names():
    assert facts.code_words("Make open_cache() take `Cache.get` and parseArgs, not size") == [
        "open_cache", "Cache.get", "parseArgs"]  # fmt: skip


def test_a_map_too_large_to_check_within_the_budget_goes_to_the_background_at_once(
    conn, enabled, repo, monkeypatch
):
    from waymark.codemap import freshness

    _app(repo)
    first = snapshot.refresh(conn, enabled)["snapshot"]["id"]
    (repo / "app/a.py").write_text("def render():\n    return 4\n", "utf-8")
    tried = []
    monkeypatch.setattr(snapshot, "refresh", lambda *a, **k: tried.append(k))
    monkeypatch.setattr(freshness, "in_background", lambda root: tried.append("background"))
    monkeypatch.setattr(freshness, "WALK_S_PER_FILE", 1.0)  # a second a file: always too many
    said = freshen(conn, enabled, "start")
    assert said.startswith("background: too many files") and tried == ["background"]
    monkeypatch.setattr(freshness, "WALK_S_PER_FILE", 1e-9)  # a small map: tried in the hook
    assert freshen(conn, enabled, "start") == "refreshed" and "deadline" in tried[-1]
    assert snapshots(conn, enabled)[0] == first
    # A caller with a deadline of its own (the warm server's SessionStart) caps the budget.
    said = freshen(conn, enabled, "start", most_s=0.0)
    assert said.startswith("background: too many files") and tried[-1] == "background"


def test_the_overview_kept_with_a_snapshot_is_what_its_files_count(conn, enabled, repo):
    _app(repo)
    (repo / "docs").mkdir()
    (repo / "docs/notes.md").write_text("# notes\n", "utf-8")
    seq = snapshot.refresh(conn, enabled) and snapshot.rows.latest_seq(conn, enabled.id)
    kept = snapshot.rows.overview(conn, seq, 5)
    counted = snapshot.rows.overview(conn, seq, snapshot.rows.OVERVIEW_DIRECTORIES + 1)
    assert kept["languages"] == counted["languages"] and kept["languages"]["python"] >= 4
    assert kept["directories"] == counted["directories"][:5] and kept["directories"][0][0] == "app"
