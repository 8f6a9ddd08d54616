"""The instruction scan on write (`memories/injection.py`): what it holds for review.

Attacks: tests/fixtures/injections.json's `held` texts (public prompt-injection wordings)
must all be held. False holds: ordinary text a project's memories are made of, each piece
scanned as one memory would be, none of which should be held:
- this repository's own history: every commit message (`git log`), paragraph by paragraph;
- its recorded hook session (bench/sessions/*.jsonl): every command and tool output;
- its docs: README.md, CHANGELOG.md and docs/*.md, paragraph by paragraph;
- the coding set's memories (bench/codingset) and 20,000 synthetic memories
  (bench/corpus.py);
- the development set's conversation turns (../shared/bench), when present.

    python bench/instructions.py [--show 10]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import time

import corpus
from waymark.memories.injection import instruction_like

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "bench" / "locomo_turns_dev.corpus.jsonl"


def paragraphs(text: str) -> list[str]:
    return [p.strip() for p in text.split("\n\n") if p.strip()]


def sources() -> dict[str, list[str]]:
    log = subprocess.run(["git", "-C", str(ROOT), "log", "--format=%B%x1e"], check=True,
                         capture_output=True, text=True).stdout  # fmt: skip
    found = {"commit messages": [p for m in log.split("\x1e") for p in paragraphs(m)]}
    session: list[str] = []
    for path in sorted((ROOT / "bench" / "sessions").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            session.append(json.dumps(event.get("tool_input") or {}))
            response = event.get("tool_response") or {}
            session += [str(v) for v in response.values() if isinstance(v, str) and v]
    found["recorded session"] = session
    docs = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
    found["docs"] = [p for d in docs for p in paragraphs(d.read_text(encoding="utf-8"))]
    coding = []
    for path in sorted((ROOT / "bench" / "codingset").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if "content" in row:
                coding.append(f"{row.get('title', '')}\n{row['content']}")
    found["coding set"] = coding
    found["synthetic memories"] = [
        f"{r['title']}\n{r['content']}" for r in corpus.make_corpus(20_000, 0).records
    ]
    if SHARED.exists():
        found["conversation turns"] = [
            json.loads(line)["text"] for line in SHARED.read_text(encoding="utf-8").splitlines()
        ]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", type=int, default=10, help="false holds printed, each corpus")
    args = parser.parse_args()
    cases = json.loads((ROOT / "tests" / "fixtures" / "injections.json").read_text("utf-8"))
    missed = [t for t in cases["held"] if not instruction_like(t)]
    print(f"attacks held: {len(cases['held']) - len(missed)} of {len(cases['held'])}")
    for text in missed:
        print(f"  missed: {text!r}")
    print(f"\n{'text':22} {'scanned':>8} {'held':>6} {'us each':>8}")
    for name, texts in sources().items():
        started = time.perf_counter()
        held = [(t, why) for t in texts if (why := instruction_like(t))]
        each = (time.perf_counter() - started) / max(1, len(texts)) * 1e6
        print(f"{name:22} {len(texts):>8,} {len(held):>6} {each:>8.1f}")
        for _text, why in held[: args.show]:
            print(f"    {why[0][:110]}")


if __name__ == "__main__":
    main()
