"""What the map's references reach, resolved only when exactly one saved target matches;
anything else stays unresolved, never guessed. A reference resolves within its language
family (Python; JavaScript and TypeScript; Go; Rust; C and C++; C#; Java; PHP).

Imports, by family (` as alias` names the local binding in every family):
- Python: `a.b` is the one file whose module path is `a.b` or ends with `.a.b` (`a/b.py`,
  `a/b/__init__.py`); `from a.b import name` the declaration `name` of that file, else
  module `a.b.name`, else the file; relative imports (`.util`, `..core`) from the package.
- JavaScript/TypeScript: a relative specifier (`./util`, `../lib/x.js`) as written, with an
  extension, or its directory's `index`; a package name reaches no file here. A name the
  file does not declare is followed through its re-exports (`export { a as b } from`,
  `export * from`), three barrels deep, to the one declaration they reach; a barrel depends
  on what it re-exports.
- Go: an import path reaches the one directory of Go files it ends with (the longest such
  directory when several do), and every file of that package.
- Rust: `crate::a::b` from the importer's crate root (the nearest directory with `lib.rs`
  or `main.rs`), `self::`, `super::` from its module; a module is `a/b.rs` or `a/b/mod.rs`;
  a path whose module is a file names that file's declaration `b` when it has one, else
  what that module re-exports as `b` (`pub use`, three modules deep).
- C and C++: `#include "x.h"` next to the includer first, else the one file ending in `/x.h`
  (angled includes too, so a project header reached through `-I` resolves when unique).
- Java, C# and PHP: a type or function `a.b.T` is the one file whose package or namespace is
  `a.b` and that declares `T` (PHP `use function` too); `import static a.b.T.m` its member,
  and `import static a.b.T.*` / C# `using static A.B.T` bind all of T's members; PHP
  `require`/`include` of a literal path, next to the includer. A whole package or namespace
  (`import a.b.*`, `using A.B`) names no one file and stays unresolved.

Calls: a name is a declaration of the same file, else what an import bound to that name,
else (Go) the one declaration of the same package, else (Java, C#, C++) a member of the
enclosing type in the same file, else (except Go) the one top-level declaration of that
name in the family. Rust `super::f()` and `crate::a::f()` are `f` of that module's file. `self.m` / `this.m` (Go receivers, PHP `$this`,
Rust `Self`) is the enclosing type's member `m`, looked up in the same file, then the same
package (Go), then the family. `x.m` where an import bound `x` is `m` in what it bound (a
module, a package, a type); any other `T.m` is the one declaration `T.m` of the family.
"""

from __future__ import annotations

import posixpath

from waymark.codemap.imports import IMPLICIT_THIS, TYPES, Index, family, reach, rust_module

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any


