"""Recall latency on synthetic coding-memory corpora: warm in-process and cold process.

For each size: import throughput (the importer, into a named project), a path project bulk
loaded with scoped memories (bench/corpus.py), pseudo-random vectors, then 200+ queries:
- warm hybrid, overlapped: what the MCP server does, the query embedded on a thread while
  recall runs its lexical tiers (`semantic.overlapped`); the target applies here;
- warm hybrid: the real model embeds the query, `vectors.search`, `recall(semantic=...)`;
  queries go through the int8 copy of the model, as in the server (built here first, once),
  and the full model's time for the same queries is shown beside it;
- lexical: `recall` without semantic neighbours;
- cold: `python -m waymark recall QUERY --project ROOT --json` wall time, hybrid and lexical.
- the vector tier alone: the approximate graph (recall/ann.py, kept from 50,000 vectors) and
  the exact scan, and how many of the exact scan's top 10 the graph's candidates hold
  (recall@10), over queries embedded like the stored vectors (bench/corpus.py VECTOR_NOTE).
Targets (p95): hybrid 15 ms at 10k, 60 ms at 100k, 100 ms at 1M; lexical 10, 40 and 100 ms;
the vector tier 20 ms at 1M, its first search on a fresh connection 1 s, a cold CLI hybrid
recall 1.5 s, 3 KB a record with its vector, import 5,000 records/s.

    WAYMARK_EMBED_MODEL_DIR=../shared/models/all-MiniLM-L6-v2-onnx \\
        python bench/recall_latency.py [--sizes 10000,100000] [--queries 220] [--keep]

WAYMARK_EMBED_MODEL_DIR defaults to ../shared/models/all-MiniLM-L6-v2-onnx when that exists.
"""

from __future__ import annotations

import argparse
import math
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import apsw

import corpus
from waymark import errors
from waymark.projects.resolve import Project, resolve
from waymark.recall import ann, embed, quantize, semantic, vectors
from waymark.recall import ranked as recall
from waymark.storage import connection as db

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_MODEL = ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
TARGETS = {
    10_000: {"hybrid": 15.0, "lexical": 10.0},
    100_000: {"hybrid": 60.0, "lexical": 40.0},
    1_000_000: {"hybrid": 100.0, "lexical": 100.0, "vector": 20.0, "first_search": 1000.0,
                "cold_hybrid": 1500.0, "bytes": 3000.0, "import": 5000.0},
}  # fmt: skip
RECALL_QUERIES = 100
WARMUP = 20


def stats(seconds: list[float]) -> tuple[float, float, float]:
    """(p50, p95, max) in ms, nearest-rank percentiles."""
    ordered = sorted(seconds)
    rank = lambda q: ordered[max(0, math.ceil(q * len(ordered)) - 1)]  # noqa: E731
    return 1000 * rank(0.50), 1000 * rank(0.95), 1000 * ordered[-1]


def build(size: int, tmp: pathlib.Path, seed: int) -> dict:
    """Import-throughput run, then the measured path project; figures and handles."""
    started = time.perf_counter()
    data = corpus.make_corpus(size, seed)
    out: dict = {"corpus": data, "generate_s": time.perf_counter() - started}

    import_db = str(tmp / f"import-{size}.db")
    conn = db.connect(import_db)
    report, seconds = corpus.import_jsonl(conn, resolve(conn, "bench-import"), data.records)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    if report["created"] != size:
        raise SystemExit(f"importer created {report['created']} of {size}: {report}")
    out["import_rate"] = size / seconds
    out["import_bytes"] = corpus.db_bytes(import_db) / size
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(import_db + suffix):
            os.remove(import_db + suffix)

    home = tmp / f"home-{size}"
    home.mkdir(mode=0o700)
    (home / "models").symlink_to(tmp / "home" / "models")  # the int8 copy built at start
    os.environ["WAYMARK_HOME"] = str(home)  # the cold CLI runs inherit it
    root = tmp / f"project-{size}"
    corpus.materialise(data.tree, str(root))
    conn = db.connect()
    project = resolve(conn, str(root))
    out["load_rate"] = size / corpus.load(conn, project, data.records)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    out["load_bytes"] = corpus.db_bytes(str(home / "waymark.db")) / size
    count, out["vectors_s"] = corpus.fill_vectors(conn, project.id, seed)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    out["vector_bytes"] = corpus.db_bytes(str(home / "waymark.db")) / size
    started = time.perf_counter()
    out["graph"] = ann.refresh(
        conn, embed.ENGLISH.id, embed.ENGLISH.dim, threads=os.cpu_count() or 1
    )
    out["graph_s"] = time.perf_counter() - started
    graph_file = out["graph"].get("file")
    out["graph_bytes"] = os.path.getsize(graph_file) / size if graph_file else 0.0
    out.update(conn=conn, project=project, root=root, vectors=count)
    return out


