"""What an import reaches, by language family (the rules are `resolve`'s docstring): the
tables a snapshot is looked up in (`Index`), and one resolver a family, chosen by `reach`.
Only a reference with exactly one saved target resolves; anything else stays unresolved.
"""

from __future__ import annotations

import functools
import os
import posixpath
from itertools import groupby
from operator import itemgetter

from waymark.codemap.walk import language

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

JS_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
FAMILIES = {
    "python": "python", "javascript": "js", "typescript": "js", "tsx": "js", "go": "go",
    "rust": "rust", "c": "c", "cpp": "c", "csharp": "csharp", "java": "java", "php": "php",
}  # fmt: skip
TYPES = ("class", "struct", "interface", "trait", "enum")
IMPLICIT_THIS = ("java", "csharp", "c")  # where `m()` in a method may be `this.m()`
REEXPORT_HOPS = 3  # barrels re-exporting barrels, followed this deep


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


class Index:
    """A snapshot's files, declarations and references, as the tables every resolution
    looks things up in; `module_file`, `relative`, `suffix` and `typed` are the lookups
    more than one family shares."""

    def __init__(
        self,
        files: list[str],
        declarations: list[tuple[Any, ...]],
        references: list[tuple[Any, ...]],
    ):
        self.files = set(files)
        self.declared: dict[str, dict[str, str]] = {}  # path -> qualname -> kind
        for path, group in groupby(declarations, itemgetter(0)):  # by path, as stored
            self.declared.setdefault(path, {}).update((d[1], d[2]) for d in group)
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
        first: dict[tuple[str | None, str], str] = {}  # (family, qualname) -> a file
        twice: set[tuple[str | None, str]] = set()  # ... declared in more than one file
        for path, names in self.declared.items():
            fam = family(path)
            for name in names:
                key = (fam, name)
                if key in first:
                    twice.add(key)
                else:
                    first[key] = path
        self.unique = {k: p for k, p in first.items() if k not in twice}

    def module_file(self, name: str, importer: str) -> str | None:
        """The one file Python module `name` (or JS specifier) is, seen from `importer`."""
        if family(importer) == "js":
            return self.relative(name, importer, JS_EXTENSIONS, "index")
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

    def relative(
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

    def suffix(self, spec: str, importer: str) -> str | None:
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

    def typed(self, fam: str | None, dotted: str) -> str | None:
        """`path::T` for the one file of package `a.b` declaring `T` (dotted `a.b.T`)."""
        package, _, name = dotted.rpartition(".")
        found = [
            f for f in self.packages.get((fam, package), []) if name in self.declared.get(f, {})
        ]
        return f"{found[0]}::{name}" if len(found) == 1 else None


Reached = tuple[list[str], dict[str, str]]  # what an import reaches, the names it binds


def reach(ix: Index, path: str, target: str) -> Reached:
    """(what an import of file `path` reaches, the local names it binds -> what each stands
    for), by the family of `path`."""
    module, name, alias = split(path, target)
    resolver = RESOLVERS.get(family(path) or "", _typed_import)
    return resolver(ix, path, module, name, alias)


def _script_import(ix: Index, path: str, module: str, name: str, alias: str) -> Reached:
    """Python and JavaScript/TypeScript: a module file, one of its names, or (JS) what its
    re-exports reach."""
    fam = family(path)
    found = ix.module_file(module, path)
    to: str | None = None
    if name == "*":
        return ([found] if found else []), {}
    if name:
        if found and name in ix.declared.get(found, {}):
            to = f"{found}::{name}"
        elif fam == "python":  # `from a import b`: b may be module a.b
            child = module + name if module.endswith(".") else f"{module}.{name}"
            to = ix.module_file(child, path) or found
        else:  # through a barrel's re-exports, else the module
            to = (_reexported(ix, found, name, REEXPORT_HOPS) if found else None) or found
        return ([to], {alias or name: to}) if to else ([], {})
    if not found:
        return [], {}
    local = alias or (
        module.split(".")[-1] if fam == "python" else module.rsplit("/", 1)[-1].split(".")[0]
    )
    return [found], {local: found}


def _go_import(ix: Index, path: str, module: str, name: str, alias: str) -> Reached:
    """Go: every file of the one package directory the import path names."""
    directory = _go_package(ix, module)
    if directory is None:
        return [], {}
    names = ix.go_names.get(directory, set())
    local = alias or (next(iter(names)) if len(names) == 1 else module.rsplit("/", 1)[-1])
    return list(ix.dirs[directory]), ({} if name == "*" else {local: "dir:" + directory})


def _rust_import(ix: Index, path: str, module: str, name: str, alias: str) -> Reached:
    """Rust: a module's file, or an item of it (through `pub use`)."""
    found = _rust_target(ix, module, path, REEXPORT_HOPS)
    if found is None:
        return [], {}
    if name == "*" or ("::" not in found and not rust_module(ix, module, path)):
        return [found], {}  # a glob, or a module reached for a name it lacks
    return [found], {alias or module.rsplit("::", 1)[-1]: found}


def _include(ix: Index, path: str, module: str, name: str, alias: str) -> Reached:
    """C and C++ `#include`, PHP `require` of a path: the file it names."""
    found = ix.suffix(module, path)
    return ([found] if found else []), {}


def _php_import(ix: Index, path: str, module: str, name: str, alias: str) -> Reached:
    if module.startswith("./"):
        return _include(ix, path, module, name, alias)
    return _typed_import(ix, path, module, name, alias)


def _typed_import(ix: Index, path: str, module: str, name: str, alias: str) -> Reached:
    """Java, C# and PHP `use`: the one type (or function) of a package or namespace, or its
    static members."""
    declaration = ix.typed(family(path), module)
    if declaration is None:  # a whole package or namespace names no one file
        return [], {}
    file, _, owner = declaration.partition("::")
    if name == "*":  # a type's static members: `using static A.B.T`, `import static a.b.T.*`
        members = {q.rpartition(".")[2]: f"{file}::{q}" for q in ix.declared[file]
                   if q.rpartition(".")[0] == owner}  # fmt: skip
        return [declaration], members
    if name:  # one static member: `import static a.b.T.m`
        member = f"{owner}.{name}"
        if member in ix.declared[file]:
            return [f"{file}::{member}"], {alias or name: f"{file}::{member}"}
        return [declaration], {}
    return [declaration], {alias or module.rsplit(".", 1)[-1]: declaration}


RESOLVERS = {
    "python": _script_import, "js": _script_import, "go": _go_import, "rust": _rust_import,
    "c": _include, "php": _php_import, "java": _typed_import, "csharp": _typed_import,
}  # fmt: skip


def _go_package(ix: Index, path: str) -> str | None:
    """The one directory of Go files an import path names (the longest it ends with)."""
    last = path.rsplit("/", 1)[-1]
    found = [d for d in ix.dirs_by_last.get(last, []) if path == d or path.endswith("/" + d)]
    if not found:
        return None
    longest = max(len(d) for d in found)
    best = [d for d in found if len(d) == longest]
    return best[0] if len(best) == 1 else None


def rust_module(ix: Index, path: str, importer: str) -> str | None:
    parts = [p for p in path.split("::") if p]
    base = _rust_children(importer)
    if parts and parts[0] == "crate":
        root = _crate_root(ix, importer)
        if root is None:
            return None
        base, parts = root, parts[1:]
    elif parts and parts[0] == "self":
        parts = parts[1:]
    elif parts and parts[0] == "super":
        while parts and parts[0] == "super":
            base, parts = posixpath.dirname(base), parts[1:]
    else:  # a child module (2018 paths), else one named from the crate root
        child = rust_module(ix, "self::" + path, importer)
        if child is not None:
            return child
        root = _crate_root(ix, importer)
        if root is None:
            return None  # another crate's: no file here
        base = root
    if not parts:  # the module itself: `super`, `crate`
        found = [c for c in (f"{base}.rs", f"{base}/mod.rs", f"{base}/lib.rs",
                             f"{base}/main.rs") if c.lstrip("/") in ix.files]  # fmt: skip
        return found[0].lstrip("/") if len(found) == 1 else None
    joined = posixpath.join(base, *parts) if base else "/".join(parts)
    found = [c for c in (f"{joined}.rs", f"{joined}/mod.rs") if c in ix.files]
    return found[0] if len(found) == 1 else None


def _crate_root(ix: Index, importer: str) -> str | None:
    directory = posixpath.dirname(importer)
    while True:
        for root in ("lib.rs", "main.rs"):
            if posixpath.join(directory, root) in ix.files:
                return directory
        if not directory:
            return None
        directory = posixpath.dirname(directory)


def _rust_target(ix: Index, path: str, importer: str, hops: int) -> str | None:
    """What a Rust `use` path names: a module's file, else `file::item` of its parent
    module (through that module's `pub use` re-exports, `hops` deep), else the parent's
    file."""
    found = rust_module(ix, path, importer)
    if found or "::" not in path:
        return found
    head, _, last = path.rpartition("::")
    parent = rust_module(ix, head, importer)
    if parent is None:
        return None
    if last in ix.declared.get(parent, {}):
        return f"{parent}::{last}"
    if hops > 0:
        for module, name, alias in ix.exports.get(parent, []):
            if name == "*":  # `pub use a::*`: the item may be a's
                deeper = _rust_target(ix, f"{module}::{last}", parent, hops - 1)
            elif (alias or module.rsplit("::", 1)[-1]) == last:
                deeper = _rust_target(ix, module, parent, hops - 1)
            else:
                continue
            if deeper and "::" in deeper:
                return deeper
    return parent


def _rust_children(importer: str) -> str:
    """The directory a Rust file's child modules live in."""
    directory, name = posixpath.split(importer)
    if name in ("mod.rs", "lib.rs", "main.rs"):
        return directory
    return posixpath.join(directory, os.path.splitext(name)[0])


def _reexported(ix: Index, barrel: str, name: str, hops: int) -> str | None:
    """The one declaration `name` that JavaScript/TypeScript file `barrel` re-exports
    (`export { a as name } from`, `export * from`), followed `hops` barrels deep."""
    found: set[str] = set()
    for module, exported, alias in ix.exports.get(barrel, []):
        source = ix.module_file(module, barrel)
        if source is None or source == barrel:
            continue
        if exported == "*" and not alias:
            original = name
        elif exported not in ("", "*") and (alias or exported) == name:
            original = exported
        else:
            continue
        if original in ix.declared.get(source, {}):
            found.add(f"{source}::{original}")
        elif hops > 1:
            deeper = _reexported(ix, source, original, hops - 1)
            if deeper:
                found.add(deeper)
    return next(iter(found)) if len(found) == 1 else None
