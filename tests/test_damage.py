"""A store that is damaged, read-only or on a full disk: every command says so with a stable
code, reads go on where they can, writes stop, hooks stay silent, nothing is half-written.

The read-only home and the full disk are real: a read-only bind mount and a small tmpfs in a
private mount namespace (`unshare -rm`), where the machine allows one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import apsw
import pytest

from waymark.base import launch
from waymark.errors import DatabaseCorrupt, DiskFull
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.projects import capture
from waymark.projects.resolve import resolve
from waymark.storage import connection as db

PY = sys.executable


def cli(*args: str, cwd, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PY, "-m", "waymark", *args], cwd=cwd, capture_output=True, text=True, input=stdin
    )


def as_json(done: subprocess.CompletedProcess) -> dict:
    return json.loads(done.stdout)


def session_start(repo) -> subprocess.CompletedProcess:
    payload = {
        "session_id": "s-damage",
        "cwd": str(repo),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    return subprocess.run(
        launch.argv(PY, "session_start", "claude-code"),
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=repo,
    )


def fill(repo, n: int = 300) -> None:
    conn = db.connect()
    project = resolve(conn, str(repo))
    capture.set_enabled(conn, project, True)
    store.remember(
        conn, project, make_draft(project, type="convention", content="Run ruff first", pinned=True)
    )
    for i in range(n):
        text = f"fact {i} about the frobnicator " + os.urandom(150).hex()
        store.remember(conn, project, make_draft(project, type="fact", content=text))
    db.checkpoint_wal(conn)
    conn.close()


def damage_table(path: str, tables: tuple[str, ...] = ("memories", "memories_by_kind")) -> None:
    """Overwrite the middle leaf pages of the memories table and of the index `status` counts
    them from with garbage, as a failing disk does."""
    conn = apsw.Connection(path)
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    middle = []
    for table in tables:
        pages = [row[0] for row in conn.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno",
            (table,),
        )]  # fmt: skip
        middle += pages[max(0, len(pages) // 2 - 2) : len(pages) // 2 + 2]
    conn.close()
    with open(path, "r+b") as f:
        for page in middle:
            f.seek((page - 1) * size)
            f.write(b"\xa5" * size)


# --- damage in the middle of the file -----------------------------------------------------


def test_mid_file_damage_is_database_corrupt_everywhere_and_writes_stop(repo, waymark_home):
    fill(repo)
    path = str(waymark_home / "waymark.db")
    damage_table(path)

    status = cli("status", "--json", cwd=repo)
    assert status.returncode == 1
    err = as_json(status)
    assert err["code"] == "database_corrupt"
    assert "waymark restore" in err["message"]

    # A write that would not touch the damaged pages is refused all the same.
    write = cli("remember", "--content", "lands in a damaged file", "--json", cwd=repo)
    assert write.returncode == 1 and as_json(write)["code"] == "database_corrupt"
    text = cli("remember", "--content", "lands in a damaged file", cwd=repo)
    assert text.returncode == 1 and "[database_corrupt]" in text.stderr
    assert "Traceback" not in text.stderr

    hook = session_start(repo)
    assert hook.returncode == 0 and hook.stdout == ""
    assert "[database_corrupt]" in (waymark_home / "hooks.log").read_text()

    doctor = cli("doctor", "--json", cwd=repo)
    found = {f["check"]: f for f in as_json(doctor)["findings"]}
    assert found["database"]["status"] == "fail"
    assert "database_corrupt" in found["database"]["detail"]
    assert "restore" in found["database"]["fix"]


def test_doctor_finds_damage_no_read_touched_and_then_writes_stop(repo, waymark_home):
    fill(repo)
    path = str(waymark_home / "waymark.db")
    damage_table(path)
    # Before any full check, a small write may not touch the damaged pages...
    doctor = cli("doctor", "--json", cwd=repo)
    assert {f["check"]: f for f in as_json(doctor)["findings"]}["database"]["status"] == "fail"
    # ...after it, every writer refuses: CLI and library alike.
    assert as_json(cli("remember", "--content", "x", "--json", cwd=repo))["code"] == (
        "database_corrupt"
    )
    conn = db.connect()
    project = resolve(conn, str(repo), create=False)
    with pytest.raises(DatabaseCorrupt):
        store.remember(conn, project, make_draft(project, type="note", content="nope"))
    conn.close()


def test_restoring_a_backup_lifts_the_stop(repo, waymark_home):
    fill(repo, 50)
    made = as_json(cli("backup", "--json", cwd=repo))
    damage_table(str(waymark_home / "waymark.db"))
    assert cli("status", cwd=repo).returncode == 1  # notices the damage
    restored = cli("restore", made["path"], cwd=repo)
    assert restored.returncode == 0, restored.stderr
    done = cli("remember", "--content", "after the restore", "--json", cwd=repo)
    assert done.returncode == 0, done.stdout
    assert not os.path.exists(str(waymark_home / "waymark.db") + ".damaged")


def test_the_mcp_server_reports_damage_with_its_code(repo, waymark_home):
    import asyncio

    from mcp import Client

    from waymark.server.app import build_server
    from waymark.server.state import State

    fill(repo)
    damage_table(str(waymark_home / "waymark.db"))
    server, state = build_server(State(cwd=str(repo)))

    async def go(name, args):
        async with Client(server) as client:
            return await client.call_tool(name, args)

    try:
        listed = asyncio.run(go("status", {}))  # counts read every page
        remembered = asyncio.run(go("remember", {"type": "note", "content": "after damage"}))
    finally:
        state.close()
    for result in (listed, remembered):
        assert result.is_error
        text = result.content[0].text
        assert "{" in text, text
        assert json.loads(text[text.index("{") :])["error"]["code"] == "database_corrupt"


# --- a full disk, in process: SQLite's own limit on the file --------------------------------


def test_a_full_database_rolls_back_and_says_disk_full(repo):
    conn = db.connect()
    project = resolve(conn, str(repo))
    store.remember(conn, project, make_draft(project, type="note", content="before"))
    pages = db.scalar(conn, "PRAGMA page_count")
    conn.execute(f"PRAGMA max_page_count = {pages}")  # the file cannot grow by one page
    big = "a long note " * 1500
    stored = 0  # a new store's free pages (a migration's rebuilt table) take the first few
    with pytest.raises(DiskFull) as caught:
        for i in range(20):
            store.remember(conn, project, make_draft(project, type="note", content=f"{i} {big}"))
            stored += 1
    assert caught.value.code == "disk_full"
    assert not conn.in_transaction  # rolled back, nothing half-written
    assert stored < 20  # the file could not grow: a write did hit the full disk
    found = db.scalar(conn, "SELECT count(*) FROM memories WHERE content LIKE '%long note%'")
    assert found == stored  # the one that hit it left nothing behind
    conn.close()


# --- the real thing: a read-only home and a full disk, in a private mount namespace --------


def _namespaces() -> str | None:
    if not shutil.which("unshare"):
        return "needs unshare(1) to mount a read-only or full file system privately"
    probe = subprocess.run(
        [
            "unshare",
            "-rm",
            "sh",
            "-c",
            "mount -t tmpfs -o size=64k tmpfs /mnt 2>/dev/null || "
            "mount -t tmpfs -o size=64k tmpfs /tmp",
        ],
        capture_output=True,
    )
    if probe.returncode != 0:
        return "this machine allows no private mount namespace (unshare -rm), which the test needs"
    return None


NO_NAMESPACE = _namespaces()
needs_namespace = pytest.mark.skipif(NO_NAMESPACE is not None, reason=NO_NAMESPACE or "")

RUNNER = textwrap.dedent(
    """
    import json, subprocess, sys
    setup, runs = json.loads(sys.argv[1])
    subprocess.run(["sh", "-ec", setup], check=True)
    out = []
    for argv, stdin, cwd in runs:
        if argv[0] == "sh":
            done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd)
        else:
            done = subprocess.run(argv, capture_output=True, text=True, input=stdin, cwd=cwd)
        out.append({"rc": done.returncode, "out": done.stdout, "err": done.stderr})
    print(json.dumps(out))
    """
)


def in_namespace(setup: str, runs: list[tuple[list[str], str | None, str]]) -> list[dict]:
    done = subprocess.run(
        ["unshare", "-rm", PY, "-c", RUNNER, json.dumps([setup, runs])],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def waymark(*args: str) -> list[str]:
    return [PY, "-m", "waymark", *args]


@needs_namespace
def test_a_read_only_home_reads_refuses_writes_and_doctor_keeps_the_database(repo, waymark_home):
    fill(repo, 20)
    here = str(repo)
    payload = json.dumps(
        {"session_id": "ro", "cwd": here, "hook_event_name": "SessionStart", "source": "startup"}
    )
    results = in_namespace(
        f"mount --bind -o ro {waymark_home} {waymark_home}",
        [
            (waymark("status", "--json"), None, here),
            (waymark("list", "--json"), None, here),
            (waymark("recall", "frobnicator", "--json"), None, here),
            (waymark("project", "--json"), None, here),
            (waymark("remember", "--content", "refused", "--json"), None, here),
            (waymark("remember", "--content", "refused"), None, here),
            (waymark("doctor", "--json"), None, here),
            (launch.argv(PY, "session_start", "claude-code"), payload, here),
        ],
    )
    status, listed, recalled, proj, write_json, write_text, doctor, hook = results
    for done in (status, listed, recalled, proj):
        assert done["rc"] == 0, done
    assert json.loads(listed["out"])["results"]
    assert json.loads(recalled["out"])["results"]
    assert write_json["rc"] == 1 and json.loads(write_json["out"])["code"] == "read_only"
    assert "[read_only]" in write_text["err"] and "internal error" not in write_text["err"]
    found = {f["check"]: f for f in json.loads(doctor["out"])["findings"]}
    assert found["database"]["status"] == "warn", found["database"]
    advice = (found["database"]["detail"] + found["database"]["fix"]).lower()
    assert "restore" not in advice and "move" not in advice and "aside" not in advice
    # The hook still gives the session its memory; it just cannot record anything.
    assert hook["rc"] == 0
    assert "Run ruff first" in json.loads(hook["out"])["hookSpecificOutput"]["additionalContext"]


@needs_namespace
def test_a_full_disk_says_disk_full_everywhere_and_leaves_nothing_half_written(repo, tmp_path):
    home = tmp_path / "small-home"
    home.mkdir()
    here = str(repo)
    env_home = f"WAYMARK_HOME={home}"
    big = "x" * 15000
    results = in_namespace(
        f"mount -t tmpfs -o size=8m tmpfs {home}",  # a new store is ~2 MB (16 KB pages)
        [
            (["sh", "-c", f"{env_home} {PY} -m waymark remember --content first"], None, here),
            (
                [
                    "sh",
                    "-c",
                    f"{env_home} {PY} -m waymark backup --json >/dev/null; "
                    f"dd if=/dev/zero of={home}/filler bs=4k 2>/dev/null; true",
                ],
                None,
                here,
            ),
            (
                ["sh", "-c", f"{env_home} {PY} -m waymark remember --json --content {big}"],
                None,
                here,
            ),
            (["sh", "-c", f"{env_home} {PY} -m waymark remember --content {big}"], None, here),
            (["sh", "-c", f"{env_home} {PY} -m waymark backup --json"], None, here),
            (
                ["sh", "-c", f"{env_home} {PY} -m waymark export --json --out {home}/e.jsonl"],
                None,
                here,
            ),
            (["sh", "-c", f"{env_home} {PY} -m waymark list --json"], None, here),
            (["sh", "-c", f"{env_home} {PY} -m waymark doctor --json"], None, here),
            (["sh", "-c", f"ls -a {home} {home}/backups"], None, here),
        ],
    )
    first, _, write_json, write_text, backup, export, listed, doctor, files = results
    assert first["rc"] == 0, first
    assert write_json["rc"] == 1 and json.loads(write_json["out"])["code"] == "disk_full"
    assert "[disk_full]" in write_text["err"] and "internal error" not in write_text["err"]
    assert backup["rc"] == 1 and json.loads(backup["out"])["code"] == "disk_full"
    assert export["rc"] == 1 and json.loads(export["out"])["code"] == "disk_full"
    assert listed["rc"] == 0 and [m["content"] for m in json.loads(listed["out"])["results"]] == [
        "first"
    ]
    found = {f["check"]: f for f in json.loads(doctor["out"])["findings"]}
    assert "disk_full" in found["database"]["detail"]
    names = files["out"].split()
    assert not [n for n in names if n.endswith(".tmp") or n == "e.jsonl"], names
    assert len([n for n in names if n.startswith("waymark-s")]) == 1  # the one made with room


def test_the_mcp_server_checks_the_file_in_the_background(repo, waymark_home):
    import threading
    import time

    from waymark.server.state import State

    fill(repo)
    damage_table(str(waymark_home / "waymark.db"))
    marker = str(waymark_home / "waymark.db") + ".damaged"
    assert not os.path.exists(marker)
    state = State(cwd=str(repo))
    state.start_background()
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        state.close()
        # The model thread outlives close(); left running it would open the next test's store.
        for thread in threading.enumerate():
            if thread.name in ("waymark-model", "waymark-check"):
                thread.join(timeout=60)
    assert os.path.exists(marker)
    refused = cli("remember", "--content", "not into a damaged file", "--json", cwd=repo)
    assert as_json(refused)["code"] == "database_corrupt"
