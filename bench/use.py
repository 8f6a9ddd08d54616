"""Measured use and what it changes, on handoff sessions run through the real hooks.

A git repository and the synthetic corpus (bench/corpus.py) with an active checkpoint, then
`--sessions` sessions, each as a client runs it: SessionStart, `--prompts` prompts
(UserPromptSubmit), Stop with the agent's last message and SessionEnd, every hook a real
process. The agent cites the ids of the decisions and conventions it was shown (what a
careful agent would follow) and nothing else, so facts and the rest go unused. Printed: per
block of sessions, the items shown and used, the use rate, the tokens injected per session
and per used item, whether every SessionStart still carried the checkpoint's next action (the
handoff), and at the end the section budgets measured use cut.

    python bench/use.py [--memories 2000] [--sessions 40] [--prompts 3] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import re
import shutil
import subprocess
import sys
import tempfile
import uuid

import corpus
from waymark.base import launch
from waymark.handoff import checkpoints
from waymark.projects import capture
from waymark.projects.resolve import resolve
from waymark.storage import connection as db

NEXT = "Add the idempotency-key check to the webhook handler and rerun its tests"
CITED_TYPES = ("decision", "convention")
_ID = re.compile(r"id ([0-9A-Z]{26})\]")


def git(repo: pathlib.Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")  # fmt: skip
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)


def run_hook(module: str, data: dict) -> str:
    done = subprocess.run(launch.argv(sys.executable, module, "claude-code"),
                          input=json.dumps(data).encode(), capture_output=True, timeout=60)  # fmt: skip
    if done.returncode != 0 or done.stderr:
        raise SystemExit(f"{module} failed: {done.stderr[-500:]!r}")
    out = done.stdout.decode()
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--prompts", type=int, default=3)
    parser.add_argument("--block", type=int, default=10, help="sessions per printed block")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="waymark-use-"))
    try:
        data = corpus.make_corpus(args.memories, args.seed)
        repo = tmp / "repo"
        corpus.materialise(data.tree, str(repo))
        git(repo, "-c", "init.defaultBranch=main", "init", "-q")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "initial")
        os.environ["WAYMARK_HOME"] = str(tmp / "home")
        os.environ.pop("WAYMARK_EMBED_MODEL_DIR", None)  # lexical: the hooks' own path
        conn = db.connect()
        project = resolve(conn, str(repo))
        capture.set_enabled(conn, project, True)
        corpus.load(conn, project, data.records)
        checkpoints.create(conn, project, {"objective": "Idempotent invoice webhooks",
                                           "next_action": NEXT})  # fmt: skip
        types = {r[0]: r[1] for r in conn.execute("SELECT id, type FROM memories")}
        conn.close()
        prompts = corpus.make_prompts(data, args.sessions * args.prompts, args.seed + 1)
        rng = random.Random(args.seed)
        blocks: list[dict] = []
        for n in range(args.sessions):
            if n % args.block == 0:
                blocks.append({"sessions": 0, "handoff": 0, "ids": []})
            block = blocks[-1]
            session = str(uuid.uuid4())
            base = {"session_id": session, "cwd": str(repo), "transcript_path": None}
            start = run_hook("session_start", {**base, "hook_event_name": "SessionStart",
                                               "source": "startup"})  # fmt: skip
            block["sessions"] += 1
            block["handoff"] += f"Next action: {NEXT}" in start
            shown = _ID.findall(start)
            for k in range(args.prompts):
                said = run_hook("user_prompt_submit", {
                    **base, "hook_event_name": "UserPromptSubmit",
                    "prompt": prompts[(n * args.prompts + k) % len(prompts)]})  # fmt: skip
                shown += _ID.findall(said)
            cited = [i for i in dict.fromkeys(shown) if types.get(i) in CITED_TYPES]
            rng.shuffle(cited)
            message = "Done. Followed " + ", ".join(cited[:5]) if cited else "Done."
            run_hook("stop", {**base, "hook_event_name": "Stop", "stop_hook_active": False,
                              "last_assistant_message": message})  # fmt: skip
            run_hook("session_end", {**base, "hook_event_name": "SessionEnd", "reason": "other"})
            block["ids"].append(session)
        conn = db.connect()
        print(f"{args.memories:,} memories, {args.sessions} sessions of {args.prompts} prompts;"
              " the agent cites up to 5 decisions or conventions it was shown")  # fmt: skip
        print()
        print("sessions    shown  used  use rate  tokens/session  tokens/used item  handoff")
        for i, block in enumerate(blocks):
            marks = ", ".join("?" * len(block["ids"]))
            shown, used, tokens = conn.execute(
                "SELECT count(DISTINCT j.session_id || j.item), count(DISTINCT u.session_id ||"
                " u.item), (SELECT sum(tokens) FROM injections WHERE session_id IN"
                f" ({marks})) FROM injections j LEFT JOIN injected_used u ON u.session_id ="
                " j.session_id AND u.item = j.item WHERE j.session_id IN"
                f" ({marks}) AND j.item IS NOT NULL AND j.tokens > 0",
                (*block["ids"], *block["ids"]),
            ).fetchone()
            first, last = i * args.block + 1, i * args.block + block["sessions"]
            print(f"{first:>3}-{last:<6} {shown:>6} {used:>5} {100 * used / max(shown, 1):>8.0f}%"
                  f" {tokens / block['sessions']:>15,.0f} {tokens / max(used, 1):>17,.0f}"
                  f"  {block['handoff']}/{block['sessions']}")  # fmt: skip
        print()
        rows = conn.execute(
            "SELECT section, shown, used, factor FROM section_use ORDER BY shown DESC"
        ).fetchall()
        print("section budgets after the last session (measured use, 30 days):")
        for section, shown, used, factor in rows:
            print(f"  {section:<34} {used:>4} used of {shown:<5} keeps {factor:.2f} of its budget")
        decayed = conn.execute(
            "SELECT count(*) FROM memory_use WHERE used = 0 AND shown >= 5"
        ).fetchone()[0]
        print(f"memories shown 5+ times and never used (ranked down, to 0.75x): {decayed}")
        conn.close()
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
