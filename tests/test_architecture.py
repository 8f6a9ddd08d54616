"""The floor plan, enforced: imports are read with `ast` and their direction asserted.

- Only the storage seam (`waymark.storage`) imports apsw or runs SQL, and it imports no
  domain module (only `waymark.base`, `waymark.errors`, `waymark.home` and itself).
- No library module imports an adapter: the hooks, the MCP server, the CLI, the installers.
- No module imports another that imports it back, directly or around a longer circle.
- Imports run down the wings (FLOORS), never up and never across one floor.
- A hook's entry point pulls in nothing heavy when it is imported.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Where each import root's files are (pyproject.toml's package-dir mapping).
FOLDERS = {
    "waymark.hooks": ROOT / "hooks",
    "waymark.installers": ROOT / "installers",
    "waymark": ROOT / "src" / "waymark",
}
# The storage seam: SQLite (`storage`) and its PostgreSQL sibling for the team store.
SEAM = ("waymark.storage", "waymark.teamstore")
ADAPTERS = (
    "waymark.hooks", "waymark.installers", "waymark.cli", "waymark.server", "waymark.web",
    "waymark.proxy",
)  # fmt: skip
SEAM_MAY_IMPORT = ("waymark.base", "waymark.errors", "waymark.home")
HEAVY = (
    "pydantic", "mcp", "fastembed", "numpy", "sqlite_vec", "onnxruntime", "onnx", "tree_sitter",
)  # fmt: skip
SQL = re.compile(
    r"\b(SELECT\s.+\sFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|"
    r"CREATE\s+(TABLE|INDEX|VIRTUAL|TRIGGER|VIEW)|DROP\s+(TABLE|INDEX)|PRAGMA\s+\w+|"
    r"BEGIN\s+IMMEDIATE)\b",
    re.IGNORECASE | re.DOTALL,
)


def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name, from the folders it is installed from."""
    found: dict[str, Path] = {}
    for root, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([root, *parts])
            if root == "waymark" and parts and parts[0] in ("hooks", "installers"):
                continue  # those names belong to the top-level folders
            found[name] = path
    return found


MODULES = modules()


def is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def imports(name: str, *, top_level_only: bool = False) -> set[str]:
    """Modules `name` imports (resolved; `from pkg import mod` counts as pkg.mod)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    package = name if is_package(name) else name.rpartition(".")[0]
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    if top_level_only:  # what runs on import: the body, and `if` blocks (not TYPE_CHECKING)
        nodes = list(_executed(tree.body))
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [f"{target}.{alias.name}" for alias in node.names]
            submodules = [n for n in names if n in MODULES]
            out.update(submodules)
            if len(submodules) < len(names):  # some names are the package's own
                out.add(target)
    return out


def _executed(body: list[ast.stmt]):  # type: ignore[no-untyped-def]
    for node in body:
        if isinstance(node, ast.If):
            if "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            yield from _executed(node.body)
            yield from _executed(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _executed(node.body)
            for handler in node.handlers:
                yield from _executed(handler.body)
        else:
            yield node


def inside(name: str, prefixes: tuple[str, ...] | str) -> bool:
    prefixes = (prefixes,) if isinstance(prefixes, str) else prefixes
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def library() -> list[str]:
    return [m for m in MODULES if not inside(m, ADAPTERS) and m != "waymark.__main__"]


def test_the_package_is_found_where_pyproject_maps_it():
    assert "waymark.hooks.stop" in MODULES
    assert "waymark.installers.run" in MODULES
    assert "waymark.storage.memories" in MODULES
    assert not (ROOT / "src" / "waymark" / "hooks").exists()
    assert not (ROOT / "src" / "waymark" / "installers").exists()


@pytest.mark.parametrize("name", sorted(MODULES))
def test_only_the_storage_seam_imports_apsw_or_runs_sql(name):
    if inside(name, SEAM):
        return
    assert "apsw" not in {i.split(".")[0] for i in imports(name)}, f"{name} imports apsw"
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            assert not SQL.search(node.value), f"{name}:{node.lineno} SQL: {node.value!r}"
        if isinstance(node, ast.Attribute) and node.attr in ("execute", "executemany"):
            pytest.fail(f"{name}:{node.lineno} calls .{node.attr}() outside the storage seam")


@pytest.mark.parametrize("name", sorted(m for m in MODULES if inside(m, SEAM)))
def test_the_seam_imports_no_domain_module(name):
    own = next(p for p in SEAM if inside(name, p))  # its own package; never the sibling
    ours = {i for i in imports(name) if inside(i, "waymark")}
    strays = sorted(i for i in ours if not inside(i, (own, *SEAM_MAY_IMPORT)))
    assert strays == [], f"{name} imports {strays}"


def _public_functions(name: str) -> dict[str, list[str]]:
    """A module's public functions (and classes, as callables) with their argument names."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    found: dict[str, list[str]] = {}
    for node in tree.body:
        if getattr(node, "name", "_").startswith("_"):
            continue
        if isinstance(node, ast.FunctionDef):
            found[node.name] = [a.arg for a in node.args.args + node.args.kwonlyargs]
        elif isinstance(node, ast.ClassDef):
            found[node.name] = []
    return found


