"""The code map in Go, Rust, C, C++, C#, Java and PHP: each fixture repository under
`tests/fixtures/codemap/` is mapped as a user maps one (`snapshot.refresh` on a real git
repository), then checked for its exact declarations, its exact resolved relationships (what
is left out stayed unresolved: ambiguous names, locals, packages), and the rename rule."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import git_env
from waymark.codemap import changes, questions, snapshot
from waymark.projects.resolve import resolve

FIXTURES = Path(__file__).parent / "fixtures" / "codemap"

# language: (declarations (path, qualname, kind, first line, last line), resolved edges)
EXPECTED = {
    "go": (
        [
            ("cmd/main.go", "main", "function", 5, 8),
            ("store/cache.go", "Cache", "struct", 8, 8),
            ("store/cache.go", "Cache.Get", "method", 12, 16),
            ("store/cache.go", "Cache.load", "method", 18, 18),
            ("store/cache.go", "Getter", "interface", 10, 10),
            ("store/cache.go", "render", "function", 20, 20),
            ("store/open.go", "Open", "function", 3, 3),
            ("util/pad.go", "Pad", "function", 3, 3),
            ("util/pad.go", "render", "function", 5, 5),
            ("util/trim.go", "Trim", "function", 3, 3),
        ],
        {
            ("call", "cmd/main.go::main", "store/open.go::Open"),
            ("call", "store/cache.go::Cache.Get", "store/cache.go::Cache.load"),
            ("call", "store/cache.go::Cache.Get", "util/pad.go::Pad"),
            ("call", "store/cache.go::Cache.load", "store/cache.go::render"),
            ("call", "util/trim.go::Trim", "util/pad.go::Pad"),
            ("import", "cmd/main.go", "store/cache.go"),
            ("import", "cmd/main.go", "store/open.go"),
            ("import", "store/cache.go", "util/pad.go"),
            ("import", "store/cache.go", "util/trim.go"),
        },
    ),
    "rust": (
        [
            ("src/store.rs", "Cache", "struct", 4, 4),
            ("src/store.rs", "Cache.get", "method", 10, 10),
            ("src/store.rs", "Cache.load", "method", 11, 11),
            ("src/store.rs", "Cache.new", "method", 9, 9),
            ("src/store.rs", "Getter", "trait", 6, 6),
            ("src/store.rs", "open", "function", 16, 16),
            ("src/store.rs", "render", "function", 14, 14),
            ("src/store.rs", "shouted", "function", 20, 20),
            ("src/util/mod.rs", "pad", "function", 3, 3),
            ("src/util/text.rs", "render", "function", 3, 3),
            ("src/util/text.rs", "shout", "function", 1, 1),
        ],
        {
            ("call", "src/store.rs::Cache.get", "src/store.rs::Cache.load"),
            ("call", "src/store.rs::Cache.get", "src/store.rs::render"),
            ("call", "src/store.rs::Cache.get", "src/util/mod.rs::pad"),
            ("call", "src/store.rs::Cache.get", "src/util/text.rs::shout"),
            ("call", "src/store.rs::Cache.load", "src/store.rs::Cache.new"),
            ("call", "src/store.rs::open", "src/store.rs::Cache.new"),
            ("call", "src/store.rs::shouted", "src/util/text.rs::shout"),  # via `pub use ... as`
            ("import", "src/store.rs", "src/util/text.rs::shout"),
            ("import", "src/util/mod.rs", "src/util/text.rs::shout"),  # a child module's path
            ("call", "src/util/text.rs::shout", "src/util/mod.rs::pad"),
            ("import", "src/store.rs", "src/util/mod.rs"),
            ("import", "src/store.rs", "src/util/mod.rs::pad"),
            ("import", "src/store.rs", "src/util/text.rs"),
        },
    ),
    "c": (
        [
            ("src/cache.c", "cache", "struct", 4, 4),
            ("src/cache.c", "get", "function", 10, 10),
            ("src/cache.c", "load", "function", 8, 8),
            ("src/cache.c", "render", "function", 6, 6),
            ("src/util.c", "pad", "function", 3, 3),
            ("src/util.c", "render", "function", 5, 5),
        ],
        {
            ("call", "src/cache.c::get", "src/cache.c::load"),
            ("call", "src/cache.c::load", "src/cache.c::render"),
            ("call", "src/cache.c::load", "src/util.c::pad"),
            ("import", "src/cache.c", "src/util.h"),
            ("import", "src/util.c", "src/util.h"),
        },
    ),
    "cpp": (
        [
            ("src/cache.cpp", "Cache.load", "method", 3, 3),
            ("src/cache.cpp", "Cache.open", "method", 4, 4),
            ("src/cache.cpp", "helper", "function", 5, 5),
            ("src/cache.cpp", "render", "function", 6, 6),
            ("src/cache.hpp", "Cache", "class", 3, 8),
            ("src/cache.hpp", "Cache.get", "method", 5, 5),
            ("src/main.cpp", "main", "function", 3, 3),
            ("src/main.cpp", "render", "function", 2, 2),
        ],
        {
            ("call", "src/cache.cpp::Cache.load", "src/cache.cpp::helper"),
            ("call", "src/cache.cpp::Cache.load", "src/cache.cpp::render"),
            ("call", "src/cache.cpp::Cache.open", "src/cache.hpp::Cache"),
            ("call", "src/cache.hpp::Cache.get", "src/cache.cpp::Cache.load"),
            ("call", "src/cache.hpp::Cache.get", "src/cache.cpp::helper"),
            ("call", "src/main.cpp::main", "src/cache.cpp::Cache.open"),
            ("call", "src/main.cpp::main", "src/main.cpp::render"),
            ("import", "src/cache.cpp", "src/cache.hpp"),
            ("import", "src/main.cpp", "src/cache.hpp"),
        },
    ),
    "csharp": (
        [
            ("Store/Cache.cs", "Cache", "class", 8, 14),
            ("Store/Cache.cs", "Cache.Cache", "method", 10, 10),
            ("Store/Cache.cs", "Cache.Get", "method", 12, 12),
            ("Store/Cache.cs", "Cache.Init", "method", 11, 11),
            ("Store/Cache.cs", "Cache.Load", "method", 13, 13),
            ("Store/Cache.cs", "IGetter", "interface", 16, 16),
            ("Store/Cache.cs", "IGetter.Get", "method", 16, 16),
            ("Util/Other.cs", "Views", "class", 3, 6),
            ("Util/Other.cs", "Views.Render", "method", 5, 5),
            ("Util/Pad.cs", "Pad", "class", 3, 7),
            ("Util/Pad.cs", "Pad.Fmt", "method", 5, 5),
            ("Util/Pad.cs", "Pad.Render", "method", 6, 6),
        ],
        {
            ("call", "Store/Cache.cs::Cache.Cache", "Store/Cache.cs::Cache.Init"),
            ("call", "Store/Cache.cs::Cache.Get", "Store/Cache.cs::Cache.Load"),
            ("call", "Store/Cache.cs::Cache.Get", "Util/Pad.cs::Pad.Fmt"),
            ("call", "Store/Cache.cs::Cache.Get", "Util/Pad.cs::Pad.Render"),
            ("call", "Store/Cache.cs::Cache.Load", "Store/Cache.cs::Cache"),
            ("import", "Store/Cache.cs", "Util/Pad.cs::Pad"),
        },
    ),
    "java": (
        [
            ("com/shop/store/Cache.java", "Cache", "class", 7, 14),
            ("com/shop/store/Cache.java", "Cache.Cache", "method", 8, 8),
            ("com/shop/store/Cache.java", "Cache.Getter", "interface", 13, 13),
            ("com/shop/store/Cache.java", "Cache.Getter.get", "method", 13, 13),
            ("com/shop/store/Cache.java", "Cache.get", "method", 10, 10),
            ("com/shop/store/Cache.java", "Cache.init", "method", 9, 9),
            ("com/shop/store/Cache.java", "Cache.load", "method", 11, 11),
            ("com/shop/util/Pad.java", "Pad", "class", 3, 6),
            ("com/shop/util/Pad.java", "Pad.pad", "method", 4, 4),
            ("com/shop/util/Pad.java", "Pad.render", "method", 5, 5),
            ("com/shop/util/Views.java", "Views", "class", 3, 5),
            ("com/shop/util/Views.java", "Views.render", "method", 4, 4),
        ],
        {
            (
                "call",
                "com/shop/store/Cache.java::Cache.Cache",
                "com/shop/store/Cache.java::Cache.init",
            ),
            (
                "call",
                "com/shop/store/Cache.java::Cache.get",
                "com/shop/store/Cache.java::Cache.load",
            ),
            ("call", "com/shop/store/Cache.java::Cache.get", "com/shop/util/Pad.java::Pad.pad"),
            ("call", "com/shop/store/Cache.java::Cache.load", "com/shop/store/Cache.java::Cache"),
            ("import", "com/shop/store/Cache.java", "com/shop/util/Pad.java::Pad"),
            ("import", "com/shop/store/Cache.java", "com/shop/util/Pad.java::Pad.pad"),
        },
    ),
    "php": (
        [
            ("src/Store/Cache.php", "Cache", "class", 10, 14),
            ("src/Store/Cache.php", "Cache.get", "method", 11, 11),
            ("src/Store/Cache.php", "Cache.load", "method", 12, 12),
            ("src/Store/Cache.php", "Cache.make", "method", 13, 13),
            ("src/Util/Pad.php", "Pad", "class", 4, 6),
            ("src/Util/Pad.php", "Pad.fmt", "method", 5, 5),
            ("src/Util/Pad.php", "pad", "function", 8, 8),
            ("src/Util/Pad.php", "render", "function", 10, 10),
            ("src/Util/helpers.php", "helper", "function", 2, 2),
            ("src/Util/helpers.php", "render", "function", 4, 4),
        ],
        {
            ("call", "src/Store/Cache.php::Cache.get", "src/Store/Cache.php::Cache.load"),
            ("call", "src/Store/Cache.php::Cache.get", "src/Util/Pad.php::Pad.fmt"),
            ("call", "src/Store/Cache.php::Cache.get", "src/Util/Pad.php::pad"),
            ("call", "src/Store/Cache.php::Cache.load", "src/Store/Cache.php::Cache.make"),
            ("call", "src/Store/Cache.php::Cache.load", "src/Util/helpers.php::helper"),
            ("call", "src/Store/Cache.php::Cache.make", "src/Store/Cache.php::Cache"),
            ("import", "src/Store/Cache.php", "src/Util/Pad.php::Pad"),
            ("import", "src/Store/Cache.php", "src/Util/Pad.php::pad"),
            ("import", "src/Store/Cache.php", "src/Util/helpers.php"),
        },
    ),
}

# Calls each fixture makes that must stay unresolved: (file, enclosing declaration, callee as
# recorded). Each is checked recorded, and reaching nothing of its name.
UNRESOLVED = {
    "go": [("cmd/main.go", "main", "c.Get"),  # a local variable
           ("store/cache.go", "Cache.Get", "fmt.Println")],  # a package outside the repo
    "rust": [("src/util/mod.rs", "pad", "s.to_string")],  # a method on a local
    "c": [("src/cache.c", "get", "printf")],  # <stdio.h> is no file of the map
    "cpp": [("src/main.cpp", "main", "c.get")],  # a local variable
    "csharp": [("Store/Cache.cs", "Cache.Init", "Console.WriteLine")],  # `using System`
    "java": [("com/shop/store/Cache.java", "Cache.get", "render")],  # a package import only
    "php": [("src/Store/Cache.php", "Cache.get", "render")],  # two files declare it
}  # fmt: skip


def _mapped(tmp_path: Path, language: str, conn):
    root = tmp_path / language
    shutil.copytree(FIXTURES / language, root)
    env = git_env(tmp_path)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "fixture"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)
    project = resolve(conn, str(root))
    snapshot.refresh(conn, project)
    return root, project


@pytest.mark.parametrize("language", sorted(EXPECTED))
def test_each_language_maps_its_declarations_and_resolves_only_unique_targets(
    conn, tmp_path, language
):
    declared, edges = EXPECTED[language]
    _, project = _mapped(tmp_path, language, conn)
    found = questions.structure(conn, project)
    got = sorted((d["path"], d["qualname"], d["kind"], d["start_line"], d["end_line"])
                 for d in found["declarations"])  # fmt: skip
    assert got == sorted(declared)
    seq = snapshot.rows.snapshots(conn, project.id, 1)[0]["seq"]
    stored = {(e["kind"], e["from"], e["to"]) for e in snapshot.rows.all_edges(conn, seq)}
    assert stored == edges, (stored - edges, edges - stored)
    recorded = {(r["path"], r["source"], r["target"]) for r in found["references"]}
    for path, source, callee in UNRESOLVED[language]:
        assert (path, source, callee) in recorded
        last = callee.rsplit(".", 1)[-1]
        assert not [e for e in stored if e[1] == f"{path}::{source}"
                    and e[2].endswith((f"::{last}", f".{last}"))], callee  # fmt: skip


@pytest.mark.parametrize("language", sorted(EXPECTED))
def test_a_moved_file_is_a_rename_in_every_language(conn, tmp_path, language):
    root, project = _mapped(tmp_path, language, conn)
    declared = EXPECTED[language][0]
    moved = sorted({d[0] for d in declared})[-1]
    before = snapshot.rows.snapshots(conn, project.id, 1)[0]["id"]
    target = root / (os.path.dirname(moved) or ".") / ("renamed_" + os.path.basename(moved))
    os.rename(root / moved, target)
    after = snapshot.refresh(conn, project)["snapshot"]["id"]
    diff = changes.changes(conn, project, since=before, until=after)
    new = str(target.relative_to(root)).replace(os.sep, "/")
    assert diff["renamed"] == [{"from": moved, "to": new}]
    assert diff["added"] == diff["removed"] == [] and diff["modified"] == []
    assert diff["declarations"] == {"added": [], "removed": [], "modified": []}


def test_the_go_fixture_through_the_cli(conn, tmp_path):
    from test_codemap import cli

    root, _ = _mapped(tmp_path, "go", conn)
    text = cli("map", "impact", "util/pad.go::Pad", "--depth", "2", cwd=str(root)).stdout
    assert text.startswith("2 dependents of util/pad.go::Pad")  # c.Get stays unresolved
    assert "store/cache.go::Cache.Get  calls util/pad.go::Pad" in text
    assert "util/trim.go::Trim  calls util/pad.go::Pad" in text


def test_a_symbol_target_is_checked_against_the_map_of_the_file_as_it_is(conn, tmp_path):
    from test_codemap import cli

    root, _ = _mapped(tmp_path, "go", conn)

    def remember(target):
        return cli("remember", "--content", "note", "--scope", "symbol", "--target", target,
                   "--json", cwd=str(root))  # fmt: skip

    assert remember("util/pad.go::Pad").returncode == 0  # declared: the map says so
    assert remember("store/cache.go::Cache.Get").returncode == 0
    wrong = remember("util/pad.go::Padd")
    assert wrong.returncode != 0
    error = json.loads(wrong.stdout or wrong.stderr)
    assert error["code"] == "target_not_found"
    assert "not declared in util/pad.go (code map snap_" in error["message"]
    assert "did you mean Pad" in error["message"]
    # Println is only called in cache.go: a word match once let it through, the map does not
    assert remember("store/cache.go::Println").returncode != 0
    # the file changed since the map: the map is no authority on it, the text check is
    (root / "store/cache.go").write_text(
        (root / "store/cache.go").read_text("utf-8") + "\n// changed\n", "utf-8"
    )
    assert remember("store/cache.go::Println").returncode == 0


def test_memories_follow_a_renamed_file_and_a_moved_declaration(conn, tmp_path):
    from test_codemap import cli

    root, project = _mapped(tmp_path, "go", conn)

    def remember(scope, target):
        done = cli("remember", "--content", f"about {target}", "--scope", scope, "--target",
                   target, "--json", cwd=str(root))  # fmt: skip
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["memory"]["id"]

    on_file = remember("file", "util/trim.go")
    on_symbol = remember("symbol", "util/trim.go::Trim")
    on_moved = remember("symbol", "store/open.go::Open")
    untouched = remember("symbol", "util/pad.go::Pad")
    os.rename(root / "util/trim.go", root / "util/strings.go")
    source = (root / "store/open.go").read_text("utf-8")
    (root / "store/open.go").write_text("package store\n", "utf-8")  # Open leaves ...
    (root / "store/make.go").write_text(
        source.replace("package store\n\n", "package store\n\n// made\n"), "utf-8"
    )  # fmt: skip  ... and arrives, its text the same
    done = cli("map", "refresh", cwd=str(root))
    assert done.returncode == 0, done.stderr
    assert "now targets util/strings.go (was util/trim.go: it moved)" in done.stdout
    assert "now targets store/make.go::Open (was store/open.go::Open: it moved)" in done.stdout
    listed = json.loads(cli("list", "--json", cwd=str(root)).stdout)
    targets = {m["scope_target"] for m in listed["results"]}
    assert {"util/strings.go", "util/strings.go::Trim", "store/make.go::Open",
            "util/pad.go::Pad"} <= targets  # fmt: skip
    assert not targets & {"util/trim.go", "util/trim.go::Trim", "store/open.go::Open"}
    history = json.loads(cli("history", on_symbol, "--json", cwd=str(root)).stdout)
    assert [m["scope_target"] for m in history] == ["util/trim.go::Trim", "util/strings.go::Trim"]
    assert [m["status"] for m in history] == ["superseded", "active"]
    assert history[1]["content"] == "about util/trim.go::Trim"  # nothing else changed
    for old in (on_file, on_moved):
        assert json.loads(cli("history", old, "--json", cwd=str(root)).stdout)[-1]["status"] == (
            "active")  # fmt: skip
    assert len(json.loads(cli("history", untouched, "--json", cwd=str(root)).stdout)) == 1
    again = cli("map", "refresh", cwd=str(root)).stdout
    assert "now targets" not in again  # nothing moved since
