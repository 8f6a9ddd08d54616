"""Surgical edits of a TOML file: whole tables and top-level keys added or removed as text.

Waymark adds two things to Codex's config.toml: an `[mcp_servers.waymark]` table, appended
at the end, and a top-level `notify = [...]`, inserted after the last top-level key. Each is
one block of text, remembered verbatim, so removing it restores the file byte for byte. A
small line scanner (aware of multi-line strings and arrays) finds table headers; every edit
is checked by parsing the result and comparing it with what the edit meant to do.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from typing import Any

from waymark.errors import ConfigMalformed

from .files import display

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib


@dataclass(frozen=True)
class Line:
    start: int
    end: int  # exclusive, after the newline
    kind: str  # blank | comment | header | kv | continuation
    key: tuple[str, ...] = ()


def parse(text: str | None, path: str) -> dict[str, Any]:
    if not text:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        where = re.search(r"at line (\d+), column (\d+)", str(exc))
        line, col = (int(where[1]), int(where[2])) if where else (None, None)
        raise ConfigMalformed(
            f"{display(path)}{f' line {line}, column {col}' if line else ''}: "
            f"{str(exc).split(' (at ')[0]}; fix the file and re-run (nothing was changed)",
            path=path,
            line=line,
            column=col,
        ) from None


def _split_key(raw: str) -> tuple[str, ...]:
    parts, i, n = [], 0, len(raw)
    while i < n:
        while i < n and raw[i] in " \t":
            i += 1
        if i < n and raw[i] == '"':
            j = i + 1
            while raw[j] != '"':
                j += 2 if raw[j] == "\\" else 1
            parts.append(json.loads(raw[i : j + 1]))
            i = j + 1
        elif i < n and raw[i] == "'":
            j = raw.index("'", i + 1)
            parts.append(raw[i + 1 : j])
            i = j + 1
        else:
            j = i
            while j < n and raw[j] not in ". \t":
                j += 1
            parts.append(raw[i:j])
            i = j
        while i < n and raw[i] in " \t":
            i += 1
        if i < n and raw[i] == ".":
            i += 1
    return tuple(parts)


def _header_key(line: str) -> tuple[str, ...]:
    body = line.strip()
    body = body[2:] if body.startswith("[[") else body[1:]
    # the closing bracket is the last one before any comment
    close = _code_part(body).rstrip().rstrip("]").rstrip()
    return _split_key(close)


def _unquoted(line: str, ch: str) -> int:
    """The index of the first `ch` outside quotes in `line`, or -1."""
    quote = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == ch:
            return i
        i += 1
    return -1


def _code_part(line: str) -> str:
    """`line` up to an unquoted `#`."""
    hash_at = _unquoted(line, "#")
    return line if hash_at < 0 else line[:hash_at]


def _lex(line: str, ml: str | None, depth: int) -> tuple[str | None, int]:
    """Carry multi-line string and bracket state across one value line."""
    i, n = 0, len(line)
    while i < n:
        if ml:
            if ml == '"""' and line[i] == "\\":
                i += 2
                continue
            if line.startswith(ml, i):
                i += 3
                while i < n and line[i] == ml[0]:  # up to two quotes may close the content
                    i += 1
                ml = None
                continue
            i += 1
            continue
        c = line[i]
        if c == "#":
            break
        if line.startswith('"""', i) or line.startswith("'''", i):
            ml, i = line[i : i + 3], i + 3
        elif c == '"':
            i += 1
            while i < n and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
            i += 1
        elif c == "'":
            end = line.find("'", i + 1)
            i = n if end < 0 else end + 1
        else:
            if c in "[{":
                depth += 1
            elif c in "]}":
                depth -= 1
            i += 1
    return ml, depth


def scan(text: str) -> list[Line]:
    lines: list[Line] = []
    ml: str | None = None
    depth = 0
    pos = 0
    while pos < len(text):
        key: tuple[str, ...] = ()
        nl = text.find("\n", pos)
        end = len(text) if nl < 0 else nl + 1
        raw = text[pos:end]
        stripped = raw.strip()
        if ml or depth > 0:
            kind = "continuation"
            ml, depth = _lex(raw, ml, depth)
        elif not stripped:
            kind = "blank"
        elif stripped.startswith("#"):
            kind = "comment"
        elif stripped.startswith("["):
            kind, key = "header", _header_key(raw)
        else:
            kind = "kv"
            eq = _unquoted(raw, "=")
            key = _split_key(raw[:eq]) if eq > 0 else ()
            ml, depth = _lex(raw[eq + 1 :] if eq > 0 else raw, ml, depth)
        lines.append(Line(pos, end, kind, key))
        pos = end
    return lines


def table_span(text: str, key: tuple[str, ...]) -> tuple[int, int] | None:
    """The text of `[key]` and its sub-tables that follow it, without trailing blank or
    comment lines (those belong to the next table); None if no such header."""
    lines = scan(text)
    for i, line in enumerate(lines):
        if line.kind == "header" and line.key == key:
            j = i + 1
            while j < len(lines) and not (
                lines[j].kind == "header" and lines[j].key[: len(key)] != key
            ):
                j += 1
            last = j - 1
            while last > i and lines[last].kind in ("blank", "comment"):
                last -= 1
            return line.start, lines[last].end
    return None


def top_level_end(text: str) -> int | None:
    """Where a new top-level key can go: after the last line of the last top-level key
    (before any table). None when the file has no top-level key."""
    end = None
    for line in scan(text):
        if line.kind == "header":
            break
        if line.kind in ("kv", "continuation"):
            end = line.end
    return end


def top_level_line(text: str, name: str) -> tuple[int, int] | None:
    """The span of the top-level statement `name = ...` (with its continuation lines)."""
    lines = scan(text)
    for i, line in enumerate(lines):
        if line.kind == "header":
            return None
        if line.kind == "kv" and line.key == (name,):
            j = i + 1
            while j < len(lines) and lines[j].kind == "continuation":
                j += 1
            return line.start, lines[j - 1].end
    return None


def value(v: Any) -> str:
    """A TOML literal for the small values Waymark writes (JSON strings are TOML strings)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(value(x) for x in v) + "]"
    raise TypeError(f"no TOML rendering for {type(v).__name__}")


def key_part(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k, ensure_ascii=False)


def table(keys: tuple[str, ...], values: dict[str, Any], comment: str, nl: str) -> str:
    lines = [f"# {comment}", "[" + ".".join(key_part(k) for k in keys) + "]"]
    lines += [f"{key_part(k)} = {value(v)}" for k, v in values.items()]
    return nl.join(lines) + nl


def newline(text: str | None) -> str:
    return "\r\n" if text and "\r\n" in text else "\n"
