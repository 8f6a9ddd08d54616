"""The one place tree-sitter grammars are loaded: each language's grammar wheel, imported
and wrapped in a parser the first time a file of it is parsed, then kept for the process.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any


# language -> (module, function) of its grammar wheel
GRAMMARS = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "java": ("tree_sitter_java", "language"),
    "php": ("tree_sitter_php", "language_php"),
}
_PARSERS: dict[str, Any] = {}


def parser(language: str) -> Any:
    """A tree-sitter parser of `language` (one of GRAMMARS)."""
    found = _PARSERS.get(language)
    if found is None:
        import importlib

        import tree_sitter

        module, function = GRAMMARS[language]
        grammar = getattr(importlib.import_module(module), function)()
        found = _PARSERS[language] = tree_sitter.Parser(tree_sitter.Language(grammar))
    return found


def node_text(node: Any) -> str:
    """A node's source text."""
    return node.text.decode("utf-8", "replace")