@pytest.mark.parametrize(
    "name", sorted(m for m in MODULES if inside(m, "waymark.teamstore") and not is_package(m))
)
def test_the_team_store_implements_the_seams_functions_by_name(name):
    """A team store module mirrors the SQLite module of its name: each function it shares
    with it takes the same arguments, and the functions only PostgreSQL has are listed."""
    sqlite = "waymark.storage." + name.rsplit(".", 1)[1]
    assert sqlite in MODULES, f"{name} has no SQLite sibling {sqlite}"
    ours, theirs = _public_functions(name), _public_functions(sqlite)
    for function, args in ours.items():
        if function in theirs:
            assert [a for a in args if a in theirs[function]] == [
                a for a in theirs[function] if a in args
            ], f"{name}.{function} takes its arguments in another order than {sqlite}'s"
    only_here = sorted(set(ours) - set(theirs))
    assert only_here == TEAM_ONLY.get(name, []), f"{name}: functions SQLite lacks: {only_here}"


# What only the team store has (a server's questions); everything else is the seam's names.
TEAM_ONLY = {
    "waymark.teamstore.tasks": ["holders"],  # the project's claims, for a sync to mirror
    "waymark.teamstore.connection": ["can_write", "driver", "server_version"],
    "waymark.teamstore.events": ["add_events"],  # other machines' events, once by event id
    # full text and pgvector; the server's lexeme counts; its vector index, grown with it
    "waymark.teamstore.search": ["lexeme_shares", "team_matches", "tend_vectors"],
    # many in one round (their rows made apart: a push makes the next batch's while the
    # server stores one); the team's line of a chain; a pull's vectors (the sender's)
    "waymark.teamstore.memories": [
        "get_vectors",
        "insert_memories",
        "insert_rows",
        "memory_rows",
        "successors",
    ],
    "waymark.teamstore.checkpoints": ["get_revisions"],  # many in one round
}


@pytest.mark.parametrize("name", library())
def test_no_library_module_imports_an_adapter(name):
    strays = sorted(i for i in imports(name) if inside(i, ADAPTERS))
    assert strays == [], f"{name} imports {strays}"


def test_no_module_imports_one_that_imports_it_back():
    graph = {m: {i for i in imports(m) if i in MODULES and i != m} for m in MODULES}
    # A package's __init__ is imported with each of its modules: importing it is no circle.
    circles: list[list[str]] = []
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if is_package(nxt) and node.startswith(nxt + "."):
                continue
            if state.get(nxt) == 1:
                circles.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    assert circles == []


