"""JavaScript, JSX, TypeScript and TSX structure, parsed with tree-sitter
(tree-sitter-javascript, tree-sitter-typescript from PyPI), in the shape `python.extract`
gives: declarations with qualified names, kinds, line spans and the SHA-256 of their text;
references (imports and explicit calls) with the declaration they sit in.

Declarations: function declarations, classes, their methods (`Widget.render`), and a
`const`/`let`/`var` bound to an arrow function or function expression (a function). Imports:
`module:name` for a named or default import (`./util:fmt`, `react:default as React`),
`module` for a namespace or bare import (`./util as util`); ` as alias` names the local
binding (`{ a as b }`). Re-exports (`export { a as b } from "./x"`, `export * from "./x"`,
`export * as ns from "./x"`) are `export` references of the same form, which the resolver
follows through barrels. Calls: a name or a dotted chain of names, `this.x` included, and
`new Name(...)`.
"""

from __future__ import annotations

import hashlib

from waymark.codemap import grammars
from waymark.codemap.grammars import node_text

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any


def _dotted(node: Any) -> bool:
    if node.type in ("identifier", "this"):
        return True
    if node.type == "member_expression":
        obj, prop = node.child_by_field_name("object"), node.child_by_field_name("property")
        return obj is not None and prop is not None and prop.type == "property_identifier" and (
            _dotted(obj))  # fmt: skip
    return False


FUNCTIONS = ("function_declaration", "generator_function_declaration")
CLASSES = ("class_declaration", "abstract_class_declaration")
FUNCTION_VALUES = ("arrow_function", "function_expression", "function", "generator_function")


def extract(source: bytes, language: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """(declarations, references) of one module's source, as `python.extract` gives them."""
    tree = grammars.parser(language).parse(source)
    declarations: list[tuple[Any, ...]] = []
    references: list[tuple[Any, ...]] = []

    def declare(name: str, kind: str, node: Any, scope: list[str]) -> list[str]:
        qualified = [*scope, name]
        declarations.append((".".join(qualified), kind, node.start_point[0] + 1,
                             node.end_point[0] + 1, hashlib.sha256(node.text).hexdigest()))  # fmt: skip
        return qualified

    def walk(node: Any, scope: list[str], in_class: bool) -> None:
        here = ".".join(scope) or None
        for child in node.children:
            kind = child.type
            name = child.child_by_field_name("name")
            if kind in FUNCTIONS and name is not None:
                inner = declare(node_text(name), "function", child, scope)
                walk(child, inner, False)
            elif kind in CLASSES and name is not None:
                inner = declare(node_text(name), "class", child, scope)
                walk(child, inner, True)
            elif kind == "method_definition" and in_class and name is not None:
                inner = declare(node_text(name), "method", child, scope)
                walk(child, inner, False)
            elif kind == "variable_declarator" and name is not None and name.type == "identifier":
                value = child.child_by_field_name("value")
                if value is not None and value.type in FUNCTION_VALUES:
                    inner = declare(node_text(name), "function", child, scope)
                    walk(value, inner, False)
                else:
                    walk(child, scope, in_class)
            elif kind == "export_statement" and child.child_by_field_name("source") is not None:
                references.extend(_reexports(child, here))
            elif kind == "import_statement":
                references.extend(_imports(child, here))
            else:
                if kind in ("call_expression", "new_expression"):
                    field = "function" if kind == "call_expression" else "constructor"
                    function = child.child_by_field_name(field)
                    if function is not None and _dotted(function):
                        references.append(
                            ("call", here, node_text(function), child.start_point[0] + 1)
                        )
                walk(child, scope, in_class)

    walk(tree.root_node, [], False)
    return declarations, references


def _reexports(node: Any, here: str | None) -> list[tuple[Any, ...]]:
    """What an `export ... from "module"` re-exports: named, as a namespace, or all."""
    module = node_text(node.child_by_field_name("source")).strip("'\"`")
    line = node.start_point[0] + 1
    clause = next((c for c in node.named_children if c.type == "export_clause"), None)
    spaced = next((c for c in node.named_children if c.type == "namespace_export"), None)
    if clause is not None:
        found = []
        for spec in clause.named_children:
            exported, local = (spec.child_by_field_name(f) for f in ("name", "alias"))
            if spec.type == "export_specifier" and exported is not None:
                alias = f" as {node_text(local)}" if local is not None else ""
                found.append(("export", here, f"{module}:{node_text(exported)}{alias}", line))
        return found
    if spaced is not None:
        named = spaced.named_children[0] if spaced.named_children else None
        alias = f" as {node_text(named)}" if named is not None else ""
        return [("export", here, module + alias, line)]
    return [("export", here, f"{module}:*", line)]


def _imports(node: Any, here: str | None) -> list[tuple[Any, ...]]:
    """What an `import` statement brings in: the module, its default, a namespace, names."""
    source_node = node.child_by_field_name("source")
    if source_node is None:
        return []
    module = node_text(source_node).strip("'\"`")
    line = node.start_point[0] + 1
    clause = next((c for c in node.named_children if c.type == "import_clause"), None)
    if clause is None:
        return [("import", here, module, line)]
    found = []
    for part in clause.named_children:
        if part.type == "identifier":
            found.append(("import", here, f"{module}:default as {node_text(part)}", line))
        elif part.type == "namespace_import":
            local = next((c for c in part.named_children if c.type == "identifier"), None)
            alias = f" as {node_text(local)}" if local is not None else ""
            found.append(("import", here, module + alias, line))
        elif part.type == "named_imports":
            for spec in part.named_children:
                imported = spec.child_by_field_name("name")
                local = spec.child_by_field_name("alias")
                alias = f" as {node_text(local)}" if local is not None else ""
                if spec.type == "import_specifier" and imported is not None:
                    found.append(("import", here, f"{module}:{node_text(imported)}{alias}", line))
    return found