class Map(Index):
    """A snapshot's files, declarations and references, resolvable: what its imports reach
    (`imports`), and what its calls do."""

    # -- edges --------------------------------------------------------------------------

    def edges(self) -> list[dict[str, Any]]:
        """Every resolved reference: {kind, from, to, line}; `from` and `to` are a file path
        or `path::qualname`."""
        out = []
        bound: dict[str, dict[str, str]] = {}  # file -> local name -> what it stands for
        for path, kind, _, target, line in self.references:
            if kind not in ("import", "export"):
                continue
            reached, names = reach(self, path, target)
            if kind == "import" or family(path) == "rust":  # `pub use` binds, JS exports not
                bound.setdefault(path, {}).update(names)
            for to in reached:
                if to != path:
                    out.append({"kind": "import", "from": path, "to": to, "line": line})
        for path, kind, source, target, line in self.references:
            if kind != "call":
                continue
            called = self._call(path, source, target, bound.get(path, {}))
            if called:
                out.append({"kind": "call", "from": f"{path}::{source}" if source else path,
                            "to": called, "line": line})  # fmt: skip
        return out

    def _in_package(self, path: str, qualname: str) -> str | None:
        """The one file of `path`'s Go package declaring `qualname`."""
        found = [f for f in self.dirs.get(posixpath.dirname(path), [])
                 if qualname in self.declared.get(f, {})]  # fmt: skip
        return f"{found[0]}::{qualname}" if len(found) == 1 else None

    def _anywhere(self, path: str, qualname: str) -> str | None:
        found = self.unique.get((family(path), qualname))
        return f"{found}::{qualname}" if found else None

    def _call(
        self, path: str, source: str | None, target: str, names: dict[str, str]
    ) -> str | None:
        fam = family(path)
        head, _, rest = target.partition(".")
        mine = self.declared.get(path, {})
        if not rest:
            if target in mine:
                return f"{path}::{target}"
            meaning = names.get(target, "")
            if "::" in meaning:
                return meaning
            if fam == "go":
                return self._in_package(path, target)
            owner = _owner(source, mine) if source and fam in IMPLICIT_THIS else None
            if owner and f"{owner}.{target}" in mine:  # `load()` for `this.load()`
                return f"{path}::{owner}.{target}"
            return self._anywhere(path, target)
        if fam == "rust" and head in ("crate", "super"):  # `super::pad()`, `crate::a::f()`
            module, _, function = target.replace(".", "::").rpartition("::")
            found = rust_module(self, module, path)
            return (
                f"{found}::{function}"
                if found and function in self.declared.get(found, {})
                else None
            )
        if head in ("self", "cls", "this"):
            if not source or "." in rest:
                return None
            owner = _owner(source, mine)
            if owner is None:
                return None
            member = f"{owner}.{rest}"
            if member in mine:
                return f"{path}::{member}"
            return self._in_package(path, member) if fam == "go" else self._anywhere(path, member)
        bound = names.get(head)
        if bound:
            if bound.startswith("dir:"):  # a Go package
                held = [f for f in self.dirs.get(bound[4:], []) if rest in self.declared.get(f, {})]
                return f"{held[0]}::{rest}" if len(held) == 1 else None
            file, sep, qualname = bound.partition("::")
            member = f"{qualname}.{rest}" if sep else rest
            return f"{file}::{member}" if member in self.declared.get(file, {}) else None
        if target in mine:
            return f"{path}::{target}"
        if fam == "python" and head not in mine:
            return None  # a Python name not defined here nor imported is a local variable
        return self._anywhere(path, target)


def _owner(source: str, mine: dict[str, str]) -> str | None:
    """The type a method sits in: the innermost enclosing type declared in its file, else
    (a Go method, a C++ `T::m`, a Rust `impl`) the method's qualifier."""
    parts = source.split(".")
    for i in range(len(parts) - 1, 0, -1):
        owner = ".".join(parts[:i])
        if mine.get(owner) in TYPES:
            return owner
    if mine.get(source) == "method" and len(parts) > 1:
        return ".".join(parts[:-1])
    return None


def dependents(edges: list[dict[str, Any]], target: str, depth: int) -> list[dict[str, Any]]:
    """What reaches `target` (a file, or `path::qualname`; a file also stands for every
    declaration in it), then what reaches those, to `depth` steps: [{at, via, kind, line,
    depth}], nearest first, each once."""
    into: dict[str, list[dict[str, Any]]] = {}
    by_file: dict[str, list[str]] = {}
    for edge in edges:
        if edge["to"] not in into:
            by_file.setdefault(edge["to"].partition("::")[0], []).append(edge["to"])
        into.setdefault(edge["to"], []).append(edge)
    out: list[dict[str, Any]] = []
    seen = {target}
    frontier = [target]
    for step in range(1, depth + 1):
        following = []
        for node in frontier:
            keys = by_file.get(node, []) if "::" not in node else [node]
            for key in keys:
                for edge in into.get(key, []):
                    at = edge["from"]
                    if at in seen:
                        continue
                    seen.add(at)
                    out.append({"at": at, "via": key, "kind": edge["kind"],
                                "line": edge["line"], "depth": step})  # fmt: skip
                    following.append(at)
        frontier = following
    return out
