"""What the map's Python references reach, resolved only when exactly one saved target
matches; anything else stays unresolved, never guessed.

- An import `a.b` reaches the one file whose module path is `a.b` or ends with `.a.b`
  (`a/b.py` or `a/b/__init__.py` under any directory), and `from a.b import name` the
  declaration `name` of that file when it declares one, else the file (or module
  `a.b.name`). A relative import (`.util`, `..core`) is taken from the importing file's
  package.
- A call `f` reaches, in this order: a top-level declaration `f` of the same file; the
  declaration a `from ... import f` (or `as f`) names; the one top-level declaration `f` of
  the whole map. `self.m` / `cls.m` in a method reaches method `m` of the same class; `mod.f`
  reaches `f` in the file `import mod` (or `import a.mod`, as `mod`) reached; an alias
  (`import a.mod as m`) is not followed yet.
"""

from __future__ import annotations

from typing import Any

JS_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")


def _family(path: str) -> str:
    return "python" if path.endswith((".py", ".pyi")) else "js"


def _module(path: str) -> str | None:
    if not path.endswith((".py", ".pyi")):
        return None
    parts = path.rsplit(".", 1)[0].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) if parts else None


class Map:
    """The newest snapshot's Python files, declarations and references, resolvable."""

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
        for path in self.files:
            if _module(path) is None:
                continue
            parts = str(_module(path)).split(".")
            for i in range(len(parts)):
                self.modules.setdefault(".".join(parts[i:]), []).append(path)
        tops: dict[tuple[str, str], list[str]] = {}  # (language family, name) -> files
        for path, names in self.declared.items():
            for name in names:
                if "." not in name:
                    tops.setdefault((_family(path), name), []).append(path)
        self.unique_tops = {k: ps[0] for k, ps in tops.items() if len(ps) == 1}

    def module_file(self, name: str, importer: str) -> str | None:
        """The one file module `name` is, seen from file `importer` (relative names too)."""
        if _family(importer) == "js":
            return self._js_module(name, importer)
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

    def _js_module(self, spec: str, importer: str) -> str | None:
        """A relative specifier (`./util`, `../lib/x.js`) as a file of the map: as written,
        with an extension, or its directory's index; a package name reaches no file here."""
        if not spec.startswith("."):
            return None
        parts: list[str] = importer.split("/")[:-1]
        for part in spec.split("/"):
            if part == "..":
                if not parts:
                    return None
                parts.pop()
            elif part not in (".", ""):
                parts.append(part)
        base = "/".join(parts)
        candidates = [base, *(base + e for e in JS_EXTENSIONS),
                      *(f"{base}/index{e}" for e in JS_EXTENSIONS)]  # fmt: skip
        found = [c for c in candidates if c in self.files]
        return found[0] if found else None

    def edges(self) -> list[dict[str, Any]]:
        """Every resolved reference: {kind, from, to, line}; `from` and `to` are a file path
        or `path::qualname`."""
        out = []
        imported: dict[str, dict[str, str]] = {}  # file -> local name -> what it is
        for path, kind, _, target, line in self.references:
            if kind != "import":
                continue
            module, _, name = target.partition(":")
            found = self.module_file(module, path)
            to: str | None = None
            if name == "*":
                to = found
            elif name:
                if found and name in self.declared.get(found, {}):
                    to = f"{found}::{name}"
                elif _family(path) == "python":  # `from a import b`: b may be module a.b
                    child = module + name if module.endswith(".") else f"{module}.{name}"
                    to = self.module_file(child, path) or found
                else:
                    to = found
                if to:
                    imported.setdefault(path, {})[name] = to
            elif found:
                to = found
                local = (
                    module.split(".")[-1]
                    if _family(path) == "python"
                    else module.rsplit("/", 1)[-1].split(".")[0]  # `import * as util from "./util"`
                )
                imported.setdefault(path, {})[local] = found
            if to:
                out.append({"kind": "import", "from": path, "to": to, "line": line})
        for path, kind, source, target, line in self.references:
            if kind != "call":
                continue
            reached = self._call(path, source, target, imported.get(path, {}))
            if reached:
                out.append({"kind": "call", "from": f"{path}::{source}" if source else path,
                            "to": reached, "line": line})  # fmt: skip
        return out

    def _call(
        self, path: str, source: str | None, target: str, names: dict[str, str]
    ) -> str | None:
        head, _, rest = target.partition(".")
        mine = self.declared.get(path, {})
        if not rest:
            if target in mine:
                return f"{path}::{target}"
            if target in names:
                return names[target] if "::" in names[target] else None
            found = self.unique_tops.get((_family(path), target))
            return f"{found}::{target}" if found else None
        if head in ("self", "cls", "this") and source and "." not in rest:
            parts = source.split(".")
            for i in range(len(parts), 0, -1):  # the innermost class the method sits in
                owner = ".".join(parts[:i])
                if mine.get(owner) == "class":
                    method = f"{owner}.{rest}"
                    return f"{path}::{method}" if method in mine else None
            return None
        module = names.get(head)
        if module and "::" not in module and "." not in rest:
            return f"{module}::{rest}" if rest in self.declared.get(module, {}) else None
        return None


def dependents(edges: list[dict[str, Any]], target: str, depth: int) -> list[dict[str, Any]]:
    """What reaches `target` (a file, or `path::qualname`; a file also stands for every
    declaration in it), then what reaches those, to `depth` steps: [{at, via, kind, line,
    depth}], nearest first, each once."""
    into: dict[str, list[dict[str, Any]]] = {}
    for edge in edges:
        into.setdefault(edge["to"], []).append(edge)
    out: list[dict[str, Any]] = []
    seen = {target}
    frontier = [target]
    for step in range(1, depth + 1):
        following = []
        for node in frontier:
            keys = [k for k in into if k == node or (("::" not in node) and
                                                     k.startswith(node + "::"))]  # fmt: skip
            for key in keys:
                for edge in into[key]:
                    at = edge["from"]
                    if at in seen:
                        continue
                    seen.add(at)
                    out.append({"at": at, "via": key, "kind": edge["kind"],
                                "line": edge["line"], "depth": step})  # fmt: skip
                    following.append(at)
        frontier = following
    return out
