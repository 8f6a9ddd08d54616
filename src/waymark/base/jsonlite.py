"""`json.loads` and `json.dumps` for the hook path, without importing `json`.

`import json` costs a short-lived process ~8 ms, nearly all of it the `re` module that
`json.decoder` compiles its patterns with. The parser and the encoder themselves are C code
in `_json`, which this module drives directly: the same results as `json`, byte for byte.
Anything this does not cover (another interpreter, `indent`, `default`, ...) is handed to
the real `json`, so callers never need to know.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_WHITESPACE = " \t\n\r"
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


def _unserialisable(value: Any) -> Any:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


class _Context:
    """What `_json.make_scanner` reads off a decoder: json.loads's defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__
    memo: dict[str, str] = {}


try:
    import _json

    _scan = _json.make_scanner(_Context())  # type: ignore[arg-type]  # duck-typed in C
except (ImportError, AttributeError, TypeError):  # not CPython: the real json everywhere
    _json = None  # type: ignore[assignment]


def loads(text: str | bytes) -> Any:
    """Like `json.loads(text)`; raises ValueError on invalid JSON."""
    if _json is None or not isinstance(text, str):
        if isinstance(text, (bytes, bytearray)):
            try:
                return loads(bytes(text).decode("utf-8"))
            except UnicodeDecodeError:
                pass  # another encoding, or a BOM: json detects those
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
        if not text[end:].strip(_WHITESPACE):
            return value
    except (StopIteration, SystemError):  # _json reports errors through json.decoder
        pass
    import json  # invalid JSON: let json say exactly what is wrong (a ValueError)

    return json.loads(text)


def dumps(
    value: Any,
    *,
    sort_keys: bool = False,
    ensure_ascii: bool = True,
    separators: tuple[str, str] | None = None,
    **other: Any,
) -> str:
    """Like `json.dumps` with the same arguments."""
    item_sep, key_sep = separators or (", ", ": ")
    if _json is None or other:
        import json

        return json.dumps(
            value, sort_keys=sort_keys, ensure_ascii=ensure_ascii, separators=separators, **other
        )
    basestring = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
    if isinstance(value, str):
        return str(basestring(value))
    try:  # a new encoder per call, as json does: its circular-reference markers start empty
        encode = _json.make_encoder(
            {}, _unserialisable, basestring, None, key_sep, item_sep, sort_keys, False, True
        )
    except TypeError:  # another Python's _json takes other arguments: json knows them
        import json

        return json.dumps(
            value, sort_keys=sort_keys, ensure_ascii=ensure_ascii, separators=separators
        )
    return "".join(encode(value, 0))
