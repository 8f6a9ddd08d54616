"""A hook process as Claude Code starts it, in each form `waymark install` writes: through
the shell (`bash -c '"python" -I -c "..." claude-code'`, the command form) and without one
(the exec form, `command` and `args`, Claude Code 2.1.139 and later). Whole processes, the
two forms alternating run by run so they share the machine's noise, with a `python -I -c
pass` floor beside them.

    python bench/hook_form.py [--runs 60] [--hook pre_tool_use]

The hook reads an empty data home: the process's own cost, which is what the form changes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--hook", default="pre_tool_use", help="the hook module")
    args = parser.parse_args()
    from waymark.base import launch

    program = launch.program(args.hook)
    forms = {
        "command form (bash -c)": ["/bin/bash", "-c",
                                   f'"{sys.executable}" -I -c "{program}" claude-code'],
        "exec form (no shell)": [sys.executable, "-I", "-c", program, "claude-code"],
        "bare python -I -c pass": [sys.executable, "-I", "-c", "pass"],
    }  # fmt: skip
    payload = (b'{"session_id": "bench", "cwd": "/nonexistent", "hook_event_name": "PreToolUse",'
               b' "tool_name": "Bash", "tool_input": {"command": "ls"}}')  # fmt: skip
    env = {**os.environ, "WAYMARK_HOME": tempfile.mkdtemp(prefix="waymark-hook-form-")}
    took: dict[str, list[float]] = {name: [] for name in forms}
    for n in range(args.runs + 5):
        for name, argv in forms.items():
            started = time.perf_counter()
            subprocess.run(argv, input=payload, capture_output=True, env=env, check=True)
            if n >= 5:  # warm-up runs left out
                took[name].append(1000 * (time.perf_counter() - started))

    def p95(values: list[float]) -> float:
        return sorted(values)[max(0, int(len(values) * 0.95) - 1)]

    print(f"{args.hook}, {args.runs} runs each, whole processes, ms")
    print(f"{'':26} {'p50':>7} {'p95':>7}")
    for name, values in took.items():
        print(f"{name:26} {statistics.median(values):7.1f} {p95(values):7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
