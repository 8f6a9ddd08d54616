"""Every command's `--help` ends with an example, and the example runs as written: each one is
run here as a shell command in a sandbox (its own HOME, data folder and git repository),
after the commands a person would have run before it (a memory remembered, a checkpoint
saved, a backup made). Only what a store makes up itself is put in: the ids and file names
the examples write as `01JD...`, `cand_01JD...`, `out_01JD...`, `01M8SB5XG39S`, `3f2a...`
and the backup's name.

An example exits 0, or refuses with the stable error code named for it below (a team store
that is not running, a dbt project that was never built): never a usage error, never an
internal one. The long-running faces (`waymark mcp`, `ui`, `proxy`) must start and stay up.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from conftest import git_env
from waymark.cli.dispatch import build_parser

# Examples that refuse in any sandbox, with the code they must refuse with: what they need
# is outside one (each has its own tests where it is there).
REFUSALS = {
    "team": "team_unreachable",  # a PostgreSQL server (tests/test_team*.py start one)
    "sync": "team_not_connected",  # the same
    "dbt": "not_found",  # a dbt project dbt has built (tests/test_dbt.py builds one)
    "outcome": "not_found",  # a decision whose change git then reverted (tests/test_outcomes.py)
}
# Which id an example's `01JD...` stands for, where it is not the first memory.
STANDS_FOR = {"unarchive": "archived", "insights": "insight", "rules": "rule"}
# What an example needs that would be in every other example's way, made in its own copy
# only: a task open for the taking (an active checkpoint is the one `checkpoint create`
# refuses to hide).
FIRST = {"task": 'waymark checkpoint create --open --objective "Fix the flaky login test"'}
# Faces that run until stopped: started, then stopped once they say they are up.
SERVERS = {"ui", "proxy"}


def examples() -> dict[str, str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    out = {}
    for name, command in sub.choices.items():
        found = re.search(r"example:\n  (.+)\Z", command.epilog or "", re.S)
        assert found, f"`waymark {name} --help` ends with no example"
        out[name] = found.group(1).strip()
    return out


def test_every_help_ends_with_an_example():
    assert len(examples()) >= 50


def make_sandbox(root) -> dict:
    env = git_env(root)
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "waymark").write_text(
        f"#!{sys.executable} -I\nfrom waymark.cli import entry\nentry()\n",
        encoding="utf-8",
    )
    (bin_dir / "waymark").chmod(0o755)
    env.update(
        WAYMARK_HOME=str(root / "data"),
        PATH=f"{bin_dir}{os.pathsep}{env['PATH']}",
        NO_COLOR="1",
    )
    if not os.environ.get("WAYMARK_EMBED_MODEL_DIR"):  # `waymark index` runs on a small one
        import tiny_model

        env["WAYMARK_EMBED_MODEL_DIR"] = str(tiny_model.build(root / "model"))
    repo = root / "shop"
    for path, text in {
        "src/refund.py": "def refund():\n    return 1\n",
        "tests/test_refund.py": "def test_refund():\n    assert True\n",
        "docs/adr/0003-queues.md": "# Queues\n\n## Decision\n\nUse one queue per tenant.\n",
        "CONTRIBUTING.md": "# Contributing\n",
        ".waymark.toml": "[repository]\nshare = true\n",
    }.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text, encoding="utf-8")
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *argv], cwd=repo, env=env, check=True)
    return {"root": root, "env": env, "repo": repo, "ids": {}}


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """One sandbox with what a person would have done first, kept as a template: each
    example runs in a fresh copy at the same path (a project is found by its path)."""
    root = tmp_path_factory.mktemp("examples")
    box = make_sandbox(root / "box")
    prepare(box)
    shutil.copytree(root / "box", root / "template", symlinks=True)
    return box


@pytest.fixture
def sandbox(prepared):
    root = prepared["root"]
    shutil.rmtree(root)
    shutil.copytree(root.parent / "template", root, symlinks=True)
    return prepared


def sh(box, command: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=box["repo"], env=box["env"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip


def made(box, command: str) -> dict:
    done = sh(box, command + " --json")
    assert done.returncode == 0, (command, done.stdout, done.stderr)
    return json.loads(done.stdout)


def prepare(box) -> None:
    """What a person would have done before the examples: the ids they would then use."""
    sh(box, "waymark enable")
    first = made(box, 'waymark remember --type decision --content "port 8080 for the API"')
    second = made(box, 'waymark remember --type lesson --content "retry with backoff"')
    archived = made(box, 'waymark remember --type note --content "the old staging host"')
    made(box, f"waymark archive {archived['memory']['id']}")
    project = made(box, "waymark project")
    backup = made(box, "waymark backup")
    for command in ("waymark map refresh", "waymark notes refresh"):
        assert sh(box, command).returncode == 0, command
    # Work since the map's snapshot, for `waymark map changes` to show.
    (box["repo"] / "src" / "refund.py").write_text("def refund(amount):\n    return amount\n",
                                                   encoding="utf-8")  # fmt: skip
    box["ids"] |= {
        "memory": first["memory"]["id"], "other": second["memory"]["id"],
        "archived": archived["memory"]["id"], "project": project["id"],
        "backup": backup["path"],
    }  # fmt: skip
    box["ids"] |= recorded(box)


# What sessions would have left: a proposal waiting for review, two insights learned from
# the error log (one promoted to a rule), a long output Waymark kept out of the context.
RECORDED = r"""
import json, sys
from waymark.curation import candidates, learning
from waymark.handoff import outputs
from waymark.projects.resolve import resolve
from waymark.storage import connection as db

