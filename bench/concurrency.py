"""Concurrent writers on one database file: does every acknowledged write survive?

8 worker processes x 500 writes each against one WAYMARK_HOME. Half the writes remember a
new record; half race to supersede the current head of one of a few shared chains, so many
processes hit the same record at the same moment. Exactly one supersede of a record may win;
the others must get a `conflict` error. Afterwards every acknowledged id must be in the file,
each chain must be linear, and `PRAGMA integrity_check` must say ok.

    python bench/concurrency.py [--workers 8] [--writes 500] [--chains 8]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

from waymark.errors import Conflict
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.projects.resolve import resolve
from waymark.storage import connection as db

PROJECT = "concurrency-bench"
GATE_S = 120.0  # how long workers wait for each other to be ready


def worker(
    index: int, writes: int, chains: list[str], out: str, gate: str, window_ms: float
) -> None:
    rng = random.Random(index)
    conn = db.connect()
    project = resolve(conn, PROJECT)
    # Everyone starts writing at once: a process still importing while the others finish
    # races nobody (on a loaded machine the runs were otherwise nearly one after another).
    open(os.path.join(gate, f"ready-{index}"), "w").close()
    waited = time.monotonic() + GATE_S
    while not os.path.exists(os.path.join(gate, "go")) and time.monotonic() < waited:
        time.sleep(0.005)
    acked, conflicts, errors = [], 0, []
    for n in range(writes):
        try:
            if rng.random() < 0.5:
                draft = make_draft(project, type="note", content=f"worker {index} write {n}")
                acked.append(store.remember(conn, project, draft).memory.id)
            else:
                head = store.history(conn, rng.choice(chains))[-1]
                if window_ms:  # another writer may supersede the head meanwhile
                    time.sleep(window_ms / 1000)
                draft = make_draft(project, type="decision", content=f"w{index} n{n} on {head.id}")
                acked.append(store.supersede(conn, project, head.id, draft).memory.id)
        except Conflict:
            conflicts += 1
        except Exception as exc:  # counted and reported: the benchmark's point
            errors.append(repr(exc))
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"acked": acked, "conflicts": conflicts, "errors": errors}, f)


def seed(chains: int) -> list[str]:
    conn = db.connect()
    project = resolve(conn, PROJECT)
    ids = [
        store.remember(
            conn, project, make_draft(project, type="decision", content=f"chain {i}")
        ).memory.id
        for i in range(chains)
    ]
    conn.close()
    return ids


def check(results: list[dict]) -> dict:
    conn = db.connect()
    acked = [i for r in results for i in r["acked"]]
    found = (
        {
            row[0]
            for row in conn.execute(
                f"SELECT id FROM memories WHERE id IN ({','.join('?' * len(acked))})", acked
            )
        }
        if acked
        else set()
    )
    forks = db.scalar(
        conn,
        "SELECT count(*) FROM (SELECT supersedes FROM memories WHERE supersedes IS NOT NULL"
        " GROUP BY supersedes HAVING count(*) > 1)",
    )
    return {
        "writes_acknowledged": len(acked),
        "rows_found": len(found),
        "lost": len(set(acked) - found),
        "conflicts_expected": sum(r["conflicts"] for r in results),
        "unexpected_errors": sum(len(r["errors"]) for r in results),
        "forked_chains": forks,
        "integrity_check": db.scalar(conn, "PRAGMA integrity_check"),
        "foreign_key_violations": len(conn.execute("PRAGMA foreign_key_check").fetchall()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--writes", type=int, default=500)
    parser.add_argument("--chains", type=int, default=8)
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--chain-ids", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--gate", help=argparse.SUPPRESS)
    parser.add_argument(
        "--window-ms", type=float, default=0.0,
        help="wait between reading a chain's head and superseding it (widens the race)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.worker is not None:
        worker(args.worker, args.writes, args.chain_ids.split(","), args.out, args.gate,
               args.window_ms)  # fmt: skip
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["WAYMARK_HOME"] = os.path.join(tmp, "home")
        chains = seed(args.chains)
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "--worker",
                    str(i),
                    "--writes",
                    str(args.writes),
                    "--chain-ids",
                    ",".join(chains),
                    "--out",
                    os.path.join(tmp, f"w{i}.json"),
                    "--gate",
                    tmp,
                    "--window-ms",
                    str(args.window_ms),
                ]
            )
            for i in range(args.workers)
        ]
        ready = [os.path.join(tmp, f"ready-{i}") for i in range(args.workers)]
        waited = time.monotonic() + GATE_S
        while not all(map(os.path.exists, ready)) and time.monotonic() < waited:
            if any(p.poll() is not None for p in procs):
                break  # a worker died before its start: its exit code says so below
            time.sleep(0.005)
        started = time.perf_counter()
        open(os.path.join(tmp, "go"), "w").close()
        codes = [p.wait() for p in procs]
        elapsed = time.perf_counter() - started
        results = []
        for i in range(args.workers):
            with open(os.path.join(tmp, f"w{i}.json"), encoding="utf-8") as f:
                results.append(json.load(f))
        figures = check(results) | {
            "workers": args.workers,
            "writes_per_worker": args.writes,
            "worker_exit_codes": sorted(set(codes)),
            "seconds": round(elapsed, 2),
        }
        for r in results:
            for error in r["errors"][:3]:
                print("error:", error)
    for key, value in figures.items():
        print(f"{key:24} {value}")
    ok = (
        figures["lost"] == 0
        and figures["unexpected_errors"] == 0
        and figures["forked_chains"] == 0
        and figures["integrity_check"] == "ok"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
