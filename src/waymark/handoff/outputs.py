"""Verbose tool output kept out of the context: opt-in per project, where the client lets a
hook replace what the model sees (Claude Code's PostToolUse `updatedToolOutput`; Codex 0.171
ignores it).

    [output]
    trim_over = 8000   # characters of one stream (stdout or stderr); absent: never trimmed
    keep_days = 7      # how long the whole output is kept

A stream over `trim_over` reaches the model as its head, the lines in between that look like
errors, its tail, and a reference. The whole output, however long, is stored redacted (window
by window) in the owner-only database until it expires; `waymark output ID` returns it and
the MCP `recall` tool (given its id) reads it in pages. Claude Code itself keeps at most
CLAUDE_INLINE characters of a command's output inline and saves the whole elsewhere: the view
says so, and where, when the output tells.
"""

from __future__ import annotations

from waymark.base import clock

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection

HEAD_LINES, TAIL_LINES, ERROR_LINES = 40, 40, 20
PART_CHARS = 1500
LINE_CHARS = 300
DEFAULT_KEEP_DAYS = 7
ID_PREFIX = "out_"
PAGE_CHARS = 16_000  # what one MCP `recall` by id returns of a stored output
CLAUDE_INLINE = 30_000
_SAVED_TO = "Full output saved to:"
_ERROR_WORDS = (
    "error", "fail", "exception", "traceback", "fatal", "panic", "assert", "denied",
    "not found", "cannot", "segmentation",
)  # fmt: skip


def rules_for(cwd: str | None, root: str | None) -> tuple[int, int] | None:
    """(trim_over, keep_days) from the nearest `[output]` table, or None: trimming is off."""
    from waymark.projects.ignore import nearest_table

    found = nearest_table(cwd, root, "output")
    if found is None or "trim_over" not in found[1]:
        return None
    path, table = found
    over, keep = table["trim_over"], table.get("keep_days", DEFAULT_KEEP_DAYS)
    for key, value, low in (("trim_over", over, 1000), ("keep_days", keep, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            from waymark.errors import InvalidArgument

            raise InvalidArgument(f"{path}: [output] {key} must be a whole number >= {low}")
    return int(over), int(keep)


def view(text: str, output_id: str, total: int) -> str:
    """What the model sees of a long stream: head, error lines from the middle, tail, and
    where the whole is (Claude Code's own copy too, when it cut the output)."""
    lines = text.splitlines()
    head = _fit(lines[:HEAD_LINES])
    tail = _fit(lines[-TAIL_LINES:][::-1])[::-1] if len(lines) > HEAD_LINES else []
    middle = lines[len(head) : len(lines) - len(tail)]
    errors = _fit(
        [line for line in middle if any(w in line.lower() for w in _ERROR_WORDS)][:ERROR_LINES]
    )
    parts = ["\n".join(head)]
    left = len(middle) - len(errors)
    if errors:
        parts.append(
            f"[... error lines from the {len(middle)} lines in between:]\n" + "\n".join(errors)
        )
    if left:
        parts.append(f"[... {left} lines left out]")
    if tail:
        parts.append("\n".join(tail))
    parts.append(
        f"[Waymark trimmed this output ({total:,} characters) to the view above. The whole"
        f" output, redacted, is {output_id}: `waymark output {output_id}`, or the MCP"
        f" `recall` tool with id {output_id} (in pages of {PAGE_CHARS:,} characters).]"
    )
    client = _client_copy(text)
    if client:
        parts.append(client)
    return "\n".join(parts)


def _client_copy(text: str) -> str | None:
    """What Claude Code did with an output past its inline limit, and where its copy is."""
    at = text.find(_SAVED_TO)
    if at >= 0:
        words = text[at + len(_SAVED_TO) :].split(maxsplit=1)
        path = words[0] if words else "(no path given)"
        return (
            f"[Claude Code had already cut this output at {CLAUDE_INLINE:,} characters; its own"
            f" full copy: {path}]"
        )
    if len(text) > CLAUDE_INLINE:
        return (
            f"[Claude Code keeps at most {CLAUDE_INLINE:,} characters of a command's output"
            " inline and saves the whole under its project folder's tool-results/.]"
        )
    return None


def _fit(lines: list[str]) -> list[str]:
    out: list[str] = []
    used = 0
    for line in lines:
        line = line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"
        used += len(line) + 1
        if used > PART_CHARS:
            break
        out.append(line)
    return out


def trim(
    conn: Connection,
    project: Project,
    session_id: str,
    tool_name: str,
    command: str | None,
    response: dict[str, Any],
    rules: tuple[int, int],
) -> dict[str, Any] | None:
    """The response with each stream over the threshold replaced by its view (the whole
    output stored first), or None when nothing is over it."""
    over, keep_days = rules
    long = [k for k in ("stdout", "stderr") if isinstance(response.get(k), str)]
    long = [k for k in long if len(response[k]) > over]
    if not long:
        return None
    import time

    from waymark import settings
    from waymark.base import redact
    from waymark.storage import connection as db
    from waymark.storage import sessions

    contacts = bool(settings.get(conn, "capture.redact_contacts"))
    output_id = ID_PREFIX + clock.new_id()
    whole = "\n".join(f"[{k}]\n{response[k]}" for k in ("stdout", "stderr") if response.get(k))
    stored, _ = redact.scrub_long(whole, contacts=contacts)
    said = redact.scrub_cut(command, 300, contacts=contacts)[0] if command else None
    updated = dict(response)
    for key in long:
        updated[key] = view(response[key], output_id, len(response[key]))
    stamp = clock.now()
    row = {
        "id": output_id,
        "project_id": project.id,
        "session_id": session_id,
        "at": stamp,
        "expires_at": clock.second(time.time() + keep_days * 86400),
        "tool": tool_name,
        "command": said,
        "output": stored,
        "chars": sum(len(response[k]) for k in long),
        "shown_chars": sum(len(updated[k]) for k in long),
    }
    with db.write(conn):
        sessions.put_output(conn, row)
    return updated


def page(found: dict[str, Any], offset: int) -> dict[str, Any]:
    """One page of a stored output: PAGE_CHARS characters from `offset`, with the total and
    where the next page starts (None after the last)."""
    text = found["output"]
    end = min(len(text), offset + PAGE_CHARS)
    keep = ("id", "at", "tool", "command", "chars")
    return {k: found[k] for k in keep} | {
        "output": text[offset:end],
        "offset": offset,
        "total_chars": len(text),
        "next_offset": end if end < len(text) else None,
    }


def get(conn: Connection, project: Project, output_id: str) -> dict[str, Any]:
    """A stored output of the project; NotFound when unknown or expired."""
    from waymark.errors import NotFound
    from waymark.storage import sessions

    found = sessions.get_output(conn, output_id, clock.now())
    if found is None or found["project_id"] != project.id:
        raise NotFound(
            f"no stored output {output_id!r} in this project (outputs expire after their"
            " [output] keep_days)",
            id=output_id,
        )
    return found