def lexical(conn: apsw.Connection, project: Project, queries: list[str]) -> list[float]:
    for q in queries[:WARMUP]:
        recall.recall(conn, project, q)
    times = []
    for q in queries[WARMUP:]:
        started = time.perf_counter()
        recall.recall(conn, project, q)
        times.append(time.perf_counter() - started)
    return times


def hybrid(
    conn: apsw.Connection, project: Project, embedder: embed.Embedder, queries: list[str]
) -> dict[str, list[float]]:
    parts: dict[str, list[float]] = {
        "total": [],
        "embed": [],
        "search": [],
        "recall": [],
        "overlapped": [],
        "embed_full": [],
    }
    for n, q in enumerate(queries):
        t = time.perf_counter()
        recall.recall(conn, project, q, semantic=semantic.overlapped(conn, project.id, q, embedder))
        if n >= WARMUP:
            parts["overlapped"].append(time.perf_counter() - t)
        t0 = time.perf_counter()
        vec = embedder.embed_query(q)
        t1 = time.perf_counter()
        near = vectors.search(conn, project.id, vec, semantic.CANDIDATES, embedder.model)
        t2 = time.perf_counter()
        recall.recall(conn, project, q, semantic=near)
        t3 = time.perf_counter()
        embedder.embed([q], max_tokens=embed.QUERY_MAX_TOKENS)
        t4 = time.perf_counter()
        if n >= WARMUP:
            parts["embed_full"].append(t4 - t3)
            parts["total"].append(t3 - t0)
            parts["embed"].append(t1 - t0)
            parts["search"].append(t2 - t1)
            parts["recall"].append(t3 - t2)
    return parts


def vector_tier(
    conn: apsw.Connection, project: Project, data: corpus.Corpus, seed: int
) -> dict[str, list[float]]:
    """The vector tier alone, as recall asks it (the 200 candidates), by the default method
    (the graph when there is one) and by the exact scan; recall@10 of the first against the
    second, with queries embedded like the stored vectors so that neighbours mean something."""
    queries = corpus.make_queries(data, WARMUP + RECALL_QUERIES, seed=seed + 3)
    matrix = corpus.text_vectors(queries, embed.ENGLISH.dim, seed)
    out: dict[str, list[float]] = {"default": [], "exact": [], "recall10": [], "pool": []}
    k = semantic.CANDIDATES
    for n, vec in enumerate(matrix):
        t0 = time.perf_counter()
        found = vectors.search(conn, project.id, vec, k, embed.ENGLISH.id)
        t1 = time.perf_counter()
        exact = vectors.search(conn, project.id, vec, k, embed.ENGLISH.id, "numpy")
        t2 = time.perf_counter()
        if n < WARMUP:
            continue
        out["default"].append(t1 - t0)
        out["exact"].append(t2 - t1)
        best = {r for r, _ in exact[:10]}
        out["recall10"].append(len(best & {r for r, _ in found[:10]}) / max(1, len(best)))
        out["pool"].append(len({r for r, _ in exact} & {r for r, _ in found}) / max(1, len(exact)))
    return out


