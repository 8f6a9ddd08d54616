"""Skills learned from work: a procedure the sessions already wrote down or performed becomes a
skill candidate, never an active memory without review.

Where one is found:
- a checkpoint or a memory whose text holds numbered steps (`1. ...`, `Step 2: ...`, three or
  more in a row);
- a command sequence that made a failing check pass: a recorded failure whose command then
  passed after the session ran other commands (the ledger's `tried`), the fix as steps.

A skill has a trigger (the commands and paths its steps name, and for a fix the failing
command with its error signature), its steps, and a validation rule (the check that must pass:
the failed command, or the steps' last test command). Approved, it is a `solution` memory
tagged `skill` and keyed `skill:<name>`; PreToolUse names it in one line when the command about
to run or the file about to change matches its trigger (`packets.tool`).
"""

from __future__ import annotations

import re

from waymark.base import clock, shell
from waymark.base import jsonlite as json
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

TAG = "skill"
MIN_STEPS = 3
STEPS_MAX = 12
DAYS = 90
_STEP = re.compile(r"^\s*(?:(\d{1,2})[.)]|step\s+(\d{1,2})\s*[:.)-])\s+(.+?)\s*$", re.IGNORECASE)
_TICKS = re.compile(r"`([^`\n]{2,200})`")
_TESTS = ("pytest", "npm test", "npm run test", "go test", "cargo test", "make test", "tox")


def steps_in(text: str) -> list[str]:
    """The longest run of numbered steps in `text` (1, 2, 3 ... or Step 1:, Step 2: ...),
    MIN_STEPS or more, else []."""
    best: list[str] = []
    run: list[str] = []
    last = 0
    for line in (text or "").splitlines():
        match = _STEP.match(line)
        number = int(match.group(1) or match.group(2)) if match else 0
        if match and number == last + 1:
            run.append(match.group(3))
            last = number
            continue
        if match and number == 1:
            run, last = [match.group(3)], 1
            continue
        if len(run) > len(best):
            best = run
        if line.strip():
            run, last = [], 0
    if len(run) > len(best):
        best = run
    return best[:STEPS_MAX] if len(best) >= MIN_STEPS else []


def trigger_of(steps: list[str]) -> dict[str, list[str]]:
    """{commands, paths}: the program and subcommand of each command the steps quote, and
    the file paths they name."""
    from waymark.projects.pathnames import mentioned

    commands: list[str] = []
    paths: list[str] = []
    for step in steps:
        for quoted in _TICKS.findall(step):  # a command is what a step quotes...
            if " " not in quoted.strip() and mentioned(quoted):
                paths.append(quoted.strip())  # ...unless it is a file's name
                continue
            said = shell.summary(quoted)
            if said and shell.program(quoted) not in shell.READERS and said not in commands:
                commands.append(said)
        paths += mentioned(_TICKS.sub(" ", step))  # a command's arguments are not files
    return {"commands": commands[:6], "paths": list(dict.fromkeys(paths))[:6]}


def validation_of(steps: list[str], failing: str | None = None) -> str:
    """The check that says the skill worked."""
    if failing:
        return f"`{failing}` passes"
    for step in reversed(steps):
        for quoted in _TICKS.findall(step):
            if any(quoted.startswith(t) for t in _TESTS):
                return f"`{quoted}` passes"
    return "the last step succeeds"


def _slug(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words[:6]) or "skill"


def _fields(name: str, steps: list[str], trigger: dict[str, list[str]], check: str,
            signature: str | None = None) -> dict[str, Any]:  # fmt: skip
    when = [f"running `{c}`" for c in trigger["commands"]] + [
        f"editing {p}" for p in trigger["paths"]
    ]
    if signature:
        when.insert(0, f"the error `{signature}`")
    numbered = " ".join(f"{i}. {s.rstrip('.')}." for i, s in enumerate(steps, 1))
    return {
        "type": "solution",
        "title": f"Skill: {name}"[:120],
        "content": f"When {', '.join(when) or 'this comes up'}: {numbered} Check: {check}.",
        "tags": [TAG],
        "key": f"skill:{_slug(name)}",
    }


