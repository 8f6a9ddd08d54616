"""`waymark doctor --self-test`: fire each installed hook command exactly as its client
would (through the shell, the event's JSON on stdin, within its timeout) and say what each
one did: its exit status, its time, whether its output is one the client accepts, and
whether it reached Waymark (its run is in the hook-run record).

The payload is a marker: a session id no client makes (`waymark-self-test-…`) and a fresh
empty folder as the working directory, so no hook finds a project, records a session or
injects anything; the run is recorded as the client `self-test`, never as the client it
imitates (`base.hookruns`).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
import uuid

from waymark import home
from waymark.base import hookruns
from waymark.health.doctor import FAIL, OK, WARN, finding

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

# Codex rejects a hook's output with any other top-level key.
CODEX_KEYS = frozenset((
    "continue", "stopReason", "suppressOutput", "systemMessage", "decision", "reason",
    "hookSpecificOutput",
))  # fmt: skip
SLOW = 0.5  # of the hook's timeout: past it, a warning


def payload(client: str, event: str, cwd: str) -> dict[str, Any]:
    """The event's JSON as `client` sends it, with a marker session id."""
    session = f"waymark-self-test-{uuid.uuid4().hex[:12]}"
    base: dict[str, Any] = {
        "session_id": session, "transcript_path": None, "cwd": cwd, "hook_event_name": event,
    }  # fmt: skip
    shell: dict[str, Any] = {"tool_name": "Bash", "tool_input": {"command": "true"},
             "tool_use_id": f"self-test-{uuid.uuid4().hex[:8]}"}  # fmt: skip
    extras: dict[str, dict[str, Any]] = {
        "SessionStart": {"source": "startup"},
        "UserPromptSubmit": {"prompt": "waymark self-test"},
        "PreToolUse": shell,
        "PostToolUse": {**shell, "tool_response": "" if client == "codex" else {"stdout": ""}},
        "PostToolUseFailure": {**shell, "error": "Exit code 1\nwaymark self-test"},
        "SubagentStart": {"agent_id": "self-test", "agent_type": "general-purpose"},
        "PreCompact": {"trigger": "manual", "custom_instructions": ""},
        "PostCompact": {"trigger": "manual", "compact_summary": "waymark self-test"},
        "Stop": {"stop_hook_active": False, "last_assistant_message": ""},
        "SubagentStop": {
            "agent_id": "self-test",
            "agent_type": "general-purpose",
            "stop_hook_active": False,
            "last_assistant_message": "",
        },  # fmt: skip
        "SessionEnd": {"reason": "other"},
    }
    return {**base, **extras.get(event, {})}


def fire(client: str, event: str, command: str | list[str], timeout: float) -> dict[str, str]:
    """Run one installed hook command as `client` would for `event` (a command line through
    the shell, an argv, Claude Code's exec form, without); the finding."""
    check = f"{client} {event} self-test"
    with tempfile.TemporaryDirectory(prefix="waymark-self-test-") as cwd:
        data = json.dumps(payload(client, event, cwd)).encode("utf-8")
        env = {**os.environ, hookruns.SELF_TEST_ENV: "1"}
        before = time.time()
        started = time.perf_counter()
        try:
            done = subprocess.run(
                command, shell=isinstance(command, str), input=data, capture_output=True,
                timeout=timeout, cwd=cwd, env=env,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return finding(check, FAIL, f"did not finish within its {timeout:g} s timeout",
                           "see hooks.log in the data home; `waymark install` again")  # fmt: skip
        except OSError as exc:
            return finding(check, FAIL, f"could not start: {exc}", _fix(client))
    ms = 1000 * (time.perf_counter() - started)
    said = f"exit {done.returncode} in {ms:.0f} ms"
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return finding(check, FAIL, said + (f": {err[-1][:200]}" if err else ""), _fix(client))
    bad = _bad_output(client, done.stdout)
    if bad:
        return finding(check, FAIL, f"{said}, but {bad}", "report this: the client would drop it")
    if os.path.isdir(home.data_home()) and not _recorded(event, before):
        return finding(check, FAIL, f"{said}, but the command never reached Waymark's hook"
                       " (no run recorded)", _fix(client))  # fmt: skip
    if ms > SLOW * timeout * 1000:
        return finding(check, WARN, f"{said}: over half its {timeout:g} s timeout",
                       "a slow disk or interpreter; see `waymark status`")  # fmt: skip
    return finding(check, OK, said)


def _fix(client: str) -> str:
    return f"waymark install --client {client} (or run install.sh again)"


def _bad_output(client: str, stdout: bytes) -> str | None:
    """Why the client would refuse this output, or None: empty, or one JSON object (Codex:
    of the keys it knows only)."""
    text = stdout.decode("utf-8", "replace").strip()
    if not text:
        return None
    try:
        out = json.loads(text)
    except ValueError:
        return "its output is not JSON"
    if not isinstance(out, dict):
        return "its output is not a JSON object"
    if client == "codex" and set(out) - CODEX_KEYS:
        return f"its output has keys Codex refuses: {', '.join(sorted(set(out) - CODEX_KEYS))}"
    return None


def _recorded(event: str, since: float) -> bool:
    """A self-test run of `event` ended after `since` (epoch seconds) in the hook-run record
    (its time is taken as it exits, to the millisecond, after the command started)."""
    stamp = (
        time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(since)) + f".{int(since % 1 * 1000):03d}Z"
    )
    return any(run[1] == hookruns.SELF_TEST and run[2] == event and run[0] >= stamp
               for run in hookruns.runs())  # fmt: skip
