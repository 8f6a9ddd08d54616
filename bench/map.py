"""The code map's refresh times and size: a synthetic repository of N files (source in the
map's languages and other files, 40-200 lines each, a tenth of them Python with a function
every two lines, each calling a function of another file, committed to git), mapped by
`waymark map refresh`'s code: the first map, a refresh with nothing changed, and one after a
single edit; then the database's growth per 1,000 files. Each run is timed once, wall clock.

    python bench/map.py [--files 5000] [--seed 0] [--profile]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import subprocess
import sys
import tempfile
import time

from waymark.codemap import snapshot
from waymark.projects.resolve import resolve
from waymark.storage import connection as db

EXTENSIONS = (".py", ".ts", ".tsx", ".js", ".go", ".rs", ".java", ".c", ".md", ".yaml")


def make_repo(root: pathlib.Path, n: int, seed: int) -> None:
    make_files(root, n, seed)
    git_commit(root)


def make_files(root: pathlib.Path, n: int, seed: int) -> None:
    """`n` files under `root`: real declarations and cross-file calls in the Python ones."""
    rng = random.Random(seed)
    for i in range(n):
        ext = EXTENSIONS[i % len(EXTENSIONS)]
        path = root / f"pkg{i % 37}" / f"mod{i % 11}" / f"file_{i}{ext}"
        path.parent.mkdir(parents=True, exist_ok=True)
        n_lines = rng.randint(40, 200)
        if ext == ".py":  # real declarations, and calls that resolve to another file's
            other = i - len(EXTENSIONS) if i >= len(EXTENSIONS) else i
            lines = [f"def f{k}_{i}(x):\n    return f{k}_{other}(x) + {rng.randrange(10**9)}"
                     for k in range(n_lines // 2)]  # fmt: skip
        else:
            lines = [f"// {i} line {k} value {rng.randrange(10**9)}" for k in range(n_lines)]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def git_commit(root: pathlib.Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")  # fmt: skip
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "files"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)


def db_bytes(home: pathlib.Path) -> int:
    return sum(p.stat().st_size for p in home.glob("waymark.db*") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="store_true",
                        help="also print where the refresh after one edit spends its time")  # fmt: skip
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="waymark-map-") as tmp:
        root, home = pathlib.Path(tmp) / "repo", pathlib.Path(tmp) / "home"
        root.mkdir()
        make_repo(root, args.files, args.seed)
        os.environ["WAYMARK_HOME"] = str(home)
        conn = db.connect()
        project = resolve(conn, str(root))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        empty = db_bytes(home)
        timings = {}
        for label in ("first map", "nothing changed"):
            started = time.perf_counter()
            done = snapshot.refresh(conn, project)
            timings[label] = (time.perf_counter() - started, done)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        first = db_bytes(home) - empty
        edited = next(root.glob("pkg0/mod0/*.py"))
        edited.write_text(edited.read_text("utf-8") + "# one more line\n", "utf-8")
        profiler = None
        if args.profile:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        started = time.perf_counter()
        done = snapshot.refresh(conn, project)
        timings["after one edit"] = (time.perf_counter() - started, done)
        if profiler is not None:
            import pstats

            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(r"waymark/|execute", 25)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        second = db_bytes(home) - empty - first
        edges = conn.execute("SELECT count(*) FROM map_edges").fetchone()[0]
        conn.close()
    print(f"machine: {os.cpu_count()} cores; {args.files:,} files; wall seconds of one run each")
    print(f"{'refresh':<16} {'seconds':>8} {'files':>7} {'hashed':>7} {'snapshot':>9}")
    for label, (seconds, done) in timings.items():
        print(f"{label:<16} {seconds:>8.3f} {done['files']:>7,} {done['hashed']:>7,} "
              f"{'new' if done['created'] else 'same':>9}")  # fmt: skip
    print(f"resolved relationships stored for the newest snapshot: {edges:,}")
    per = first / args.files * 1000 / 1024
    print(
        f"database: {first / 1024:,.0f} KiB for the first map ({per:,.0f} KiB per 1,000 files,"
        f" parsed structure included), {second / 1024:,.0f} KiB more for the snapshot after"
        " one edit (its file rows; unchanged contents are not stored again)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
