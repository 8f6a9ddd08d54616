"""Go, Rust, C, C++, C#, Java and PHP structure, parsed with tree-sitter (one grammar wheel
from PyPI each), in the shape `python.extract` gives: declarations (qualified name, kind,
line span, SHA-256 of their text) and references (kind, enclosing declaration, target, line).

One walker serves the seven, told by a `Spec` which nodes declare what. What each records:

- Declarations: functions; methods (a function in a type's body, a Go method by its receiver
  type, a C++ `Type::name` defined out of its class, a Rust `impl` block's functions); types
  (`class`, `struct`, `interface`, `trait`, `enum`) whose members are qualified by them
  (`Cache.get`). Namespaces, packages and modules qualify nothing: `Cache.get`, never
  `app.store.Cache.get`.
- Imports, as `module`, `module:name` or `module:*`, and ` as alias` when renamed:
  Go `import u "x/util"` (`x/util as u`; a dot import `x/util:*`); Rust `use` paths as
  written with `::`, a `{...}` group expanded (`self` in it is the group's path), `as`
  kept, `*` as `path:*` (`pub use` is an `export`: it imports and re-exports); C and C++ `#include` paths (quoted or angled); C# `using A.B`,
  `using static A.B.T` (`A.B.T:*`), `using X = A.B.T`; Java `import a.b.T`,
  `import static a.b.T.m` (`a.b.T:m`), `import a.b.*` and `import static a.b.T.*` (`:*`); PHP `use A\\B\\T`, grouped `use A\\{B, C as D}`, `use function`, and
  `require`/`include` of a literal path. Namespaces are written with dots (`A.B.T`).
- Packages: the package or namespace a file declares (`package` references: Go's package
  clause, Java's `package`, C# and PHP namespaces), which the resolver uses to find a type.
- Calls: a name or a chain of names (`helper`, `util::pad`, `this->load`, `Pad::fmt`,
  `obj.Method`), and `new T(...)`, with `::`, `->` and `\\` written as dots; the receiver
  of a Go method, Rust's `self`/`Self`, PHP's `$this`, `self` and `static` are written
  `this`/`self`. A call on a call's result names nothing syntactic and is left out.
"""

from __future__ import annotations

import hashlib

from waymark.base.record import record
from waymark.codemap import grammars
from waymark.codemap.grammars import node_text

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

# (a language's grammar is in `grammars`) types: node type -> kind of a declaration that qualifies
# its members; functions: node types that declare a function (a method inside a type);
# scopes: node types walked through without qualifying (namespaces, modules, templates);
# calls: node type -> (object field or "", name field) of what it calls.
Spec = record("Spec", "types functions scopes calls")

SPECS: dict[str, Any] = {
    "go": Spec(
        {},  # type_spec is handled in `_go_type`
        ("function_declaration", "method_declaration"),
        (),
        {"call_expression": ("", "function")},
    ),
    "rust": Spec(
        {
            "struct_item": "struct",
            "enum_item": "enum",
            "trait_item": "trait",
            "union_item": "struct",
        },  # fmt: skip
        ("function_item",),
        ("mod_item", "declaration_list"),
        {"call_expression": ("", "function")},
    ),
    "c": Spec(
        {"struct_specifier": "struct", "enum_specifier": "enum", "union_specifier": "struct"},
        ("function_definition",),
        (
            "linkage_specification",
            "declaration_list",
            "preproc_if",
            "preproc_ifdef",
            "preproc_else",
            "preproc_elif",
        ),  # fmt: skip
        {"call_expression": ("", "function")},
    ),
    "cpp": Spec(
        {
            "class_specifier": "class",
            "struct_specifier": "struct",
            "enum_specifier": "enum",
            "union_specifier": "struct",
        },  # fmt: skip
        ("function_definition",),
        (
            "namespace_definition",
            "declaration_list",
            "template_declaration",
            "linkage_specification",
            "preproc_if",
            "preproc_ifdef",
            "preproc_else",
            "preproc_elif",
        ),  # fmt: skip
        {"call_expression": ("", "function"), "new_expression": ("", "type")},
    ),
    "csharp": Spec(
        {
            "class_declaration": "class",
            "struct_declaration": "struct",
            "record_declaration": "class",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
        },  # fmt: skip
        ("method_declaration", "constructor_declaration", "local_function_statement"),
        ("namespace_declaration", "file_scoped_namespace_declaration", "declaration_list"),
        {"invocation_expression": ("", "function"), "object_creation_expression": ("", "type")},
    ),
    "java": Spec(
        {
            "class_declaration": "class",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "record_declaration": "class",
            "annotation_type_declaration": "interface",
        },  # fmt: skip
        ("method_declaration", "constructor_declaration"),
        ("class_body", "interface_body", "enum_body", "enum_body_declarations"),
        {"method_invocation": ("object", "name"), "object_creation_expression": ("", "type")},
    ),
    "php": Spec(
        {
            "class_declaration": "class",
            "interface_declaration": "interface",
            "trait_declaration": "trait",
            "enum_declaration": "enum",
        },  # fmt: skip
        ("function_definition", "method_declaration"),
        ("namespace_definition", "compound_statement", "declaration_list"),
        {
            "function_call_expression": ("", "function"),
            "member_call_expression": ("object", "name"),
            "scoped_call_expression": ("scope", "name"),
            "nullsafe_member_call_expression": ("object", "name"),
            "object_creation_expression": ("", ""),
        },  # fmt: skip
    ),
}

