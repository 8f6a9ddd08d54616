"""What the memory proxy adds before the first byte of an answer, as an agent sees it.

For each size: the repository and memories `bench/hooks.py` builds (the synthetic corpus,
pinned rules, an active checkpoint, earlier failures), a scripted upstream on loopback
(tests/upstream.py, streaming Anthropic Messages, OpenAI Responses and Chat Completions) and
`waymark proxy` started in the repository as a user starts it. Each round sends one request
straight to the upstream and the same request through the proxy, in turn, and times each
from sending to the first byte of the streamed answer (httpx, one kept-alive connection
each, as an SDK keeps one). Three kinds of request: a conversation's first (the session
packet and the prompt packet are made), a new turn of a running conversation (the prompt
packet, the earlier packets replayed), and a retry of a turn (everything replayed, nothing
made). Added = through the proxy minus straight, pair by pair.

    python bench/proxy.py [--sizes 10000] [--rounds 60] [--keep]

Target: p95 added before the first byte under 15 ms at 10,000 memories.
WAYMARK_EMBED_MODEL_DIR defaults to ../shared/models/all-MiniLM-L6-v2-onnx when that exists.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import random
import shutil
import subprocess
import sys
import tempfile
import time

import httpx

import hooks as hook_bench

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from upstream import Upstream  # noqa: E402

TARGET_MS = 15.0
APIS = ("anthropic", "responses", "chat")


def body(api: str, turns: list[str]) -> tuple[str, dict]:
    """A streamed request whose history is these user turns, each answered but the last."""
    history: list[dict] = []
    for i, text in enumerate(turns):
        history.append({"role": "user", "content": text})
        if i < len(turns) - 1:
            history.append({"role": "assistant", "content": "Done."})
    if api == "anthropic":
        return "/v1/messages", {"model": "m", "max_tokens": 512, "stream": True,
                                "system": "You are a coding agent.", "messages": history}  # fmt: skip
    if api == "responses":
        return "/v1/responses", {"model": "m", "stream": True,
                                 "instructions": "You are a coding agent.", "input": history}  # fmt: skip
    return "/v1/chat/completions", {"model": "m", "stream": True, "messages": [
        {"role": "system", "content": "You are a coding agent."}, *history]}  # fmt: skip


def first_byte(client: httpx.Client, url: str, payload: bytes) -> float:
    started = time.perf_counter()
    took = None
    with client.stream("POST", url, content=payload,
                       headers={"content-type": "application/json"}) as answer:  # fmt: skip
        for _ in answer.iter_raw():
            if took is None:
                took = time.perf_counter() - started
    if took is None:
        raise SystemExit(f"{url}: no body ({answer.status_code})")
    if answer.status_code != 200:
        raise SystemExit(f"{url}: status {answer.status_code}")
    return took


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def start_proxy(
    repo: pathlib.Path, upstream: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen, str]:
    """`waymark proxy` started in `repo` as a user starts it; (its process, its URL)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "waymark", "proxy", "--port", "0", "--upstream", upstream, "--json"],
        cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    lines: list[str] = []
    while not lines or lines[-1].rstrip() != "}":
        line = proc.stdout.readline() if proc.stdout else ""
        if not line:
            raise SystemExit(f"the proxy exited: {''.join(lines)}")
        lines.append(line)
    return proc, json.loads("".join(lines))["url"]


def measure(size: int, tmp: pathlib.Path, rounds: int, seed: int) -> dict:
    env = hook_bench.setup(size, tmp, seed)
    rng = random.Random(seed)
    prompts = env["prompts"]
    upstream = Upstream()
    proc, url = start_proxy(env["repo"], upstream.url)
    added: dict[str, list[float]] = {"first": [], "turn": [], "retry": []}
    injected = 0
    try:
        with httpx.Client(timeout=30) as straight, httpx.Client(timeout=30) as through:
            for n in range(rounds + 3):
                api = APIS[n % len(APIS)]
                turns = [rng.choice(prompts), rng.choice(prompts)]
                for kind, asked in (("first", turns[:1]), ("turn", turns), ("retry", turns)):
                    path, data = body(api, asked)
                    payload = json.dumps(data).encode()
                    direct = first_byte(straight, upstream.url + path, payload)
                    proxied = first_byte(through, url + path, payload)
                    injected += b"<waymark-memory" in upstream.requests[-1]["raw"]
                    if n >= 3:
                        added[kind].append(1000 * (proxied - direct))
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        upstream.stop()
    return {"added": added, "injected": injected, "requests": 3 * (rounds + 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    default_model = ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
    if "WAYMARK_EMBED_MODEL_DIR" not in os.environ and default_model.is_dir():
        os.environ["WAYMARK_EMBED_MODEL_DIR"] = str(default_model)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="waymark-proxy-"))
    try:
        print(f"machine: {os.cpu_count()} cores; added = through the proxy minus straight to the"
              " upstream, ms before the first byte of a streamed answer")  # fmt: skip
        head = (
            f"{'size':>8} {'request':<8} {'n':>4} {'p50':>7} {'p95':>7} {'max':>7}  target  result"
        )
        print(head)
        print("-" * len(head))
        for size in (int(s) for s in args.sizes.split(",")):
            found = measure(size, tmp, args.rounds, args.seed)
            for kind, values in found["added"].items():
                p95 = percentile(values, 0.95)
                print(f"{size:>8,} {kind:<8} {len(values):>4} {percentile(values, 0.5):>7.1f}"
                      f" {p95:>7.1f} {max(values):>7.1f}  {TARGET_MS:>5.0f}   "
                      f"{'PASS' if p95 <= TARGET_MS else 'MISS'}")  # fmt: skip
            print(f"{'':>8} requests that reached the upstream with a packet: "
                  f"{found['injected']}/{found['requests']}")  # fmt: skip
        print(f"load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
