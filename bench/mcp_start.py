"""How soon `waymark mcp` answers a client that starts it, as Codex does: the handshake
(`initialize`, then `tools/list`) and a first tool call sent at once, without waiting.

Each run is a new process (`python -m waymark mcp`, what `waymark install` registers), timed
from its start to each reply; the same with WAYMARK_MCP_DIRECT=1 (the server without its
front) for comparison. Target: the handshake answered within 300 ms, p95.

    python bench/mcp_start.py [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

TARGET_MS = 300.0
MESSAGES = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "status"}},
]


def one_run(env: dict[str, str]) -> dict[int, float]:
    """Milliseconds from the process's start to the reply of each request id."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "waymark", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdin and proc.stdout
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in MESSAGES).encode())
    proc.stdin.flush()
    times: dict[int, float] = {}
    while len(times) < 3:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the server closed its output after {sorted(times)}")
        reply = json.loads(line)
        if reply.get("id") in (1, 2, 3):
            times[reply["id"]] = 1000 * (time.perf_counter() - started)
    proc.stdin.close()
    proc.wait(timeout=30)
    proc.stdout.close()
    return times


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="waymark-bench-mcp-")
    base = {**os.environ, "WAYMARK_HOME": home}
    base.pop("WAYMARK_MCP_DIRECT", None)
    print(f"{args.runs} runs each; ms from process start to the reply; machine: "
          f"{os.cpu_count()} cores")  # fmt: skip
    print(f"{'server':10} {'reply':18} {'p50':>8} {'p95':>8} {'max':>8}  target")
    worst = 0.0
    for label, env in (("front", base), ("direct", {**base, "WAYMARK_MCP_DIRECT": "1"})):
        one_run(env)  # warm-up: the database, the page cache
        runs = [one_run(env) for _ in range(args.runs)]
        for rid, name in ((1, "initialize"), (2, "tools/list"), (3, "first tools/call")):
            values = [r[rid] for r in runs]
            target = f"<= {TARGET_MS:.0f} ms" if rid in (1, 2) and label == "front" else ""
            if target:
                worst = max(worst, pct(values, 95))
            print(
                f"{label:10} {name:18} {pct(values, 50):8.1f} {pct(values, 95):8.1f}"
                f" {max(values):8.1f}  {target}"
            )
    verdict = "PASS" if worst <= TARGET_MS else "MISS"
    print(f"handshake p95 {worst:.1f} ms: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