def _evidence(trigger: dict[str, list[str]]) -> list[dict[str, str]]:
    return [{"command": c} for c in trigger["commands"]] + [{"path": p} for p in trigger["paths"]]


def extract(
    conn: Connection, project: Project, session_id: str | None = None
) -> list[dict[str, Any]]:
    """Propose a skill candidate for each procedure found (refreshed while it waits, never
    twice for one source); [{id, name, source, steps}] of those proposed now or waiting."""
    found = _from_texts(conn, project) + _from_fixes(conn, project)
    out = []
    from waymark.curation import candidates

    with db.write(conn):
        for name, steps, trigger, check, signature, source, fingerprint in found:
            row, _ = candidates.propose(
                conn, project.id, kind="skill",
                reason=f"a procedure of {len(steps)} steps in {source}",
                fingerprint=f"skill:{fingerprint}",
                fields=_fields(name, steps, trigger, check, signature),
                evidence=_evidence(trigger), session_id=session_id,
            )  # fmt: skip
            if row["status"] == "pending":
                out.append({"id": row["id"], "name": name, "source": source, "steps": steps})
    return out


def _from_texts(conn: Connection, project: Project) -> list[tuple[Any, ...]]:
    """Numbered steps in the project's checkpoints and recent memories."""
    from waymark.storage import checkpoints as checkpoint_rows
    from waymark.storage import memories as memory_rows

    out = []
    for checkpoint_id in checkpoint_rows.checkpoint_ids(conn, project.id, 50):
        revs = checkpoint_rows.revisions(conn, checkpoint_id)
        if not revs:
            continue
        body = json.loads(revs[-1][5]) if revs[-1][5] else {}
        text = "\n".join(_strings(body))
        steps = steps_in(text)
        if steps:
            name = str(body.get("objective") or "checkpoint procedure")
            out.append((name, steps, trigger_of(steps), validation_of(steps), None,
                        f"checkpoint {checkpoint_id}", f"checkpoint:{checkpoint_id}"))  # fmt: skip
    since = clock.second(clock.epoch(clock.now()) - DAYS * 86400)
    for m in memory_rows.with_steps_since(conn, project.id, since, 200):
        if TAG in m.tags:
            continue  # a skill already
        steps = steps_in(m.content)
        if steps:
            out.append((m.title, steps, trigger_of(steps), validation_of(steps), None,
                        f"memory {m.id}", f"memory:{m.id}"))  # fmt: skip
    return out


def _strings(value: Any) -> list[str]:
    """Every line of text in a checkpoint's body, in order."""
    if isinstance(value, str):
        return value.splitlines()
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _from_fixes(conn: Connection, project: Project) -> list[tuple[Any, ...]]:
    """A failing check made to pass by a sequence of commands: the commands, then the check."""
    from waymark.storage import command_failures

    since = clock.second(clock.epoch(clock.now()) - DAYS * 86400)
    out = []
    for f in command_failures.project_failures_since(conn, project.id, since, 300):
        tried = json.loads(f["tried"]) if f.get("tried") else []
        if not f.get("passed_at") or len(tried) < 1:
            continue
        steps = [f"run `{c}`" for c in tried] + [f"rerun `{f['command']}`"]
        if len(steps) < 2:
            continue
        trigger = {"commands": [shell.summary(f["command"])], "paths": []}
        signature = f.get("signature") or None
        name = f"make `{shell.summary(f['command'])}` pass"
        out.append((name, steps, trigger, validation_of(steps, f["command"]), signature,
                    f"failure:{f['id']}", f"fix:{f['signature'] or f['command']}"))  # fmt: skip
    return out


def listing(conn: Connection, project: Project) -> list[dict[str, Any]]:
    """The approved skills: {id, title, content, trigger}."""
    from waymark.storage import memories as memory_rows

    out = []
    for m in memory_rows.tagged(conn, project.id, TAG, 200):
        out.append({"id": m.id, "title": m.title, "content": m.content,
                     "trigger": [e.get("command") or e.get("path") for e in m.evidence]})  # fmt: skip
    return out