def cold(root: pathlib.Path, queries: list[str], extra: list[str]) -> list[float]:
    times = []
    for q in queries:
        started = time.perf_counter()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "waymark",
                "recall",
                q,
                "--project",
                str(root),
                "--json",
                *extra,
            ],
            capture_output=True,
            text=True,
            encoding="utf-8",
        )
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"waymark recall failed ({done.returncode}): {done.stderr[-2000:]}")
    return times


def measure(
    size: int, tmp: pathlib.Path, args: argparse.Namespace, embedder: embed.Embedder
) -> dict:
    built = build(size, tmp, args.seed)
    conn, project, data = built["conn"], built["project"], built["corpus"]
    queries = corpus.make_queries(data, WARMUP + args.queries, seed=args.seed + 2)
    probe = embedder.embed_query("warm the matrix")
    started = time.perf_counter()
    vectors.search(conn, project.id, probe, semantic.CANDIDATES, embedder.model)
    built["first_search_ms"] = 1000 * (time.perf_counter() - started)
    started = time.perf_counter()
    vectors.search(conn, project.id, probe, semantic.CANDIDATES, embedder.model, "numpy")
    built["exact_first_ms"] = 1000 * (time.perf_counter() - started)
    built["tier"] = vector_tier(conn, project, data, args.seed)
    built["precision"] = embedder.query_precision
    built["lexical"] = lexical(conn, project, queries)
    built["hybrid"] = hybrid(conn, project, embedder, queries)
    conn.close()
    cold_queries = queries[WARMUP : WARMUP + args.cold_runs]
    built["cold_hybrid"] = cold(built["root"], cold_queries, [])
    built["cold_lexical"] = cold(built["root"], cold_queries, ["--lexical"])
    return built


def verdict(p95: float, target: float | None) -> tuple[str, str]:
    if target is None:
        return "", ""
    return f"<= {target:g} ms", "PASS" if p95 <= target else "MISS"