# A node that joins an object and a member (`a.b`, `a::b`, `a->b`, `A\B`), and the plain
# names a chain may hold. Separators are left out; anything else breaks the chain.
MEMBERS = {
    "selector_expression", "field_expression", "scoped_identifier", "qualified_identifier",
    "member_access_expression", "field_access", "qualified_name", "scoped_type_identifier",
    "namespace_name",
}  # fmt: skip
NAMES = {
    "identifier", "field_identifier", "type_identifier", "package_identifier",
    "namespace_identifier", "property_identifier", "name", "this", "self", "super", "crate",
    "variable_name", "relative_scope", "primitive_type", "predefined_type",
}  # fmt: skip
SEPARATORS = {".", "::", "->", "\\", "?.", "?->"}
SELF = {"self": "self", "Self": "self", "$this": "this", "this": "this", "static": "self"}


def chain(node: Any | None, receiver: str | None = None) -> str | None:
    """A name or chain of names as dotted text (`util.pad`, `this.load`), else None."""
    if node is None:
        return None
    if node.type in NAMES:
        text = node_text(node).lstrip("\\")
        if receiver and text == receiver:
            return "this"
        return SELF.get(text, text) if text else None
    if node.type == "generic_name" or node.type == "generic_type":  # `List<int>`: its name
        return chain(node.named_children[0] if node.named_children else None, receiver)
    if node.type not in MEMBERS:
        return None
    parts = [c for c in node.children if c.type not in SEPARATORS and c.type != "comment"]
    if node.type == "member_access_expression" and len(parts) == 1:  # `this.X` in C#
        parts = [c for c in node.children if c.type == "this"] + parts
    names = [chain(p, receiver) for p in parts]
    if not names or any(n is None for n in names):
        return None
    return ".".join(str(n) for n in names)


def _go_receiver(node: Any) -> tuple[str | None, str | None]:
    """(receiver type, receiver variable) of a Go method: `func (c *Cache) Get()`."""
    receiver = node.child_by_field_name("receiver")
    param = receiver.named_children[0] if receiver and receiver.named_children else None
    if param is None:
        return None, None
    kind = param.child_by_field_name("type")
    while kind is not None and kind.type in ("pointer_type", "generic_type"):
        kind = kind.named_children[0] if kind.named_children else None
    variable = param.child_by_field_name("name")
    return (node_text(kind) if kind is not None else None,
            node_text(variable) if variable is not None else None)  # fmt: skip


