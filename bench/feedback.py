"""Does feedback help the queries it was given on, and never hurt the others?

On the development set (lexical recall, the hooks' path): half the queries of each
conversation, chosen by a hash of their id, give feedback as an agent would (each gold
memory in the top 10 helpful, each other one in the top 3 not helpful); the other half
never give any. Both halves are scored before and after, and the held-out queries that got
worse are counted: feedback is one bounded multiplier (`feedback_boost`), so what it can do
to a query that never gave any is limited to memories the two share.

    python bench/feedback.py [--rounds 1]

WAYMARK_BENCH_DIR points at another folder of the same form (default ../shared/bench).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_BENCH = ROOT.parent / "shared" / "bench"


def metrics(ranked: list[str], gold: set[str]) -> tuple[float, float]:
    """(R@10, nDCG@10), as the shared scorer counts them."""
    top = list(dict.fromkeys(ranked))[:10]
    hits = [i for i, key in enumerate(top) if key in gold]
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(gold), 10)))
    return len(hits) / len(gold), sum(1 / math.log2(i + 2) for i in hits) / idcg


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="locomo_turns_dev")
    parser.add_argument("--rounds", type=int, default=1, help="feedback rounds before scoring")
    args = parser.parse_args()
    bench = pathlib.Path(os.environ.get("WAYMARK_BENCH_DIR", DEFAULT_BENCH))
    os.environ["WAYMARK_HOME"] = tempfile.mkdtemp(prefix="waymark-feedback-")

    from waymark.curation import feedback
    from waymark.data import importer
    from waymark.projects.resolve import resolve
    from waymark.recall import ranked
    from waymark.storage import connection as db

    conn = db.connect()
    groups: dict[str, list[str]] = {}
    with open(bench / f"{args.set}.corpus.jsonl", encoding="utf-8") as corpus:
        for line in corpus:
            row = json.loads(line)
            groups.setdefault(row["group"], []).append(
                json.dumps(
                    {"key": row["id"], "text": row["text"], "timestamp": row.get("timestamp")}
                )
            )
    projects = {}
    for group, lines in groups.items():
        projects[group] = resolve(conn, group)
        importer.import_lines(conn, projects[group], lines)
    with open(bench / f"{args.set}.queries.jsonl", encoding="utf-8") as f:
        queries = [json.loads(line) for line in f]
    for q in queries:
        q["gives"] = int(hashlib.sha256(q["qid"].encode()).hexdigest(), 16) % 2 == 0

    def run() -> dict[str, tuple[float, float, list]]:
        out = {}
        for q in queries:
            hits = ranked.recall(conn, projects[q["group"]], q["query"], limit=10)
            keys = [h.memory.key for h in hits]
            out[q["qid"]] = (*metrics(keys, set(q["gold"])), hits)
        return out

    before = run()
    given = 0
    for _ in range(args.rounds):
        current = run()
        for q in queries:
            if not q["gives"]:
                continue
            for rank, hit in enumerate(current[q["qid"]][2]):
                verdict = (
                    "helpful"
                    if hit.memory.key in q["gold"]
                    else ("not_helpful" if rank < 3 else None)
                )
                if verdict:
                    feedback.give(
                        conn,
                        projects[q["group"]],
                        hit.memory.id,
                        verdict,
                        query=q["query"],
                        actor="agent",
                    )
                    given += 1
    after = run()

    print(f"{len(queries)} queries; {given} verdicts given by the half that gives feedback")
    print(f"{'queries':<22} {'n':>5} {'R@10 before':>12} {'after':>7} {'nDCG@10 before':>15}"
          f" {'after':>7} {'worse':>6} {'better':>7}")  # fmt: skip
    for label, gives in (("gave feedback", True), ("held out", False)):
        chosen = [q["qid"] for q in queries if q["gives"] == gives]
        n = len(chosen)

        def mean(run: dict, i: int, chosen: list = chosen, n: int = n) -> float:
            return sum(run[qid][i] for qid in chosen) / n

        worse = sum(after[qid][1] < before[qid][1] - 1e-9 for qid in chosen)
        better = sum(after[qid][1] > before[qid][1] + 1e-9 for qid in chosen)
        print(
            f"{label:<22} {n:>5} {mean(before, 0):>12.3f} {mean(after, 0):>7.3f}"
            f" {mean(before, 1):>15.3f} {mean(after, 1):>7.3f} {worse:>6} {better:>7}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
