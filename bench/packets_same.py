"""The packets a project's hooks would inject, written out so two versions of the packet
builders can be compared byte for byte (a refactor of `packets/` must not change one).

    python bench/packets_same.py build DIR     # a project and its store in DIR (once)
    python bench/packets_same.py dump DIR      # every packet of it, as JSON, on stdout

`build` makes a git repository with a small package (a code map), a skill and a procedure
(knowledge notes), 400 memories of every type (file- and symbol-scoped ones among them, pinned
rules, decisions on two branches), links, a checkpoint; `dump` prints the SessionStart packet
for each client and source and the prompt packet of 40 prompts for each client, read with
nothing recorded, and the PreToolUse packet of ten tool calls. Dump the same DIR with the code before and after (`PYTHONPATH=other/src`
for the other), then compare the two files.
"""

from __future__ import annotations

import json
import os
import pathlib
import random
import subprocess
import sys

FILES = {
    "src/shop/__init__.py": "",
    "src/shop/money.py": "def cents(x):\n    return int(round(x * 100))\n",
    "src/shop/cart.py": "from shop.money import cents\n\n\ndef total(items):\n"
    "    return sum(cents(i) for i in items)\n",
    "src/shop/invoice.py": "from shop.cart import total\n\n\ndef invoice(items):\n"
    "    return {'total': total(items)}\n",
    "src/shop/refund.py": "from shop.money import cents\n\n\ndef refund(x):\n    return -cents(x)\n",
    ".claude/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Deploy the app to "
    "staging - build, migrate the database, smoke-test the API\n---\n\n# Deploy\n\n1. make "
    "build\n2. make migrate\n",
    "procedures/release.md": "# Release\n\nTag the version, push the tag, publish the wheel.\n",
}
WORDS = ("cache", "checksum", "retry", "timeout", "ledger", "refund", "invoice", "cart", "money",
         "cents", "gateway", "queue", "migration", "deploy", "staging", "token", "session",
         "cursor", "batch", "worker", "schema", "index", "lock")  # fmt: skip
TYPES = ("decision", "fact", "convention", "warning", "lesson", "solution", "incident", "todo",
         "note")  # fmt: skip
TARGETS = ("src/shop/money.py", "src/shop/cart.py", "src/shop/invoice.py::invoice",
           "src/shop/refund.py", "src/shop/cart.py::total")  # fmt: skip


def waymark(repo: pathlib.Path, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "waymark", *args, "--json"], cwd=repo,
                          capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(done.stdout) if done.stdout.strip() else {}


def build(root: pathlib.Path) -> None:
    repo = root / "repo"
    os.environ["WAYMARK_HOME"] = str(root / "home")
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    git = ["git", "-C", str(repo), "-c", "user.email=b@x", "-c", "user.name=b"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "shop"], check=True)
    from waymark.handoff import checkpoints
    from waymark.memories import links, store
    from waymark.memories.draft import make_draft
    from waymark.projects.resolve import resolve
    from waymark.storage import connection as db

    conn = db.connect()
    project = resolve(conn, str(repo))
    rng = random.Random(7)
    made = []
    for n in range(400):
        kind = TYPES[n % len(TYPES)]
        words = " ".join(rng.choice(WORDS) for _ in range(12))
        fields: dict = {"type": kind, "content": f"{kind} {n}: {words}"}
        if n % 7 == 0:
            target = TARGETS[n % len(TARGETS)]
            fields |= {"scope": "symbol" if "::" in target else "file", "target": target}
        if kind == "convention" and n % 3 == 0:
            fields["pinned"] = True
        made.append(store.remember(conn, project, make_draft(project, **fields)).memory)
    for n in range(0, 300, 10):
        links.relate(conn, project, made[n].id, made[n + 3].id, "related")
    checkpoints.create(conn, project, {"objective": "Refunds through the ledger",
                                       "next_action": "wire refund() into the invoice",
                                       "relevant_files": ["src/shop/refund.py"],
                                       "failed_approaches": [{
                                           "approach": "patch refund.py in place",
                                           "why_failed": "the ledger went out of balance"}]})  # fmt: skip
    store.remember(conn, project, make_draft(project, type="warning", content="Never run make "
                                             "deploy on a Friday: it locks the queue"))  # fmt: skip
    from waymark.base import clock
    from waymark.storage import command_failures, sessions

    with db.write(conn):  # a command that failed twice before
        sessions.insert_session(conn, "old", "claude-code", project.id, clock.now(), None, None)
        for _ in range(2):
            command_failures.add_command_failure(conn, project.id, "old", clock.now(), "0" * 40,
                                         "pytest -x", 1, "E   AssertionError: 2 != 3")  # fmt: skip
    conn.close()
    waymark(repo, "map", "refresh")
    waymark(repo, "notes", "refresh")


def dump(root: pathlib.Path) -> dict:
    os.environ["WAYMARK_HOME"] = str(root / "home")
    from waymark.packets.prompt import prompt_packet
    from waymark.packets.session_start import packet
    from waymark.packets.tool import tool_packet
    from waymark.projects import git
    from waymark.projects.resolve import resolve
    from waymark.storage import connection as db

    repo = str(root / "repo")
    conn = db.connect()
    project = resolve(conn, repo, create=False, bind=False)
    rng = random.Random(11)
    prompts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9))) for _ in range(30)]
    prompts += ["fix the rounding in src/shop/money.py", "why does cart.py total() overflow",
                "deploy the app to staging", "publish the wheel for the release",
                "what depends on src/shop/cart.py::total", "refund() in src/shop/refund.py",
                "the invoice is wrong", "run the migration again", "hello"]  # fmt: skip
    out: dict = {}
    for client in ("claude-code", "codex"):
        for full in (True, False):
            text, _ = packet(conn, project, "dump", full=full, head=git.head(repo),
                             dirty=lambda: None, branch=git.branch(repo), client=client)  # fmt: skip
            out[f"start {client} {'full' if full else 'compact'}"] = text
        for prompt in prompts:
            out[f"prompt {client} {prompt!r}"] = prompt_packet(
                conn, project, "dump", client, prompt, record=False
            )
        for paths, command in TOOL_CALLS:
            text, asked = tool_packet(conn, project, "dump", client, paths=paths, command=command,
                                      cwd=repo, record=False)  # fmt: skip
            out[f"tool {client} {paths} {command!r}"] = [text, repr(asked)]
    conn.close()
    return out


# (paths, command) of PreToolUse calls: an edit, a command, both, a reader, none known.
TOOL_CALLS = (
    (["src/shop/refund.py"], None), (["src/shop/money.py"], None), (["src/shop/cart.py"], None),
    ([], "pytest -x"), ([], "make deploy"), ([], "cat src/shop/cart.py"),
    ([], "sed -i s/a/b/ src/shop/money.py"), (["procedures/release.md"], None),
    ([], "make build && make migrate"), (["README.md"], "git status"),
)  # fmt: skip


if __name__ == "__main__":
    verb, where = sys.argv[1], pathlib.Path(sys.argv[2]).resolve()
    if verb == "build":
        where.mkdir(parents=True, exist_ok=False)
        (where / "repo").mkdir()
        build(where)
    else:
        print(json.dumps(dump(where), indent=1, sort_keys=True))