def _declarator_name(node: Any) -> str | None:
    """A C or C++ function definition's name: `load`, `Cache::load` as `Cache.load`,
    `~Cache`, `operator==`, through pointers and references."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None:
        if declarator.type == "function_declarator":
            inner = declarator.child_by_field_name("declarator")
            if inner is None:
                return None
            if inner.type in ("identifier", "field_identifier", "destructor_name",
                              "operator_name"):  # fmt: skip
                return node_text(inner)
            if inner.type == "qualified_identifier":
                parts = []
                while inner is not None and inner.type == "qualified_identifier":
                    scope = inner.child_by_field_name("scope")
                    if scope is not None:
                        parts.append(node_text(scope).split("<")[0])
                    inner = inner.child_by_field_name("name")
                if inner is None:
                    return None
                return ".".join([*parts, node_text(inner)])
            return None
        declarator = declarator.child_by_field_name("declarator")
    return None


def extract(source: bytes, language: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """(declarations, references) of one file's source, as `python.extract` gives them."""
    spec = SPECS[language]
    tree = grammars.parser(language).parse(source)
    declarations: list[tuple[Any, ...]] = []
    references: list[tuple[Any, ...]] = []

    def declare(qualified: list[str], kind: str, node: Any) -> None:
        declarations.append((".".join(qualified), kind, node.start_point[0] + 1,
                             node.end_point[0] + 1, hashlib.sha256(node.text).hexdigest()))  # fmt: skip

    def refer(kind: str, here: str | None, target: str, node: Any) -> None:
        references.append((kind, here, target, node.start_point[0] + 1))

    def walk(node: Any, scope: list[str], in_type: bool, receiver: str | None) -> None:
        here = ".".join(scope) or None
        for child in node.children:
            kind = child.type
            if _imports(language, child, here, refer):
                continue
            name_node = child.child_by_field_name("name")
            if kind in spec.functions:
                name, inner_receiver, owner = None, receiver, scope
                if language == "go" and kind == "method_declaration":
                    owner_type, inner_receiver = _go_receiver(child)
                    owner = [owner_type] if owner_type else scope
                    name = node_text(name_node) if name_node is not None else None
                elif language in ("c", "cpp"):
                    name = _declarator_name(child)
                elif name_node is not None:
                    name = node_text(name_node)
                if name:
                    qualified = [*owner, *name.split(".")]
                    method = in_type or owner is not scope or "." in name
                    declare(qualified, "method" if method else "function", child)
                    walk(child, qualified, False, inner_receiver)
                    continue
            elif kind in spec.types and name_node is not None:
                if language not in ("c", "cpp") or child.child_by_field_name("body") is not None:
                    qualified = [*scope, node_text(name_node)]
                    declare(qualified, spec.types[kind], child)
                    walk(child, qualified, True, receiver)
                    continue
            elif language == "go" and kind == "type_spec" and name_node is not None:
                body = child.child_by_field_name("type")
                found = {"struct_type": "struct", "interface_type": "interface"}
                if body is not None and body.type in found:
                    declare([*scope, node_text(name_node)], found[body.type], child)
                    continue
            elif language == "rust" and kind == "impl_item":
                implemented = chain(child.child_by_field_name("type"))
                body = child.child_by_field_name("body")
                if implemented and body is not None:
                    walk(body, [implemented.split(".")[-1]], True, receiver)
                    continue
            elif kind in spec.scopes:
                walk(child, scope, in_type if kind.endswith(("_list", "_body")) else False,
                     receiver)  # fmt: skip
                continue
            if kind in spec.calls:
                object_field, name_field = spec.calls[kind]
                if kind == "object_creation_expression" and not name_field:  # PHP `new T`
                    target = next((chain(c) for c in child.named_children
                                   if c.type in ("name", "qualified_name")), None)  # fmt: skip
                else:
                    target = chain(child.child_by_field_name(name_field), receiver)
                    if target and object_field:
                        obj = child.child_by_field_name(object_field)
                        prefix = chain(obj, receiver) if obj is not None else ""
                        target = f"{prefix}.{target}" if prefix else (
                            None if obj is not None else target)  # fmt: skip
                if target:
                    refer("call", here, target, child)
            walk(child, scope, in_type, receiver)

    walk(tree.root_node, [], False, None)
    return declarations, references


def _string(node: Any) -> str | None:
    """The text of a string literal, its quotes off."""
    for child in node.named_children:
        if child.type in ("interpreted_string_literal_content", "string_content",
                          "string_value", "raw_string_literal_content"):  # fmt: skip
            return node_text(child)
    text = node_text(node)
    return text[1:-1] if len(text) >= 2 else None


def _imports(language: str, node: Any, here: str | None, refer: Any) -> bool:
    """Record `node`'s imports or package, if it is one; whether it was."""
    found = _IMPORTS.get(language)
    return found(node, here, refer) if found is not None else False


def _go_imports(node: Any, here: str | None, refer: Any) -> bool:
    """Go: its package clause and each import spec."""
    kind = node.type
    if kind == "package_clause":
        name = next((c for c in node.named_children if c.type == "package_identifier"), None)
        if name is not None:
            refer("package", here, node_text(name), node)
        return True
    if kind != "import_spec":
        return False
    path = node.child_by_field_name("path")
    alias = node.child_by_field_name("name")
    target = _string(path) if path is not None else None
    if target:
        if alias is not None and alias.type == "dot":
            target += ":*"
        elif alias is not None and alias.type == "package_identifier":
            target += f" as {node_text(alias)}"
        refer("import", here, target, node)
    return True


def _rust_imports(node: Any, here: str | None, refer: Any) -> bool:
    """Rust: each `use` (a `pub use` re-exports)."""
    kind = node.type
    if kind != "use_declaration":
        return False
    argument = node.child_by_field_name("argument")
    public = any(c.type == "visibility_modifier" for c in node.children)
    for target in _rust_use(argument, ""):  # `pub use` imports and re-exports
        refer("export" if public else "import", here, target, node)
    return True


