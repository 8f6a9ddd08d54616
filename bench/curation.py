"""Curation at scale: a retention sweep and a consolidation pass over a large project.

For each size: the synthetic corpus (bench/corpus.py) loaded into a path project, plus one
near-duplicate in a hundred (the same text with a few words added, as agents re-save what
they learned) and pseudo-random vectors for all. Then, timed as `waymark sweep` and
`waymark consolidate` run them: the retention plan 300 days on (what `--dry-run` prints),
the sweep itself (archives in one transaction), the consolidation groups (`--dry-run`, over
every memory, before the sweep) and queuing them as candidates; and how many of the planted
near-copies were grouped with their original.

    python bench/curation.py [--sizes 10000,100000] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import sys
import tempfile
import time

import corpus
from waymark.curation import consolidate, retention
from waymark.projects.resolve import resolve
from waymark.storage import connection as db

DAY = 86400.0
DUPLICATE_SHARE = 0.01
TAILS = ("Confirmed again today.", "Still true after the upgrade.", "Seen twice this week.")


def with_duplicates(records: list[dict], seed: int) -> tuple[list[dict], int]:
    """`records` and, after them, near-copies of one in a hundred."""
    rng = random.Random(f"dups-{seed}")
    picked = rng.sample(records, int(len(records) * DUPLICATE_SHARE))
    copies = [
        {**r, "key": r["key"] + "-again", "content": f"{r['content']} {rng.choice(TAILS)}"}
        for r in picked
    ]
    return records + copies, len(copies)


def timed(fn, *args, **kw):
    started = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - started


def run(size: int, tmp: pathlib.Path, seed: int) -> dict:
    data = corpus.make_corpus(size, seed)
    records, copies = with_duplicates(data.records, seed)
    root = tmp / f"repo-{size}"
    corpus.materialise(data.tree, str(root))
    os.environ["WAYMARK_HOME"] = str(tmp / f"home-{size}")
    conn = db.connect()
    project = resolve(conn, str(root))
    load_s = corpus.load(conn, project, records)
    corpus.fill_vectors(conn, project.id, seed)
    groups, find_s = timed(consolidate.find, conn, project)
    queued, propose_s = timed(consolidate.propose, conn, project)
    found = planted(conn, groups)
    later = time.time() + 300 * DAY
    plan, plan_s = timed(retention.plan, conn, project, now=later)
    swept, sweep_s = timed(retention.sweep, conn, project, now=later)
    conn.close()
    return {
        "size": len(records), "copies": copies, "load_s": load_s,
        "plan_s": plan_s, "archive": len(plan["archive"]), "purge": len(plan["purge"]),
        "sweep_s": sweep_s, "swept": len(swept["archive"]),
        "find_s": find_s, "groups": len(groups),
        "grouped": sum(len(g["members"]) for g in groups),
        "propose_s": propose_s, "queued": len(queued), "planted": found,
    }  # fmt: skip


def planted(conn, groups: list[dict]) -> int:
    """How many of the near-copies are in one group with the memory they copy."""
    from waymark.memories import store

    found = 0
    for group in groups:
        keys = {store.get(conn, i).key for i in group["members"]}
        found += sum(1 for k in keys if k and k.endswith("-again") and k[:-6] in keys)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated corpus sizes")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"machine: {os.cpu_count()} cores; seconds are wall time of one run each")
    print(
        f"{'memories':>9} {'near-dups':>9} | {'groups s':>8} {'groups':>6} {'members':>7} "
        f"{'copies found':>12} {'queue s':>7} | {'plan s':>7} {'archive':>7} {'sweep s':>7}"
    )
    with tempfile.TemporaryDirectory(prefix="waymark-curation-") as tmp:
        for size in sizes:
            r = run(size, pathlib.Path(tmp), args.seed)
            print(
                f"{r['size']:>9,} {r['copies']:>9,} | {r['find_s']:>8.2f} {r['groups']:>6,} "
                f"{r['grouped']:>7,} {r['planted']:>12,} {r['propose_s']:>7.2f} | "
                f"{r['plan_s']:>7.2f} {r['archive']:>7,} {r['sweep_s']:>7.2f}",
                flush=True,
            )
    print(
        "groups = `waymark consolidate --dry-run` over every memory; copies found = near-copies"
        " grouped with their original; queue = `waymark consolidate` (candidates); plan ="
        " `waymark sweep --dry-run` 300 days on; sweep = `waymark sweep`"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
