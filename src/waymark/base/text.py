"""Text that SQLite and the tokenizer accept: lone surrogates become U+FFFD.

Python keeps bytes that are not UTF-8 (in argv, in a file read with surrogateescape) and JSON
escapes such as "\\udcff" as lone surrogates. SQLite's binding and the tokenizer refuse them,
which would turn a capture or a memory into an error; they are replaced instead, as a decoder
replaces a bad byte. Costs nothing for the usual text: `isascii` and one encode.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any


def mend(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


def mend_all(value: Any) -> Any:
    """`value` (JSON-like: dicts, lists, strings) with `mend` applied to every string."""
    if isinstance(value, str):
        return mend(value)
    if isinstance(value, dict):
        return {mend_all(k): mend_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [mend_all(v) for v in value]
    return value
