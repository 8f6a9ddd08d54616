"""Retrieval quality on the development set, through the same engine the hooks use.

Imports ../shared/bench/locomo_turns_dev.corpus.jsonl one named project per `group`, embeds it
(`waymark index`) when a model is available, runs the queries through `waymark recall --batch`
hybrid and lexical-only, and scores both with the shared scorer.

    WAYMARK_EMBED_MODEL_DIR=../shared/models/all-MiniLM-L6-v2-onnx python bench/retrieval.py [--floor]

`--floor` also scores the results that clear the relevance floor (what `recall` and the MCP
tool show), and runs each query in another group's project, where none of its evidence is,
and 100 queries of nonsense words, counting what the floor still shows.

WAYMARK_BENCH_DIR points at another folder of the same form (default ../shared/bench).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_BENCH = ROOT.parent / "shared" / "bench"


def waymark(*args: str, stdout=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "waymark", *args],
        check=True,
        stdout=stdout,
        text=True,
        encoding="utf-8",
    )


def load(bench: pathlib.Path, name: str, tmp: pathlib.Path) -> tuple[list[str], pathlib.Path]:
    groups: dict[str, list[str]] = {}
    with open(bench / f"{name}.corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            groups.setdefault(row["group"], []).append(
                json.dumps(  # a session's turns are embedded with their neighbours
                    {
                        "key": row["id"],
                        "text": row["text"],
                        "timestamp": row.get("timestamp"),
                        "session": row.get("session"),
                    }
                )  # fmt: skip
            )
    for group, lines in groups.items():
        (tmp / f"{group}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    queries = tmp / "queries.jsonl"
    with (
        open(bench / f"{name}.queries.jsonl", encoding="utf-8") as f,
        open(queries, "w", encoding="utf-8") as out,
    ):
        for line in f:
            q = json.loads(line)
            out.write(
                json.dumps({"qid": q["qid"], "query": q["query"], "project": q["group"]}) + "\n"
            )
    return sorted(groups), queries


def unrelated(groups: list[str], queries: pathlib.Path, tmp: pathlib.Path, semantic: bool) -> None:
    """What the floor shows for a question asked in the wrong project: each query run
    against the next group's project, where none of its evidence is. Mean memories shown a
    query, and the share of queries shown anything (the noise a user would read)."""
    import random

    rows = [json.loads(line) for line in queries.read_text(encoding="utf-8").splitlines()]
    other = {g: groups[(i + 1) % len(groups)] for i, g in enumerate(groups)}
    crossed = tmp / "crossed.jsonl"
    crossed.write_text(
        "".join(json.dumps(r | {"project": other[r["project"]]}) + "\n" for r in rows),
        encoding="utf-8",
    )
    pick = random.Random(0)
    letters = "bcdfghjklmnpqrstvwxz"  # words of no language: nothing should answer them
    nonsense = tmp / "nonsense.jsonl"
    nonsense.write_text(
        "".join(
            json.dumps({"qid": f"n{i}", "project": groups[i % len(groups)], "query": " ".join(
                "".join(pick.choice(letters) for _ in range(pick.randint(4, 7)))
                for _ in range(pick.randint(1, 3)))}) + "\n"
            for i in range(100)
        ),
        encoding="utf-8",
    )  # fmt: skip
    for name, asked in (("another group's project", crossed), ("nonsense words", nonsense)):
        for label, extra in (("hybrid+floor", []), ("lexical+floor", ["--lexical"])):
            if label.startswith("hybrid") and not semantic:
                continue
            out = tmp / f"{asked.stem}-{label}.jsonl"
            with open(out, "w", encoding="utf-8") as f:
                waymark("recall", "--batch", str(asked), "--floor", *extra, stdout=f)
            shown = [len(json.loads(line)["ranked"]) for line in out.read_text().splitlines()]
            print(
                f"{name}, {label}: {sum(shown) / len(shown):.2f} memories shown a query,"
                f" {sum(1 for n in shown if n) / len(shown):.3f} of queries shown any"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="locomo_turns_dev", help="file prefix in the bench dir")
    parser.add_argument("--keep", action="store_true", help="keep the temporary home")
    parser.add_argument(
        "--floor", action="store_true",
        help="also score what clears the relevance floor, and what it shows in another project",
    )  # fmt: skip
    args = parser.parse_args()
    bench = pathlib.Path(os.environ.get("WAYMARK_BENCH_DIR", DEFAULT_BENCH))
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="waymark-retrieval-"))
    os.environ["WAYMARK_HOME"] = str(tmp / "home")
    groups, queries = load(bench, args.set, tmp)

    started = time.perf_counter()
    for group in groups:
        waymark(
            "import", str(tmp / f"{group}.jsonl"), "--project", group, stdout=subprocess.DEVNULL
        )
    print(f"import: {len(groups)} projects in {time.perf_counter() - started:.1f} s")
    semantic = os.environ.get("WAYMARK_EMBED_MODEL_DIR") is not None
    if semantic:
        started = time.perf_counter()
        for group in groups:
            waymark("index", "--project", group, stdout=subprocess.DEVNULL)
        print(f"index: {time.perf_counter() - started:.1f} s")
    else:
        print("index: skipped (set WAYMARK_EMBED_MODEL_DIR for hybrid recall)")

    runs = []
    modes = (("hybrid", []), ("lexical", ["--lexical"]))
    if args.floor:
        modes += (("hybrid+floor", ["--floor"]), ("lexical+floor", ["--lexical", "--floor"]))
    for label, extra in modes:
        if label.startswith("hybrid") and not semantic:
            continue
        out = tmp / f"{label}.jsonl"
        started = time.perf_counter()
        with open(out, "w", encoding="utf-8") as f:
            waymark("recall", "--batch", str(queries), *extra, stdout=f)
        elapsed = time.perf_counter() - started
        n = len(queries.read_text(encoding="utf-8").splitlines())
        print(
            f"{label}: {n} queries in {elapsed:.1f} s ({1000 * elapsed / n:.1f} ms/query,"
            " one process including startup)"
        )
        runs.append(str(out))
    subprocess.run(
        [sys.executable, str(bench / "score.py"), str(bench / f"{args.set}.queries.jsonl"), *runs],
        check=True,
    )
    if args.floor:
        unrelated(groups, queries, tmp, semantic)
    if not args.keep:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"kept {tmp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
