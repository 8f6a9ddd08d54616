"""Tokens kept out of the context by `[output] trim_over`, on a recorded session.

bench/sessions/verbose-shell.jsonl holds the PostToolUse payloads of a session's shell calls
as Claude Code sends them (recorded from real runs of the commands below in this repository,
each stream capped at 64 KB). Each is replayed through the real PostToolUse hook process in a
scratch project with `[output] trim_over = N`; the tokens of what the model would see (the
tool output as the client serialises it) are counted before and after.

    python bench/trim.py [--trim-over 8000]
    python bench/trim.py --record      # re-record the session from this checkout
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import uuid

from waymark.base import launch
from waymark.base.tokens import estimate

ROOT = pathlib.Path(__file__).resolve().parents[1]
SESSION = ROOT / "bench" / "sessions" / "verbose-shell.jsonl"
CAP = 64 * 1024
COMMANDS = (
    "git log --stat -n 25",
    "git status",
    "ls -laR src",
    "python -m pytest tests/test_text.py tests/test_jsonlite.py -v -p no:cacheprovider",
    "python -m pip list -v",
    "grep -rn 'def ' src/waymark",
    "python -m pip show -f apsw",
    "git diff HEAD~5 --stat",
    "cat README.md",
    'python -c "import sys; print(sys.version)"',
)


def record() -> None:
    SESSION.parent.mkdir(exist_ok=True)
    session = str(uuid.uuid4())
    with open(SESSION, "w", encoding="utf-8") as out:
        for command in COMMANDS:
            done = subprocess.run(
                command, shell=True, cwd=ROOT, capture_output=True, text=True, timeout=300
            )
            payload = {
                "session_id": session,
                "transcript_path": f"/tmp/claude-session/{session}.jsonl",
                "cwd": "@PROJECT@",
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": command, "description": "run it"},
                "tool_response": {
                    "stdout": done.stdout[:CAP],
                    "stderr": done.stderr[:CAP],
                    "interrupted": False,
                    "isImage": False,
                },
                "tool_use_id": f"toolu_{uuid.uuid4().hex[:24]}",
            }
            out.write(json.dumps(payload) + "\n")
    print(f"recorded {len(COMMANDS)} calls into {SESSION.relative_to(ROOT)}")


def replay(trim_over: int) -> int:
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="waymark-trim-"))
    project = tmp / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".waymark.toml").write_text(f"[output]\ntrim_over = {trim_over}\n")
    env = dict(os.environ, WAYMARK_HOME=str(tmp / "home"))
    lines = SESSION.read_text(encoding="utf-8").splitlines()
    before_total = after_total = 0
    print(f"trim_over = {trim_over} characters a stream; tokens as the model would get them")
    print(f"{'command':<58} {'chars':>8} {'tokens':>7} {'shown':>7} {'saved':>6}")
    for line in lines:
        data = json.loads(line.replace("@PROJECT@", str(project)))
        data["turn_id"] = uuid.uuid4().hex
        done = subprocess.run(
            launch.argv(sys.executable, "post_tool_use", "claude-code"),
            input=json.dumps(data).encode(),
            capture_output=True,
            env=env,
            timeout=60,
        )
        original = data["tool_response"]
        shown = original
        if done.stdout.strip():
            shown = json.loads(done.stdout)["hookSpecificOutput"]["updatedToolOutput"]
        before = estimate(original["stdout"] + original["stderr"])
        after = estimate(shown["stdout"] + shown["stderr"])
        before_total += before
        after_total += after
        chars = len(original["stdout"]) + len(original["stderr"])
        command = data["tool_input"]["command"]
        saved = f"{100 * (before - after) / before:.0f}%" if before else "-"
        print(f"{command[:58]:<58} {chars:>8,} {before:>7,} {after:>7,} {saved:>6}")
    saved = 100 * (before_total - after_total) / before_total
    print(
        f"{'whole session (' + str(len(lines)) + ' calls)':<58} {'':>8} {before_total:>7,}"
        f" {after_total:>7,} {saved:>5.0f}%"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trim-over", type=int, default=8000)
    parser.add_argument("--record", action="store_true", help="re-record the session")
    args = parser.parse_args()
    if args.record:
        record()
        return 0
    return replay(args.trim_over)


if __name__ == "__main__":
    raise SystemExit(main())
