"""Python's structure, parsed with tree-sitter (tree-sitter-python from PyPI): declarations
with their qualified names and line spans, imports, and syntactically explicit calls.

A declaration is a class, a function, or a method (a function directly in a class body),
named by its dotted path inside the module (`Cache.get`, `outer.inner`), spanning its
decorators too. An import is `module` (`import a.b`) or `module:name` (`from a import b`;
a relative module keeps its dots, `.util:helper`; `from a import *` is `a:*`), followed by
` as alias` when renamed (`a.b as m`, `a:b as c`). A call is recorded when what is called is a name or a dotted chain of names (`helper`,
`self.cache.get`, `os.path.join`): the enclosing declaration, the callee as written, the line.
Calls on a call's result (`A().f()`) are left out: nothing syntactic says what they reach.
Nothing here resolves a name; that needs the whole map.
"""

from __future__ import annotations

import hashlib

from waymark.codemap import grammars
from waymark.codemap.grammars import node_text

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any


def _dotted(node: Any) -> bool:
    """A name, or a chain of names joined by dots."""
    if node.type == "identifier":
        return True
    if node.type == "attribute":
        obj, attr = node.child_by_field_name("object"), node.child_by_field_name("attribute")
        return obj is not None and attr is not None and _dotted(obj)
    return False


def _imported(item: Any) -> str:
    """An imported name as written, `name as alias` when renamed."""
    if item.type == "aliased_import":
        name, alias = item.child_by_field_name("name"), item.child_by_field_name("alias")
        return f"{node_text(name)} as {node_text(alias)}"
    return node_text(item)


def extract(source: bytes) -> tuple[list[tuple[Any, ...]], list[tuple[str, Any, str, int]]]:
    """(declarations [(qualified name, kind, first line, last line, SHA-256 of its text)],
    references [(kind import | call, enclosing declaration or None, target, line)]) of one
    module's source."""
    tree = grammars.parser("python").parse(source)
    declarations: list[tuple[Any, ...]] = []
    references: list[tuple[str, Any, str, int]] = []

    def walk(node: Any, scope: list[str], in_class: bool) -> None:
        here = ".".join(scope) or None
        for child in node.children:
            kind = child.type
            if kind in ("function_definition", "class_definition"):
                name = child.child_by_field_name("name")
                body = child.child_by_field_name("body")
                if name is None or body is None:
                    continue
                qualified = [*scope, node_text(name)]
                is_class = kind == "class_definition"
                span = child.parent if child.parent.type == "decorated_definition" else child
                declarations.append((
                    ".".join(qualified),
                    "class" if is_class else "method" if in_class else "function",
                    span.start_point[0] + 1,
                    span.end_point[0] + 1,
                    hashlib.sha256(span.text).hexdigest(),
                ))  # fmt: skip
                for part in ("superclasses", "parameters"):  # evaluated where it is defined
                    sub = child.child_by_field_name(part)
                    if sub is not None:
                        walk(sub, scope, in_class)
                walk(body, qualified, is_class)
            elif kind == "import_statement":
                for item in child.named_children:
                    references.append(("import", here, _imported(item), child.start_point[0] + 1))
            elif kind == "import_from_statement":
                module = child.child_by_field_name("module_name")
                if module is None:
                    continue
                base = node_text(module)
                if any(c.type == "wildcard_import" for c in child.named_children):
                    references.append(("import", here, f"{base}:*", child.start_point[0] + 1))
                for item in child.children_by_field_name("name"):
                    references.append(
                        ("import", here, f"{base}:{_imported(item)}", child.start_point[0] + 1)
                    )
            else:
                if kind == "call":
                    function = child.child_by_field_name("function")
                    if function is not None and _dotted(function):
                        references.append(
                            ("call", here, node_text(function), child.start_point[0] + 1)
                        )
                walk(child, scope, in_class)

    walk(tree.root_node, [], False)
    return declarations, references