@pytest.mark.parametrize(
    "name", sorted(m for m in MODULES if inside(m, "waymark.hooks") and m != "waymark.hooks")
)
def test_a_hook_entry_point_imports_nothing_heavy(name):
    """What importing the hook's module loads, following every module-level import."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for target in imports(current, top_level_only=True):
            heavy = target.split(".")[0]
            assert heavy not in HEAVY, f"{name} loads {heavy} through {current}"
            parts = target.split(".")
            for i in range(1, len(parts) + 1):  # importing a.b.c runs a, a.b and a.b.c
                prefix = ".".join(parts[:i])
                if prefix in MODULES:
                    todo.append(prefix)


# The wings, bottom first (the house style's wing order): a module imports only from its own
# wing or one on a lower floor; wings on one floor never import each other. Where the style
# puts two wings side by side and one uses the other (errors, home, base; settings, projects),
# the used one is a floor lower here.
FLOORS = (
    ("waymark.errors",),
    ("waymark.home",),
    ("waymark.base",),
    ("waymark.warm",),
    ("waymark.storage", "waymark.teamstore"),
    ("waymark.settings",),
    ("waymark.projects",),
    ("waymark.memories",),
    ("waymark.codemap", "waymark.knowledge", "waymark.recall"),
    ("waymark.curation",),
    ("waymark.handoff",),
    ("waymark.packets", "waymark.data", "waymark.team"),
    ("waymark.health",),
    ("waymark.daemon",),
    (
        "waymark.hooks",
        "waymark.server",
        "waymark.installers",
        "waymark.cli",
        "waymark.web",
        "waymark.proxy",
        "waymark.__main__",
    ),
)


FACES = ("waymark.hooks", "waymark.server", "waymark.cli", "waymark.web", "waymark.proxy")
FACE_MODULES = sorted(m for m in MODULES if inside(m, FACES))


def wing_of(name: str) -> tuple[int, str] | None:
    """(floor, wing) of a module of the package; None for the package's own face."""
    for floor, wings in enumerate(FLOORS):
        for wing in wings:
            if inside(name, wing):
                return floor, wing
    return None


def test_every_module_is_in_a_wing():
    assert sorted(m for m in MODULES if wing_of(m) is None) == ["waymark"]


def test_imports_run_down_the_wings_never_up_or_across():
    upward = []
    for name in sorted(MODULES):
        here = wing_of(name)
        if here is None or here[0] == len(FLOORS) - 1:
            continue  # the faces translate: they may call any wing of the library
        for target in sorted(imports(name)):
            there = wing_of(target) if inside(target, "waymark") else None
            if there is None or there[1] == here[1] or target == "waymark":
                continue
            if there[0] >= here[0]:
                upward.append(f"{name} -> {target}")
    assert upward == []


@pytest.mark.parametrize("name", FACE_MODULES)
def test_the_faces_open_no_transaction(name):
    """A face translates; the library function it calls opens the transaction it needs."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                if not isinstance(call, ast.Call):
                    continue
                func = call.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                assert called != "write", (
                    f"{name}:{node.lineno} opens a transaction ({ast.unparse(call)})"
                )


# The parts of an action one library verb puts together: a face calls the verb, never a
# part, so no face can forget one (the vector index scrubbed after an erase, #46).
PARTS = {
    ("ann", "scrub"): "curation.erasing.erase",
    ("store", "erase"): "curation.erasing.erase",
    ("store", "erase_in"): "curation.erasing.erase",
    ("erasure", "erase_from_backups"): "curation.erasing.erase",
    ("erasure", "backups_holding"): "curation.erasing.erase",
}


@pytest.mark.parametrize("name", FACE_MODULES)
def test_the_faces_call_the_verb_not_its_parts(name):
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            verb = PARTS.get((node.value.id, node.attr))
            assert verb is None, (
                f"{name}:{node.lineno} calls {node.value.id}.{node.attr}: call {verb}"
            )
        if isinstance(node, ast.ImportFrom) and node.module in (
            "waymark.recall.ann", "waymark.memories.store", "waymark.memories.erasure"):  # fmt: skip
            for alias in node.names:
                short = node.module.rsplit(".", 1)[1]
                verb = PARTS.get((short, alias.name))
                assert verb is None, f"{name}:{node.lineno} imports {alias.name}: call {verb}"


def test_the_architecture_page_names_every_wing():
    """Each folder of src/waymark has its line in docs/architecture.md's layout, and each
    line there is a folder that exists."""
    readme = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^### .*?`([a-z_]+)/`", readme, re.M))
    listed |= set(re.findall(r", `([a-z_]+)/`", readme))  # the faces share a heading
    wings = {p.name for p in (ROOT / "src" / "waymark").iterdir()
             if p.is_dir() and (p / "__init__.py").exists()}  # fmt: skip
    assert wings - listed == set(), "wings docs/architecture.md does not name"
    assert listed - wings == set(), "names in docs/architecture.md that are no wing"
