"""Is a symbol target real? A `path::Qualified.name` must name something the file defines.

Python is parsed (`ast`): the qualified name of every function, class and method, and every
module-level name assigned. JavaScript, TypeScript, Go, Rust, Java, Kotlin, C#, C, C++, PHP,
Ruby and Swift are checked by their declaration keywords (`function`, `class`, `func`, `fn`,
`struct`, `interface`, `type`, `const`, ...) with a word match for C-style functions. Any
other file must at least contain each part of the name as a word. A file too large to read
cheaply (over 2 MB) is not checked.
"""

from __future__ import annotations

import hashlib
import os
import re

from waymark.errors import TargetNotFound

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable

MAX_BYTES = 2 * 1024 * 1024
_DECLARING = (
    r"(?:def|class|function|func|fn|struct|enum|interface|trait|type|module|namespace|const|"
    r"let|var|val|impl|record|object|protocol|macro|sub|typedef|union)"
)


def check_defined(
    path: str,
    rel: str,
    symbol: str,
    mapped: Callable[[str, str], tuple[str, set[str]] | None] | None = None,
) -> None:
    """Raise TargetNotFound unless the file at `path` defines `symbol`. Where the code map
    parsed the file as it is now (`mapped`), its declarations are the authority: a symbol
    it declares passes, and one it does not passes only as a name the map does not record
    (a Python module-level assignment, a `const`/`let`/`var`/`type`-like declaration)."""
    try:
        if os.path.getsize(path) > MAX_BYTES:
            return
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return  # the file check already passed; an unreadable file is not ours to judge
    found = mapped(rel, hashlib.sha256(data).hexdigest()) if mapped else None
    if found is not None and symbol.replace("::", ".") in found[1]:
        return
    text = data.decode("utf-8", errors="replace")
    names = _python_names(text) if rel.endswith((".py", ".pyi")) else None
    if names is not None:
        if symbol in names or (found is None and
                               symbol.split(".")[-1] in {n.split(".")[-1] for n in names}):  # fmt: skip
            return
        raise TargetNotFound(
            f"symbol {symbol!r} is not defined in {rel}"
            + _map_note(found)
            + _closest(symbol, names | (found[1] if found else set())),
            target=f"{rel}::{symbol}",
        )
    last = re.escape(symbol.replace("::", ".").split(".")[-1])
    declared = re.search(rf"\b{_DECLARING}\s+(?:[\w*&<>\[\]]+\s+)*?{last}\b", text)
    if declared:
        return
    if found is not None:  # the map's parse of this very content: no looser guess
        raise TargetNotFound(
            f"symbol {symbol!r} is not declared in {rel}"
            + _map_note(found)
            + _closest(symbol.replace("::", "."), found[1]),
            target=f"{rel}::{symbol}",
        )
    # A C-style definition: type words, the name, its parameters, then `{` (a one-line body
    # too) or the end of the line (the brace on the next); or a head whose line ends open.
    called_like_c = re.search(
        rf"^[ \t]*(?:[\w*&:<>,\[\]]+[ \t]+)+[*&]*{last}[ \t]*\([^;{{}}]*\)[ \t\w]*(?:\{{|$)"
        rf"|^[^\n;=]*\b{last}\s*\([^;]*$",
        text,
        re.MULTILINE,
    )
    words = all(
        re.search(rf"\b{re.escape(part)}\b", text)
        for part in symbol.replace("::", ".").split(".")
        if part
    )
    if (called_like_c and words) or (words and not _known_language(rel)):
        return
    raise TargetNotFound(f"symbol {symbol!r} is not defined in {rel}", target=f"{rel}::{symbol}")


def _map_note(found: tuple[str, set[str]] | None) -> str:
    return f" (code map {found[0]})" if found else ""


def _known_language(rel: str) -> bool:
    return rel.endswith(
        (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".rs", ".java", ".kt", ".cs",
         ".c", ".h", ".cc", ".cpp", ".hpp", ".php", ".rb", ".swift")
    )  # fmt: skip


def _python_names(text: str) -> set[str] | None:
    """Qualified names a Python module defines, or None when it does not parse."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    names: set[str] = set()

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(prefix + node.name)
                walk(node.body, f"{prefix}{node.name}.")
            elif not prefix and isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(t.id for t in targets if isinstance(t, ast.Name))

    walk(tree.body, "")
    return names


def _closest(symbol: str, names: set[str]) -> str:
    import difflib

    near = difflib.get_close_matches(symbol, sorted(names), n=3, cutoff=0.6)
    return f"; did you mean {', '.join(near)}?" if near else ""
