"""Backfill at scale: `--transcripts` synthetic Claude Code transcripts (the real line shapes,
tests/test_backfill.py) of `--steps` tool calls each, for one project, read by
`waymark.data.backfill` as `waymark backfill` runs it; then again (idempotent). Prints the
time, transcripts per second, the peak memory of the process and what was proposed.

    python bench/backfill.py [--transcripts 1000] [--steps 40]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile
import time

from waymark.data import backfill
from waymark.projects import capture
from waymark.projects.resolve import resolve
from waymark.storage import connection as db


def transcript(cwd: str, n: int, steps: int) -> str:
    lines = []

    def say(kind: str, content, k: int) -> None:
        lines.append(json.dumps({"type": kind, "cwd": cwd, "sessionId": f"s{n}",
                                 "timestamp": f"2026-11-{1 + n % 28:02d}T10:{k // 60 % 60:02d}:{k % 60:02d}.000Z",
                                 "message": {"role": kind, "content": content}}))  # fmt: skip

    say("user", f"Work on task {n}", 0)
    say("assistant", [{"type": "text", "text": f"We decided to use approach {n % 7} instead of"
                       " the old one because it keeps retries idempotent."}], 1)  # fmt: skip
    for k in range(steps):
        tool = f"t{k}"
        if k % 10 == 3:
            command, result = (
                f"pytest tests/test_{n % 50}.py",
                ("Exit code 1\nE   AssertionError: x", True),
            )
        elif k % 10 == 4:
            command, result = f"pip install dep{n % 9}", ("ok", False)
        elif k % 10 == 5:
            command, result = f"pytest tests/test_{n % 50}.py", ("3 passed", False)
        elif k % 10 == 7:
            say(
                "assistant",
                [
                    {
                        "type": "tool_use",
                        "id": tool,
                        "name": "Write",
                        "input": {
                            "file_path": f"{cwd}/src/mod{k % 13}.py",
                            "content": "x = 1\n" * 50,
                        },
                    }
                ],
                k + 2,
            )
            continue
        else:
            command, result = f"ls src/mod{k % 13}", ("mod.py\n" * 20, False)
        say("assistant", [{"type": "tool_use", "id": tool, "name": "Bash",
                           "input": {"command": command}}], k + 2)  # fmt: skip
        say("user", [{"type": "tool_result", "tool_use_id": tool, "content": result[0],
                      "is_error": result[1]}], k + 2)  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transcripts", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="waymark-backfill-"))
    try:
        repo = tmp / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        os.environ["WAYMARK_HOME"] = str(tmp / "home")
        claude = tmp / "claude" / "projects" / "-repo"
        claude.mkdir(parents=True)
        size = 0
        for n in range(args.transcripts):
            text = transcript(str(repo), n, args.steps)
            size += len(text)
            (claude / f"t{n:05d}.jsonl").write_text(text, encoding="utf-8")
        conn = db.connect()
        project = resolve(conn, str(repo))
        capture.set_enabled(conn, project, True)
        print(f"{args.transcripts:,} transcripts of {args.steps} tool calls, {size / 1e6:.1f} MB")
        for run in ("first", "second"):
            started = time.perf_counter()
            done = backfill.backfill(conn, project, str(tmp / "claude"), str(tmp / "codex"),
                                     seconds=3600)  # fmt: skip
            took = time.perf_counter() - started
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"{run} run: read {done['read']:,} in {took:.1f} s"
                f" ({done['read'] / took:,.0f} transcripts/s), proposed {done['proposed']:,}"
                f" ({done['by_kind']}), known {done['known']:,}; peak memory {peak:,.0f} MB"
            )
        conn.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
