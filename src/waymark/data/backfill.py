"""Backfill from past sessions: the transcripts Claude Code and Codex already keep on this
machine, read once, proposed as candidates (never an active memory without review).

Read: Claude Code's project transcripts (`<config>/projects/*/*.jsonl`) and Codex's rollout
files (`<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-*.jsonl`) whose working directory is inside
this project, line by line (a line over MAX_LINE is skipped, never loaded whole), each text
redacted as it is read, before anything else looks at it. Proposed, each with its source
(file, line) and date:
- decisions the assistant stated ("we decided", "going with", "decision:" ...), as decisions;
- a failed command and what fixed it: the same command passing later in the session, after
  the commands run in between, as a lesson;
- the files each session edited, as a note.
Idempotent: every proposal's fingerprint is its transcript, line and kind, so a second run
proposes nothing new, and a rejected one is never proposed again. Bounded: `--since`, at most
`seconds` of reading, and memory per line.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

from waymark.base import clock, redact, shell
from waymark.curation import candidates
from waymark.errors import InvalidArgument
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage.connection import Connection

MAX_LINE = 2 * 1024 * 1024
SHELL_TOOLS = ("Bash", "exec_command", "shell", "shell_command", "local_shell")
EDIT_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit", "apply_patch")
_DECIDED = re.compile(
    r"\b(?:we|i)\s+(?:decided|chose|settled on|agreed)\b|\bdecision:|\bgoing with\b"
    r"|\bwe(?:'ll| will) use\b|\binstead of\b.*\bbecause\b",
    re.IGNORECASE,
)
_EXIT = re.compile(r"(?:exited with code|exit code:?)\s*(-?\d+)", re.IGNORECASE)
_PATCH = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
SENTENCE_MAX = 400


def sources(client: str | None, claude_dir: str, codex_dir: str) -> list[tuple[str, str]]:
    """(client, transcript path) of every transcript on the machine, oldest first."""
    found: list[tuple[float, str, str]] = []
    if client in (None, "claude"):
        base = os.path.join(claude_dir, "projects")
        for folder in _dirs(base):
            for name in _names(folder):
                if name.endswith(".jsonl"):
                    found.append(_stamped("claude", os.path.join(folder, name)))
    if client in (None, "codex"):
        for base, _, names in os.walk(os.path.join(codex_dir, "sessions")):
            for name in names:
                if name.startswith("rollout-") and name.endswith(".jsonl"):
                    found.append(_stamped("codex", os.path.join(base, name)))
    return [(c, p) for _, c, p in sorted(found)]


def _stamped(client: str, path: str) -> tuple[float, str, str]:
    try:
        return os.stat(path).st_mtime, client, path
    except OSError:
        return 0.0, client, path


def _dirs(path: str) -> list[str]:
    try:
        return sorted(e.path for e in os.scandir(path) if e.is_dir(follow_symlinks=False))
    except OSError:
        return []


def _names(path: str) -> list[str]:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def _lines(path: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, JSON object) of a transcript; oversized or broken lines skipped."""
    from waymark.base.files import json_lines

    return json_lines(path, MAX_LINE)


def steps(client: str, path: str, contacts: bool) -> Iterator[dict[str, Any]]:
    """The transcript as steps, every text redacted as read: {line, at, cwd, kind (text,
    command, edit, result), ...}."""
    reader = _claude if client == "claude" else _codex
    for n, item in _lines(path):
        for step in reader(item):
            for key in ("text", "command", "output", "path"):
                if isinstance(step.get(key), str):
                    step[key] = redact.scrub_long(step[key], contacts=contacts)[0]
            yield {"line": n, **step}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _claude(item: dict[str, Any]) -> list[dict[str, Any]]:
    at, cwd = item.get("timestamp"), item.get("cwd")
    content = _list(_dict(item.get("message")).get("content"))
    out = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if item.get("type") == "assistant" and part.get("type") == "text":
            out.append({"kind": "text", "text": str(part.get("text") or ""), "at": at, "cwd": cwd})
        elif item.get("type") == "assistant" and part.get("type") == "tool_use":
            data = _dict(part.get("input"))
            if part.get("name") in SHELL_TOOLS and isinstance(data.get("command"), str):
                out.append({"kind": "command", "id": part.get("id"), "command": data["command"],
                            "at": at, "cwd": cwd})  # fmt: skip
            elif part.get("name") in EDIT_TOOLS:
                target = data.get("file_path") or data.get("notebook_path")
                if isinstance(target, str):
                    out.append({"kind": "edit", "path": target, "at": at, "cwd": cwd})
        elif item.get("type") == "user" and part.get("type") == "tool_result":
            said = part.get("content")
            text = said if isinstance(said, str) else json.dumps(said)[:4000]
            out.append({"kind": "result", "id": part.get("tool_use_id"),
                        "failed": bool(part.get("is_error")), "output": text[-2000:], "at": at})  # fmt: skip
    return out