def print_tables(results: dict[int, dict], model_s: float, int8: str) -> None:
    print()
    print(corpus.VECTOR_NOTE)
    print(f"model load (once per process): {model_s:.2f} s; warm-up {WARMUP} queries per pass")
    print(f"queries: {int8}")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores; load average (1, 5, 15 min) at the end: {load}")
    print()
    head = f"{'size':>8}  {'measurement':<40} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}"
    print(head + f"  {'target p95':<12} result")
    print("-" * (len(head) + 20))
    for size, r in results.items():
        target = TARGETS.get(size, {})
        rows = [
            (
                "warm hybrid, overlapped (MCP server)",
                r["hybrid"]["overlapped"],
                target.get("hybrid"),
            ),
            ("warm hybrid: embed + search + recall", r["hybrid"]["total"], None),
            (f"  query embedding ({r['precision']})", r["hybrid"]["embed"], None),
            ("  query embedding (full model, float32)", r["hybrid"]["embed_full"], None),
            (
                f"  vectors.search ({'graph' if r['graph'].get('file') else 'exact scan'})",
                r["hybrid"]["search"],
                None,
            ),
            ("  recall(semantic=neighbours)", r["hybrid"]["recall"], None),
            ("lexical in-process: recall", r["lexical"], target.get("lexical")),
            (
                f"vector tier, k=200 ({'graph' if r['graph'].get('file') else 'exact scan'})",
                r["tier"]["default"],
                target.get("vector"),
            ),
            ("vector tier, k=200 (exact scan)", r["tier"]["exact"], None),
            ("cold process: waymark recall (hybrid)", r["cold_hybrid"], target.get("cold_hybrid")),
            ("cold process: waymark recall --lexical", r["cold_lexical"], None),
        ]
        for label, times, goal in rows:
            p50, p95, worst = stats(times)
            want, result = verdict(p95, goal)
            print(
                f"{size:>8,}  {label:<40} {len(times):>4} {p50:>8.1f} {p95:>8.1f} {worst:>8.1f}"
                f"  {want:<12} {result}"
            )
    print()
    head = (
        f"{'size':>8}  {'import rec/s':>12} {'import B/rec':>12} {'bulk load rec/s':>15}"
        f" {'B/rec':>7} {'B/rec +vectors':>14} {'vectors s':>9} {'1st search ms':>13}"
        f" {'exact 1st ms':>12} {'graph s':>8} {'graph B/rec':>11} {'recall@10':>9}"
        f" {'pool':>5}"
    )
    print(head)
    print("-" * len(head))
    for size, r in results.items():
        tier = r["tier"]
        print(
            f"{size:>8,}  {r['import_rate']:>12,.0f} {r['import_bytes']:>12,.0f}"
            f" {r['load_rate']:>15,.0f} {r['load_bytes']:>7,.0f} {r['vector_bytes']:>14,.0f}"
            f" {r['vectors_s']:>9.1f} {r['first_search_ms']:>13.0f} {r['exact_first_ms']:>12.0f}"
            f" {r['graph_s'] if r['graph'].get('file') else 0:>8.1f} {r['graph_bytes']:>11,.0f}"
            f" {sum(tier['recall10']) / len(tier['recall10']):>9.3f}"
            f" {sum(tier['pool']) / len(tier['pool']):>5.3f}"
        )
        target = TARGETS.get(size, {})
        checks = [
            ("first search on a fresh connection ms", r["first_search_ms"], "first_search", 1),
            ("B/rec with its vector", r["vector_bytes"], "bytes", 1),
            ("import rec/s", r["import_rate"], "import", -1),
        ]
        for label, value, key, sign in checks:
            if key in target:
                ok = value <= target[key] if sign > 0 else value >= target[key]
                want = f"{'<=' if sign > 0 else '>='} {target[key]:,.0f}"
                print(f"{'':>8}  {label}: {value:,.0f} (target {want}) {'PASS' if ok else 'MISS'}")
    print()
    print(
        "graph = the approximate index (recall/ann.py) built by `ann.refresh` on every core;"
        " graph B/rec = its file / records (beside the database); recall@10 = share of the"
        " exact scan's top 10 among the graph's top 10; pool = share of the exact top 200."
    )
    print(
        "import = importer.import_lines (JSON lines, named project, what `waymark import` runs);"
        " bulk load = make_draft + store.insert, 1000 per transaction, path project with file,"
        " directory and symbol scopes; B/rec = database file after a WAL checkpoint / records;"
        " 1st search = building the cached matrix on a fresh connection."
    )
    print(
        "In-process passes share one connection, as the MCP server does: term document counts"
        " stay cached while the database is unchanged, and the vector matrix stays built. The"
        " cold rows pay for both on every query."
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated corpus sizes")
    parser.add_argument("--queries", type=int, default=220, help="measured queries per pass")
    parser.add_argument("--cold-runs", type=int, default=5, help="cold CLI runs per mode")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if not os.environ.get(embed.ENV_MODEL_DIR) and DEFAULT_MODEL.is_dir():
        os.environ[embed.ENV_MODEL_DIR] = str(DEFAULT_MODEL)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="waymark-recall-latency-"))
    os.environ["WAYMARK_HOME"] = str(tmp / "home")  # the model loader wants a data home
    started = time.perf_counter()
    # raises with the reason if absent
    embedder = embed.open_embedder(allow_download=False, int8_queries=True)
    model_s = time.perf_counter() - started
    started = time.perf_counter()
    try:
        quantize.attach(embedder)  # what the MCP server does once per model file
        int8 = f"int8 copy, built in {time.perf_counter() - started:.1f} s (once per model file)"
    except errors.Int8Unavailable as exc:
        int8 = f"full model ({exc.message})"
    results = {}
    try:
        for size in sizes:
            started = time.perf_counter()
            results[size] = measure(size, tmp, args, embedder)
            r = results[size]
            print(
                f"{size:,} records: generated in {r['generate_s']:.1f} s,"
                f" {r['vectors']:,} vectors, measured in {time.perf_counter() - started:.0f} s",
                flush=True,
            )
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print_tables(results, model_s, int8)
    return 0


if __name__ == "__main__":
    sys.exit(main())
