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

import functools
import os
import posixpath
from typing import Any

from waymark.codemap.walk import language

JS_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
FAMILIES = {
    "python": "python", "javascript": "js", "typescript": "js", "tsx": "js", "go": "go",
    "rust": "rust", "c": "c", "cpp": "c", "csharp": "csharp", "java": "java", "php": "php",
}  # fmt: skip
TYPES = ("class", "struct", "interface", "trait", "enum")
IMPLICIT_THIS = ("java", "csharp", "c")
REEXPORT_HOPS = 3  # barrels re-exporting barrels, followed this deep  # where `m()` in a method may be `this.m()`


@functools.lru_cache(maxsize=1 << 16)
def family(path: str) -> str | None:
    return FAMILIES.get(language(path) or "")


def _module(path: str) -> str | None:
    if not path.endswith((".py", ".pyi")):
        return None
    parts = path.rsplit(".", 1)[0].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) if parts else None


def split(path: str, target: str) -> tuple[str, str, str]:
    """(module, name, alias) of an import target as the extractors write it."""
    spec, _, alias = target.partition(" as ")
    if family(path) == "rust":
        return (spec[:-2], "*", alias) if spec.endswith(":*") else (spec, "", alias)
    module, colon, name = spec.rpartition(":")
    return (module, name, alias) if colon else (spec, "", alias)