def _codex(item: dict[str, Any]) -> list[dict[str, Any]]:
    at = item.get("timestamp")
    p = _dict(item.get("payload"))
    kind = p.get("type")
    if item.get("type") == "session_meta":
        return [{"kind": "meta", "cwd": p.get("cwd"), "at": p.get("timestamp") or at}]
    if item.get("type") != "response_item":
        return []
    if kind == "message" and p.get("role") == "assistant":
        texts = [c.get("text") for c in _list(p.get("content")) if isinstance(c, dict)]
        return [
            {"kind": "text", "text": " ".join(t for t in texts if isinstance(t, str)), "at": at}
        ]
    if kind == "function_call" and p.get("name") in SHELL_TOOLS:
        try:
            args = json.loads(p.get("arguments") or "{}")
        except ValueError:
            return []
        command = args.get("cmd") or args.get("command")
        if isinstance(command, list):
            command = " ".join(str(c) for c in command)
        if not isinstance(command, str):
            return []
        out = [{"kind": "command", "id": p.get("call_id"), "command": command, "at": at}]
        out += [{"kind": "edit", "path": m.strip(), "at": at} for m in _PATCH.findall(command)]
        return out
    if kind == "function_call_output":
        raw = p.get("output")
        output = raw if isinstance(raw, str) else json.dumps(raw)
        match = _EXIT.search(output[:2000])
        return [{"kind": "result", "id": p.get("call_id"), "output": output[-2000:], "at": at,
                 "failed": bool(match and match.group(1) != "0")}]  # fmt: skip
    return []


def _inside(root: str, cwd: str | None) -> bool:
    if not cwd:
        return False
    real, top = os.path.realpath(cwd), os.path.realpath(root)
    return real == top or real.startswith(top + os.sep)


def proposals(client: str, path: str, root: str, contacts: bool) -> list[dict[str, Any]]:
    """What one transcript proposes, or [] when it is another project's."""
    name = os.path.basename(path)
    out: list[dict[str, Any]] = []
    commands: dict[str, dict[str, Any]] = {}
    ran: list[dict[str, Any]] = []  # commands in order, with their outcome
    edited: dict[str, None] = {}
    cwd, first_at = None, None
    for step in steps(client, path, contacts):
        cwd = step.get("cwd") or cwd
        first_at = first_at or step.get("at")
        if step["kind"] == "text":
            for sentence in _sentences(step["text"]):
                if _DECIDED.search(sentence):
                    out.append({"kind": "decision", "line": step["line"], "at": step.get("at"),
                                "text": sentence})  # fmt: skip
        elif step["kind"] == "command":
            commands[str(step.get("id"))] = step
        elif step["kind"] == "result" and str(step.get("id")) in commands:
            done = {**commands.pop(str(step.get("id"))), "failed": step["failed"],
                    "output": step.get("output") or ""}  # fmt: skip
            ran.append(done)
        elif step["kind"] == "edit":
            target = step["path"]
            if cwd and os.path.isabs(target) and _inside(root, target):
                target = os.path.relpath(os.path.realpath(target), os.path.realpath(root))
            if not os.path.isabs(target):
                edited[target.replace(os.sep, "/")] = None
    if not _inside(root, cwd):
        return []
    out += _fixes(ran)
    if edited:
        out.append({"kind": "edits", "line": 1, "at": first_at, "files": list(edited)[:20]})
    for p in out:
        p["source"] = f"{name}:{p['line']}"
        p["client"] = client
    return out


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+|\n+", text or "")
    return [" ".join(p.split())[:SENTENCE_MAX] for p in parts if len(p.split()) >= 4]