conn = db.connect()
project = resolve(conn, ".", create=False)
ids = {}
def propose(kind, text):
    with db.write(conn):
        row, _ = candidates.propose(conn, project.id, kind=kind, reason="seen in sessions",
                                    fingerprint=text, fields={"type": "lesson",
                                    "content": text, "tags": [kind]})
    return row["id"]
ids["candidate"] = propose("failure_fix", "pytest -x failed on a stale fixture: rebuild it")
for name, text in (("insight", "Three timeouts this month: raise the client timeout"),
                   ("rule", "Run the migrations before the tests")):
    ids[name] = candidates.approve(conn, project, propose("insight", text))["memory"]["id"]
learning.promote(conn, project, ids["rule"])
kept = outputs.trim(conn, project, "3f2a9c1e", "Bash", "pytest -q",
                    {"stdout": "ok\n" * 4000}, (2000, 7))
import re
ids["output"] = re.search(r"out_([0-9A-Z]+)", kept["stdout"]).group(1)
ids["session"] = "3f2a9c1e"
print(json.dumps(ids))
"""


def recorded(box) -> dict[str, str]:
    done = subprocess.run([sys.executable, "-c", RECORDED], cwd=box["repo"], env=box["env"],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def filled(name: str, example: str, ids: dict[str, str]) -> str:
    example = example.replace("01JDX...", ids["other"]).replace("01JDW...", ids["memory"])
    example = example.replace("01M8SB5XG39S", ids["project"])
    example = re.sub(r"\S*waymark-s6-\S+\.db", ids["backup"], example)
    example = example.replace("cand_01JD...", ids["candidate"])
    example = example.replace("out_01JD...", "out_" + ids["output"])
    example = example.replace("3f2a...", ids["session"])
    return example.replace("01JD...", ids[STANDS_FOR.get(name, "memory")])


@pytest.mark.parametrize("name", sorted(examples()))
def test_the_example_runs_as_written(sandbox, name):
    ids = sandbox["ids"]
    if name in FIRST:
        ids = ids | {"memory": made(sandbox, FIRST[name])["id"]}
    example = filled(name, examples()[name], ids)
    if name in SERVERS:
        log = sandbox["root"] / "data" / "server.log"
        with open(sandbox["root"] / f"{name}.out", "w") as out:
            started = subprocess.Popen(["bash", "-c", "exec " + example], cwd=sandbox["repo"],
                                       env=sandbox["env"], stdin=subprocess.DEVNULL,
                                       stdout=out, stderr=out)  # fmt: skip
            try:
                deadline = time.monotonic() + 30
                while "start" not in (log.read_text() if log.exists() else ""):
                    assert started.poll() is None, (sandbox["root"] / f"{name}.out").read_text()
                    assert time.monotonic() < deadline, f"{example}: no start in server.log"
                    time.sleep(0.1)
            finally:
                started.terminate()
                started.wait(10)
        return
    done = sh(sandbox, example)
    said = done.stdout + done.stderr
    assert done.returncode != 2, f"{example}: a usage error\n{said}"
    assert "internal error" not in said, f"{example}\n{said}"
    if name in REFUSALS:
        assert f"[{REFUSALS[name]}]" in said, f"{example}\n{said}"
    else:
        assert done.returncode == 0, f"{example}\n{said}"
