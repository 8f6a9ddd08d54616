"""The Waymark block in CLAUDE.md and AGENTS.md: inserted between markers, updated in place.

The block's text is `templates/instructions.md`, installed with the package under
`<prefix>/share/waymark/templates/`; a source checkout reads it from the repository.
"""

from __future__ import annotations

import os
import sys

from waymark.base.files import write_atomic
from waymark.errors import InvalidArgument

BEGIN = (
    "<!-- waymark:begin (managed by `waymark enable --instructions`; edits here are replaced) -->"
)
END = "<!-- waymark:end -->"
BEGIN_PREFIX = "<!-- waymark:begin"
FILES = ("CLAUDE.md", "AGENTS.md")


def template() -> str:
    candidates = [
        os.path.join(sys.prefix, "share", "waymark", "templates", "instructions.md"),
        os.path.join(
            os.path.dirname(os.path.realpath(__file__)),
            "..",
            "..",
            "..",
            "templates",
            "instructions.md",
        ),
    ]
    for path in candidates:
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                return f.read().strip() + "\n"
    raise InvalidArgument(
        "the instructions template is missing from this installation; reinstall Waymark"
    )


def block() -> str:
    return f"{BEGIN}\n{template()}{END}\n"


def apply(path: str, *, remove: bool = False) -> str:
    """Insert, update or remove the block in `path`: 'created', 'updated', 'unchanged',
    'removed', or 'deleted' (a file that held nothing but the block). A file with a begin
    marker and no end marker is refused, untouched. The file keeps its line endings: a CRLF
    file gets CRLF lines."""
    existed = os.path.exists(path)
    text = ""
    if existed:
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    crlf = "\r\n" in text
    text = text.replace("\r\n", "\n") if crlf else text
    start = text.find(BEGIN_PREFIX)
    end = text.find(END, start) if start >= 0 else -1
    if start >= 0 and end < 0:
        raise InvalidArgument(f"{path} has a Waymark begin marker without `{END}`; fix it by hand")
    if remove:
        if start < 0:
            return "unchanged"
        new = (text[:start].rstrip("\n") + "\n" + text[end + len(END) :].lstrip("\n")).lstrip("\n")
        verb = "removed"
    elif start >= 0:
        new = text[:start] + block().rstrip("\n") + text[end + len(END) :]
        verb = "updated"
    else:
        new = (text.rstrip("\n") + "\n\n" if text.strip() else "") + block()
        verb = "updated" if existed else "created"
    if new == text:
        return "unchanged"
    if remove and not new.strip():
        os.remove(path)  # nothing but Waymark's block was in it
        return "deleted"
    _write(path, new.replace("\n", "\r\n") if crlf else new)
    return verb


def _write(path: str, text: str) -> None:
    mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else 0o644
    write_atomic(path, text.encode("utf-8"), mode=mode)