def _fixes(ran: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A failed command whose same head passed later: the commands in between fixed it."""
    from waymark.curation import signature

    out = []
    for i, step in enumerate(ran):
        if not step["failed"]:
            continue
        head = shell.head(step["command"])
        for j in range(i + 1, len(ran)):
            later = ran[j]
            if shell.head(later["command"]) == head and not later["failed"]:
                between = [r["command"] for r in ran[i + 1 : j]
                           if shell.program(r["command"]) not in shell.READERS]  # fmt: skip
                out.append({
                    "kind": "fix", "line": step["line"], "at": step.get("at"),
                    "command": " ".join(step["command"].split())[:200],
                    "error": signature.telling_line(step["output"])[:200],
                    "signature": signature.of(step["command"], step["output"]),
                    "between": [" ".join(c.split())[:160] for c in between[-4:]],
                })  # fmt: skip
                break
    return out


def _fields(p: dict[str, Any]) -> tuple[dict[str, Any], str]:
    date = str(p.get("at") or "")[:10]
    if p["kind"] == "decision":
        return {"type": "decision", "content": p["text"], "tags": ["backfill"]}, "a decision stated"
    if p["kind"] == "fix":
        how = ("after running " + ", ".join(f"`{c}`" for c in p["between"])) if p["between"] \
            else "on a later run"  # fmt: skip
        content = (f"`{p['command']}` failed" + (f" with: {p['error']}" if p["error"] else "")
                   + f"; it passed {how}" + (f" ({date})" if date else "") + ".")  # fmt: skip
        return {"type": "lesson", "title": f"`{p['command'][:80]}` failed, then passed",
                "content": content, "tags": ["backfill", "failure-fix"]}, "a failure and its fix"  # fmt: skip
    files = p["files"]
    content = f"A session{' on ' + date if date else ''} edited: {', '.join(files)}."
    return {"type": "note", "content": content, "tags": ["backfill"]}, "the files a session edited"


def _since(since: str) -> float:
    """`--since` as seconds since 1970: a date (YYYY-MM-DD) or a UTC time; anything else is
    `invalid_argument`, never a crash."""
    from datetime import date, datetime

    try:
        if "T" in since:
            datetime.fromisoformat(since.replace("Z", "+00:00"))
            return clock.epoch(since)
        date.fromisoformat(since)
        return clock.epoch(since + "T00:00:00Z")
    except ValueError:
        raise InvalidArgument(
            f"--since takes a date (YYYY-MM-DD) or a UTC time (YYYY-MM-DDTHH:MM:SSZ), not {since!r}"
        ) from None


def backfill(
    conn: Connection, project: Project, claude_dir: str, codex_dir: str, *,
    client: str | None = None, since: str | None = None, dry_run: bool = False,
    seconds: float = 300.0, progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Read the transcripts and propose; {transcripts, read, proposed, known, seconds,
    stopped (ran out of time), by_kind}."""
    from waymark import settings

    root = project.files
    if not root:
        raise InvalidArgument(
            "backfill needs a project directory (its transcripts are found by it)"
        )
    contacts = bool(settings.get(conn, "capture.redact_contacts"))
    found = sources(client, claude_dir, codex_dir)
    if since:
        cut = _since(since)
        found = [(c, p) for c, p in found if _stamped(c, p)[0] >= cut]
    started = time.perf_counter()
    counts: dict[str, Any] = {"transcripts": len(found), "read": 0, "proposed": 0, "known": 0,
                              "stopped": False}  # fmt: skip
    kinds: dict[str, int] = {}
    counts["by_kind"] = kinds
    for n, (which, path) in enumerate(found, 1):
        if time.perf_counter() - started > seconds:
            counts["stopped"] = True
            break
        try:
            made = proposals(which, path, root, contacts)
        except OSError:
            continue
        counts["read"] += 1
        with db.write(conn):
            for p in made:
                fields, why = _fields(p)
                fingerprint = f"backfill:{which}:{p['source']}:{p['kind']}"
                if dry_run:
                    known = candidates.exists(conn, project.id, fingerprint)
                else:
                    _, new = candidates.propose(
                        conn, project.id, kind="backfill", reason=f"{why} in {p['source']}",
                        fingerprint=fingerprint, fields=fields,
                        evidence=[{"url": f"file://{path}#L{p['line']}",
                                   "note": f"{which} transcript {p['source']},"
                                           f" {str(p.get('at') or '')[:10]}"}],
                    )  # fmt: skip
                    known = not new
                counts["known" if known else "proposed"] += 1
                kinds[p["kind"]] = kinds.get(p["kind"], 0) + (0 if known else 1)
        if progress is not None:
            progress(n, len(found))
    counts["seconds"] = round(time.perf_counter() - started, 2)
    return counts
