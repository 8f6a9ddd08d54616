"""An error's signature: what makes two failures the same mistake, whatever their paths,
numbers and ids.

A signature is the program and subcommand that failed (`pytest`, `npm run`) and the shape of
the error's telling line: its class and message with paths, numbers, hex ids and long
random tokens folded (`ModuleNotFoundError: No module named 'requests_mock'`). Names stay,
so a missing module and a missing `tsc` are different signatures; so do quoted strings,
since they carry the cause. The telling line is the last line that names an error class, else
the last one that reads like an error, else the last line.
"""

from __future__ import annotations

import re

from waymark.base import shell

_CLASS = re.compile(
    r"^(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception|Exit|Fault|Failure|Warning))\b:?\s*(.*)$"
)
_ERRORISH = (
    "error", "not found", "no such", "cannot", "can't", "could not", "unable", "denied",
    "refused", "failed", "fatal", "missing", "undefined", "timed out", "panicked",
)  # fmt: skip
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\w.~-]*[/\\])+[\w.-]*")
_HEX = re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{7,}\b", re.IGNORECASE)
_NUMBER = re.compile(r"\b\d+(?:[.:]\d+)*\b")
_SPACE = re.compile(r"\s+")
LINE_CHARS = 160


def telling_line(tail: str) -> str:
    """The line of an error output that says what went wrong."""
    lines = [_unprefixed(line) for line in (tail or "").splitlines() if line.strip()]
    lines = [line for line in lines if not line.lower().startswith(("exit code", "command exited"))]
    for line in reversed(lines):
        if _CLASS.match(line):
            return line
    for line in reversed(lines):
        if any(word in line.lower() for word in _ERRORISH):
            return line
    return lines[-1] if lines else ""


def _unprefixed(line: str) -> str:
    """Without pytest's `E   ` margin."""
    line = line.strip()
    return line[1:].strip() if line.startswith("E ") else line


def shape(line: str) -> str:
    """`line` with its paths, hex ids and numbers folded, whitespace single."""
    match = _CLASS.match(line)
    if match:
        line = f"{match.group(1)}: {match.group(2)}".rstrip(": ")
    line = _PATH.sub("<path>", line)
    line = _HEX.sub("<id>", line)
    line = _NUMBER.sub("<n>", line)
    return _SPACE.sub(" ", line).strip()[:LINE_CHARS]


def of(command: str, tail: str | None) -> str:
    """`program subcommand: shaped telling line` (either part may be empty)."""
    return f"{shell.summary(command)}: {shape(telling_line(tail or ''))}".strip(": ")
