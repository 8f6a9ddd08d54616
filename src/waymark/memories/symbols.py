"""Is a symbol target real? A `path::Qualified.name` must name something the file defines.

Python is parsed (`ast`): the qualified name of every function, class and method, and every
module-level name assigned. JavaScript, TypeScript, Go, Rust, Java, Kotlin, C#, C, C++, PHP,
Ruby and Swift are checked by their declaration keywords (`function`, `class`, `func`, `fn`,
`struct`, `interface`, `type`, `const`, ...) with a word match for C-style functions. Any
other file must at least contain each part of the name as a word. A file too large to read
cheaply (over 2 MB) is not checked.
"""

from __future__ import annotations

import os
import re

from waymark.errors import TargetNotFound

MAX_BYTES = 2 * 1024 * 1024
_DECLARING = (
    r"(?:def|class|function|func|fn|struct|enum|interface|trait|type|module|namespace|const|"
    r"let|var|val|impl|record|object|protocol|macro|sub|typedef|union)"
)


def check_defined(path: str, rel: str, symbol: str) -> None:
    """Raise TargetNotFound unless the file at `path` defines `symbol`."""
    try:
        if os.path.getsize(path) > MAX_BYTES:
            return
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return  # the file check already passed; an unreadable file is not ours to judge
    names = _python_names(text) if rel.endswith((".py", ".pyi")) else None
    if names is not None:
        if symbol in names or symbol.split(".")[-1] in {n.split(".")[-1] for n in names}:
            return
        raise TargetNotFound(
            f"symbol {symbol!r} is not defined in {rel}" + _closest(symbol, names),
            target=f"{rel}::{symbol}",
        )
    last = re.escape(symbol.replace("::", ".").split(".")[-1])
    declared = re.search(rf"\b{_DECLARING}\s+(?:[\w*&<>\[\]]+\s+)*?{last}\b", text)
    called_like_c = re.search(rf"^[^\n;=]*\b{last}\s*\([^;]*$", text, re.MULTILINE)
    words = all(
        re.search(rf"\b{re.escape(part)}\b", text)
        for part in symbol.replace("::", ".").split(".")
        if part
    )
    if declared or (called_like_c and words) or (words and not _known_language(rel)):
        return
    raise TargetNotFound(f"symbol {symbol!r} is not defined in {rel}", target=f"{rel}::{symbol}")


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