def _c_imports(node: Any, here: str | None, refer: Any) -> bool:
    """C and C++: each `#include`."""
    kind = node.type
    if kind != "preproc_include":
        return False
    path = node.child_by_field_name("path")
    if path is not None:
        text = node_text(path) if path.type == "system_lib_string" else _string(path)
        if text:
            refer("import", here, text, node)
    return True


def _csharp_imports(node: Any, here: str | None, refer: Any) -> bool:
    """C#: its namespaces (walked on: they hold the types) and each `using`."""
    kind = node.type
    if kind in ("namespace_declaration", "file_scoped_namespace_declaration"):
        name = chain(node.child_by_field_name("name"))
        if name:
            refer("package", here, name, node)
        return False  # walked on: it holds the types
    if kind != "using_directive":
        return False
    alias = node.child_by_field_name("name")
    named = [c for c in node.named_children if c is not alias]
    target = chain(named[-1]) if named else None
    if target:
        if alias is not None:
            target += f" as {node_text(alias)}"
        elif any(c.type == "static" for c in node.children):
            target += ":*"  # a type: its static members come into scope
        refer("import", here, target, node)
    return True


def _java_imports(node: Any, here: str | None, refer: Any) -> bool:
    """Java: its package and each import (static members as owner:member)."""
    kind = node.type
    if kind == "package_declaration":
        name = chain(next(iter(node.named_children), None))
        if name:
            refer("package", here, name, node)
        return True
    if kind != "import_declaration":
        return False
    path = chain(next((c for c in node.named_children if c.type in MEMBERS | NAMES), None))
    if path:
        if any(c.type == "asterisk" for c in node.children):
            path += ":*"
        elif any(c.type == "static" for c in node.children) and "." in path:
            owner, _, member = path.rpartition(".")
            path = f"{owner}:{member}"
        refer("import", here, path, node)
    return True


def _php_imports(node: Any, here: str | None, refer: Any) -> bool:
    """PHP: its namespace, each `use` (grouped or not) and each require or include."""
    kind = node.type
    if kind == "namespace_definition":
        name = chain(node.child_by_field_name("name"))
        if name:
            refer("package", here, name, node)
        return False
    if kind in ("require_expression", "require_once_expression", "include_expression",
                "include_once_expression"):  # fmt: skip
        literal = _first_string(node)
        if literal:
            refer("import", here, "./" + literal.lstrip("/"), node)
        return True
    if kind != "namespace_use_declaration":
        return False
    group = node.child_by_field_name("body")
    prefix = next((chain(c) for c in node.named_children if c.type == "namespace_name"), None)
    clauses = group.named_children if group is not None else node.named_children
    for clause in clauses:
        if clause.type != "namespace_use_clause":
            continue
        alias = clause.child_by_field_name("alias")
        name = next((chain(c) for c in clause.named_children
                     if c is not alias and c.type in ("name", "qualified_name")), None)  # fmt: skip
        if name:
            target = f"{prefix}.{name}" if group is not None and prefix else name
            refer("import", here, target + (f" as {node_text(alias)}" if alias else ""), node)
    return True


_IMPORTS: dict[str, Any] = {
    "go": _go_imports,
    "rust": _rust_imports,
    "c": _c_imports,
    "cpp": _c_imports,
    "csharp": _csharp_imports,
    "java": _java_imports,
    "php": _php_imports,
}


def _first_string(node: Any) -> str | None:
    if node.type in ("string", "encapsed_string"):
        return _string(node)
    for child in node.named_children:
        found = _first_string(child)
        if found:
            return found
    return None


def _rust_use(node: Any | None, prefix: str) -> list[str]:
    """The paths a `use` argument names, a group expanded: `a::b::{c, d as e}` is
    `a::b::c` and `a::b::d as e`; `a::*` is `a:*`."""
    if node is None:
        return []
    join = lambda tail: f"{prefix}::{tail}" if prefix else tail  # noqa: E731
    kind = node.type
    if kind == "self" and prefix:  # `use a::{self, b}`: `a` itself
        return [prefix]
    if kind in ("identifier", "scoped_identifier", "crate", "self", "super"):
        return [join(node_text(node))]
    if kind == "use_as_clause":
        path, alias = node.child_by_field_name("path"), node.child_by_field_name("alias")
        return [f"{join(node_text(path))} as {node_text(alias)}"] if path and alias else []
    if kind == "use_wildcard":
        inner = next(iter(node.named_children), None)
        return [join(node_text(inner)) + ":*"] if inner is not None else []
    if kind == "scoped_use_list":
        path = node.child_by_field_name("path")
        inner = join(node_text(path)) if path is not None else prefix
        return _rust_use(node.child_by_field_name("list"), inner)
    if kind == "use_list":
        return [t for child in node.named_children for t in _rust_use(child, prefix)]
    return []
