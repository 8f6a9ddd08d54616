"""Whole-process timings of the commands an agent or a person runs most, against the bare
interpreter, at a store of --memories memories (the synthetic corpus, bench/corpus.py).

Each command is run as `waymark` is installed (the interpreter, its site, the launcher's own
imports, the command's imports and its work), --runs times, interleaved with the bare
interpreter (`python -I -c pass`) so both see the same machine. The launcher is the one
install.sh writes (`--launcher install`, the default) or pip's console script (`--launcher
pip`, what a plain `pip install` gives: it imports `re` first).
Targets (#46): `--help` and `--version` within 1.5x the bare interpreter; a command that
needs no model (`status`, `list`, `show`, `checkpoint show`, `map impact`) within 2.5x.

    python bench/commands.py [--memories 10000] [--runs 20] [--launcher install|pip] [--keep]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import corpus

SCRIPT = pathlib.Path(sys.executable).with_name("waymark")


def timed(argv: list[str], cwd: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-500:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--launcher", choices=("install", "pip"), default="install")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    root = pathlib.Path(tempfile.mkdtemp(prefix="waymark-commands-"))
    try:
        repo = root / "repo"
        (repo / "src").mkdir(parents=True)
        (repo / "src" / "app.py").write_text("def main():\n    return 1\n", encoding="utf-8")
        env = {**os.environ, "WAYMARK_HOME": str(root / "home")}
        env.pop("WAYMARK_EMBED_MODEL_DIR", None)  # none of these commands needs the model
        git = ["git", "-C", str(repo)]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm",
                        "init"], check=True)  # fmt: skip
        os.environ["WAYMARK_HOME"] = env["WAYMARK_HOME"]
        from waymark.projects.resolve import resolve
        from waymark.storage import connection as db

        conn = db.connect()
        project = resolve(conn, str(repo))
        records = [dict(r, scope="project", target=None)
                   for r in corpus.make_corpus(args.memories, 1).records]  # fmt: skip
        corpus.import_jsonl(conn, project, records)
        one = conn.execute("SELECT id FROM memories LIMIT 1").fetchone()[0]
        conn.close()
        waymark = [str(SCRIPT)]
        if args.launcher == "install":  # what install.sh writes in place of pip's script
            launcher = root / "waymark"
            launcher.write_text(f"#!{sys.executable} -I\nfrom waymark.cli import entry\nentry()\n",
                                encoding="utf-8")  # fmt: skip
            launcher.chmod(0o755)
            waymark = [str(launcher)]
        for setup in (["enable"], ["checkpoint", "create", "--objective", "Ship the importer"],
                      ["map", "refresh"]):  # fmt: skip
            timed([*waymark, *setup], str(repo), env)
        commands = {
            "--version": ["--version"], "--help": ["--help"], "status": ["status"],
            "list": ["list"], "show": ["show", one], "checkpoint show": ["checkpoint", "show"],
            "map impact": ["map", "impact", "src/app.py"],
        }  # fmt: skip
        floor_argv = [sys.executable, "-I", "-c", "pass"]
        print(f"{args.memories:,} memories, {args.runs} runs each, whole processes; "
              f"{os.cpu_count()} cores; the {args.launcher} launcher\n")  # fmt: skip
        print(f"{'command':18} {'p50 ms':>8} {'p95 ms':>8} {'x bare p50':>11} {'target':>7}")
        floors: list[float] = []
        for name, extra in commands.items():
            times = []
            for _ in range(args.runs):
                floors.append(timed(floor_argv, str(repo), env))
                times.append(timed([*waymark, *extra], str(repo), env))
            p50 = statistics.median(times) * 1000
            p95 = sorted(times)[min(len(times) - 1, round(0.95 * (len(times) - 1)))] * 1000
            floor = statistics.median(floors) * 1000
            target = "1.5x" if name.startswith("--") else "2.5x"
            print(f"{name:18} {p50:8.1f} {p95:8.1f} {p50 / floor:10.2f}x {target:>7}")
        print(
            f"\nthe bare interpreter (`python -I -c pass`): p50 {statistics.median(floors) * 1000:.1f} ms"
        )
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