class Map:
    """A snapshot's files, declarations and references, resolvable."""

    def __init__(
        self,
        files: list[str],
        declarations: list[tuple[Any, ...]],
        references: list[tuple[Any, ...]],
    ):
        self.files = set(files)
        self.declared: dict[str, dict[str, str]] = {}  # path -> qualname -> kind
        for path, qualname, kind, *_ in declarations:
            self.declared.setdefault(path, {})[qualname] = kind
        self.references = references
        self.modules: dict[str, list[str]] = {}  # module path and each dotted suffix -> files
        self.by_name: dict[str, list[str]] = {}  # a file's base name -> files
        self.dirs: dict[str, list[str]] = {}  # a Go package's directory -> its files
        for path in sorted(self.files):
            self.by_name.setdefault(posixpath.basename(path), []).append(path)
            if path.endswith(".go"):
                self.dirs.setdefault(posixpath.dirname(path), []).append(path)
            name = _module(path)
            if name is None:
                continue
            parts = name.split(".")
            for i in range(len(parts)):
                self.modules.setdefault(".".join(parts[i:]), []).append(path)
        self.dirs_by_last: dict[str, list[str]] = {}  # a Go directory's last segment -> dirs
        for directory in self.dirs:
            if directory:
                self.dirs_by_last.setdefault(posixpath.basename(directory), []).append(directory)
        self.go_names: dict[str, set[str]] = {}  # a Go directory -> the package names it declares
        self.packages: dict[tuple[str | None, str], list[str]] = {}
        self.exports: dict[str, list[tuple[str, str, str]]] = {}  # file -> (module, name, as)
        for path, kind, _, target, _ in references:
            if kind == "export":
                self.exports.setdefault(path, []).append(split(path, target))
            if kind == "package" and path.endswith(".go"):
                self.go_names.setdefault(posixpath.dirname(path), set()).add(target)
            if kind == "package":
                found = self.packages.setdefault((family(path), target), [])
                if path not in found:
                    found.append(path)
        named: dict[tuple[str | None, str], set[str]] = {}  # (family, qualname) -> files
        for path, names in self.declared.items():
            fam = family(path)
            for name in names:
                named.setdefault((fam, name), set()).add(path)
        self.unique = {k: next(iter(ps)) for k, ps in named.items() if len(ps) == 1}

    # -- imports ------------------------------------------------------------------------

    def module_file(self, name: str, importer: str) -> str | None:
        """The one file Python module `name` (or JS specifier) is, seen from `importer`."""
        if family(importer) == "js":
            return self._relative(name, importer, JS_EXTENSIONS, "index")
        if name.startswith("."):
            dots = len(name) - len(name.lstrip("."))
            base = importer.split("/")[:-1]
            base = base[: len(base) - (dots - 1)] if dots > 1 else base
            joined = "/".join([*base, *[p for p in name[dots:].split(".") if p]])
            for candidate in (f"{joined}.py", f"{joined}/__init__.py"):
                if candidate in self.files:
                    return candidate
            return None
        found = self.modules.get(name, [])
        return found[0] if len(found) == 1 else None

    def _relative(
        self, spec: str, importer: str, extensions: tuple[str, ...], index: str
    ) -> str | None:
        """A relative path (`./util`, `../lib/x.js`) as a file of the map: as written, with
        an extension, or its directory's index."""
        if not spec.startswith("."):
            return None
        base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
        if base.startswith("../") or base == "..":
            return None
        candidates = [base, *(base + e for e in extensions),
                      *(f"{base}/{index}{e}" for e in extensions)]  # fmt: skip
        return next((c for c in candidates if c in self.files), None)

    def _suffix(self, spec: str, importer: str) -> str | None:
        """A C/C++ include or PHP path: next to the includer, else the one file ending with
        it."""
        spec = spec.strip("<>\"'")
        if spec.startswith("./"):
            spec = spec[2:]
        near = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
        if near in self.files:
            return near
        found = [f for f in self.by_name.get(posixpath.basename(spec), [])
                 if f == spec or f.endswith("/" + spec)]  # fmt: skip
        return found[0] if len(found) == 1 else None

    def _go_package(self, path: str) -> str | None:
        """The one directory of Go files an import path names (the longest it ends with)."""
        last = path.rsplit("/", 1)[-1]
        found = [d for d in self.dirs_by_last.get(last, []) if path == d or path.endswith("/" + d)]
        if not found:
            return None
        longest = max(len(d) for d in found)
        best = [d for d in found if len(d) == longest]
        return best[0] if len(best) == 1 else None

    def _rust_module(self, path: str, importer: str) -> str | None:
        parts = [p for p in path.split("::") if p]
        base = _rust_children(importer)
        if parts and parts[0] == "crate":
            root = self._crate_root(importer)
            if root is None:
                return None
            base, parts = root, parts[1:]
        elif parts and parts[0] == "self":
            parts = parts[1:]
        elif parts and parts[0] == "super":
            while parts and parts[0] == "super":
                base, parts = posixpath.dirname(base), parts[1:]
        else:  # a child module (2018 paths), else one named from the crate root
            child = self._rust_module("self::" + path, importer)
            if child is not None:
                return child
            root = self._crate_root(importer)
            if root is None:
                return None  # another crate's: no file here
            base = root
        if not parts:  # the module itself: `super`, `crate`
            found = [c for c in (f"{base}.rs", f"{base}/mod.rs", f"{base}/lib.rs",
                                 f"{base}/main.rs") if c.lstrip("/") in self.files]  # fmt: skip
            return found[0].lstrip("/") if len(found) == 1 else None
        joined = posixpath.join(base, *parts) if base else "/".join(parts)
        found = [c for c in (f"{joined}.rs", f"{joined}/mod.rs") if c in self.files]
        return found[0] if len(found) == 1 else None

    def _crate_root(self, importer: str) -> str | None:
        directory = posixpath.dirname(importer)
        while True:
            for root in ("lib.rs", "main.rs"):
                if posixpath.join(directory, root) in self.files:
                    return directory
            if not directory:
                return None
            directory = posixpath.dirname(directory)

    def _typed(self, fam: str | None, dotted: str) -> str | None:
        """`path::T` for the one file of package `a.b` declaring `T` (dotted `a.b.T`)."""
        package, _, name = dotted.rpartition(".")
        found = [
            f for f in self.packages.get((fam, package), []) if name in self.declared.get(f, {})
        ]
        return f"{found[0]}::{name}" if len(found) == 1 else None

    def _rust_target(self, path: str, importer: str, hops: int) -> str | None:
        """What a Rust `use` path names: a module's file, else `file::item` of its parent
        module (through that module's `pub use` re-exports, `hops` deep), else the parent's
        file."""
        found = self._rust_module(path, importer)
        if found or "::" not in path:
            return found
        head, _, last = path.rpartition("::")
        parent = self._rust_module(head, importer)
        if parent is None:
            return None
        if last in self.declared.get(parent, {}):
            return f"{parent}::{last}"
        if hops > 0:
            for module, name, alias in self.exports.get(parent, []):
                if name == "*":  # `pub use a::*`: the item may be a's
                    deeper = self._rust_target(f"{module}::{last}", parent, hops - 1)
                elif (alias or module.rsplit("::", 1)[-1]) == last:
                    deeper = self._rust_target(module, parent, hops - 1)
                else:
                    continue
                if deeper and "::" in deeper:
                    return deeper
        return parent

    def _reexported(self, barrel: str, name: str, hops: int) -> str | None:
        """The one declaration `name` that JavaScript/TypeScript file `barrel` re-exports
        (`export { a as name } from`, `export * from`), followed `hops` barrels deep."""
        found: set[str] = set()
        for module, exported, alias in self.exports.get(barrel, []):
            source = self.module_file(module, barrel)
            if source is None or source == barrel:
                continue
            if exported == "*" and not alias:
                original = name
            elif exported not in ("", "*") and (alias or exported) == name:
                original = exported
            else:
                continue
            if original in self.declared.get(source, {}):
                found.add(f"{source}::{original}")
            elif hops > 1:
                deeper = self._reexported(source, original, hops - 1)
                if deeper:
                    found.add(deeper)
        return next(iter(found)) if len(found) == 1 else None

    def _import(self, path: str, target: str) -> tuple[list[str], dict[str, str]]:
        """(what an import reaches, the local names it binds -> what each stands for)."""
        fam = family(path)
        module, name, alias = split(path, target)
        if fam in ("python", "js"):
            found = self.module_file(module, path)
            to: str | None = None
            if name == "*":
                return ([found] if found else []), {}
            if name:
                if found and name in self.declared.get(found, {}):
                    to = f"{found}::{name}"
                elif fam == "python":  # `from a import b`: b may be module a.b
                    child = module + name if module.endswith(".") else f"{module}.{name}"
                    to = self.module_file(child, path) or found
                else:  # through a barrel's re-exports, else the module
                    to = (self._reexported(found, name, REEXPORT_HOPS) if found else None) or found
                return ([to], {alias or name: to}) if to else ([], {})
            if not found:
                return [], {}
            local = alias or (
                module.split(".")[-1]
                if fam == "python"
                else module.rsplit("/", 1)[-1].split(".")[0]
            )
            return [found], {local: found}
        if fam == "go":
            directory = self._go_package(module)
            if directory is None:
                return [], {}
            names = self.go_names.get(directory, set())
            local = alias or (next(iter(names)) if len(names) == 1 else module.rsplit("/", 1)[-1])
            return list(self.dirs[directory]), ({} if name == "*" else {local: "dir:" + directory})
        if fam == "rust":
            found = self._rust_target(module, path, REEXPORT_HOPS)
            if found is None:
                return [], {}
            if name == "*" or ("::" not in found and not self._rust_module(module, path)):
                return [found], {}  # a glob, or a module reached for a name it lacks
            return [found], {alias or module.rsplit("::", 1)[-1]: found}
        if fam == "c" or (fam == "php" and module.startswith("./")):
            found = self._suffix(module, path)
            return ([found] if found else []), {}
        declaration = self._typed(fam, module)
        if declaration is None:  # a whole package or namespace names no one file
            return [], {}
        file, _, owner = declaration.partition("::")
        if name == "*":  # a type's static members: `using static A.B.T`, `import static a.b.T.*`
            members = {q.rpartition(".")[2]: f"{file}::{q}" for q in self.declared[file]
                       if q.rpartition(".")[0] == owner}  # fmt: skip
            return [declaration], members
        if name:  # one static member: `import static a.b.T.m`
            member = f"{owner}.{name}"
            if member in self.declared[file]:
                return [f"{file}::{member}"], {alias or name: f"{file}::{member}"}
            return [declaration], {}
        return [declaration], {alias or module.rsplit(".", 1)[-1]: declaration}

    # -- edges --------------------------------------------------------------------------

    def edges(self) -> list[dict[str, Any]]:
        """Every resolved reference: {kind, from, to, line}; `from` and `to` are a file path
        or `path::qualname`."""
        out = []
        bound: dict[str, dict[str, str]] = {}  # file -> local name -> what it stands for
        for path, kind, _, target, line in self.references:
            if kind not in ("import", "export"):
                continue
            reached, names = self._import(path, target)
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
            found = self._rust_module(module, path)
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


def _rust_children(importer: str) -> str:
    """The directory a Rust file's child modules live in."""
    directory, name = posixpath.split(importer)
    if name in ("mod.rs", "lib.rs", "main.rs"):
        return directory
    return posixpath.join(directory, os.path.splitext(name)[0])


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
