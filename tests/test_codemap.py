"""The code map's snapshots: what the walk records and leaves out, incremental refreshes,
immutability, the few kept in full, and the file changes between two (renames by digest).
On real repositories (git included) and through the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import apsw
import pytest

from conftest import git_env
from waymark.codemap import changes, questions, snapshot, walk
from waymark.errors import InvalidArgument, NotFound


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env=git_env(repo.parent))  # fmt: skip


@pytest.fixture
def tree(repo):
    (repo / "src/pkg/util.py").write_text("def helper():\n    return 1\n", "utf-8")
    (repo / "web").mkdir()
    (repo / "web/app.tsx").write_text("export const App = () => null;\n", "utf-8")
    (repo / "config.yaml").write_text("a: 1\n", "utf-8")
    (repo / "node_modules/lib").mkdir(parents=True)
    (repo / "node_modules/lib/index.js").write_text("x", "utf-8")
    (repo / "vendor/other").mkdir(parents=True)
    (repo / "vendor/other/.git").mkdir()  # a nested repository
    (repo / "vendor/other/code.py").write_text("x = 1\n", "utf-8")
    (repo / "big.min.js").write_bytes(b"x" * (walk.MAX_BYTES + 1))
    (repo / "gen.py").write_text("x = 1\n" * (walk.MAX_LINES + 1), "utf-8")
    os.symlink(repo / "config.yaml", repo / "link.yaml")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    return repo


def test_a_refresh_records_paths_digests_and_languages_and_says_what_it_left_out(
    conn, project, tree
):
    done = snapshot.refresh(conn, project)
    assert done["created"] and done["hashed"] == done["files"]
    files = {p: v for p, v in snapshot.rows.files_of(conn, _seq(conn, done)).items()}
    assert files["src/pkg/util.py"][0] == "python" and files["web/app.tsx"][0] == "tsx"
    assert files["config.yaml"][0] is None  # recorded by digest only
    assert len(files["config.yaml"][1]) == 64
    assert not any(p.startswith(("node_modules/", "vendor/", ".git/")) for p in files)
    assert {"big.min.js", "gen.py", "link.yaml"}.isdisjoint(files)
    assert done["skipped"] == {"excluded": 2, "nested repository": 1, "larger than 1 MiB": 1,
                               "over 20,000 lines": 1, "symlink": 1}  # fmt: skip
    snap = done["snapshot"]
    head = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    parent = subprocess.run(["git", "-C", str(tree), "rev-parse", "--verify", "-q", "HEAD^"],
                            capture_output=True, text=True).stdout.strip() or None  # fmt: skip
    assert snap["git_head"] == head and snap["git_parent"] == parent
    assert snap["git_dirty"] is False


def _seq(conn, done):
    return conn.execute(
        "SELECT seq FROM map_snapshots WHERE id = ?", (done["snapshot"]["id"],)
    ).fetchone()[0]


def test_a_refresh_with_nothing_changed_takes_no_snapshot_and_one_edit_hashes_one_file(
    conn, project, tree
):
    first = snapshot.refresh(conn, project)
    again = snapshot.refresh(conn, project)
    assert not again["created"] and again["snapshot"]["id"] == first["snapshot"]["id"]
    assert again["hashed"] == 0 and again["reused"] == first["files"]
    (tree / "src/pkg/util.py").write_text("def helper():\n    return 2\n", "utf-8")
    edited = snapshot.refresh(conn, project)
    assert edited["created"] and edited["hashed"] == 1 and edited["snapshot"]["git_dirty"]
    diff = changes.changes(conn, project)
    assert diff["modified"] == ["src/pkg/util.py"] and diff["added"] == diff["removed"] == []
    assert (diff["from"]["id"], diff["to"]["id"]) == (first["snapshot"]["id"],
                                                      edited["snapshot"]["id"])  # fmt: skip


def test_a_moved_file_is_a_rename_and_only_a_unique_digest_makes_one(conn, project, tree):
    (tree / "a.txt").write_text("same\n", "utf-8")
    (tree / "b.txt").write_text("same\n", "utf-8")
    before = snapshot.refresh(conn, project)["snapshot"]["id"]
    os.rename(tree / "src/pkg/util.py", tree / "src/pkg/helpers.py")
    os.rename(tree / "a.txt", tree / "c.txt")  # its digest is b.txt's too: not unique
    (tree / "new.go").write_text("package main\n", "utf-8")
    after = snapshot.refresh(conn, project)["snapshot"]["id"]
    diff = changes.changes(conn, project, since=before, until=after)
    assert diff["renamed"] == [{"from": "src/pkg/util.py", "to": "src/pkg/helpers.py"}]
    assert diff["added"] == ["c.txt", "new.go"] and diff["removed"] == ["a.txt"]  # a copy's
    only = changes.changes(conn, project, since=before, until=after, path="src/")
    assert only["renamed"] and only["added"] == only["removed"] == []
    backwards = changes.changes(conn, project, since=after, until=before)  # as named
    assert backwards["renamed"] == [{"from": "src/pkg/helpers.py", "to": "src/pkg/util.py"}]


def test_snapshots_are_immutable_and_only_the_newest_keep_their_files(conn, project, tree):
    taken = []
    for n in range(snapshot.KEEP + 2):
        (tree / "counter.txt").write_text(f"{n}\n", "utf-8")
        taken.append(snapshot.refresh(conn, project)["snapshot"]["id"])
    found = questions.status(conn, project)
    assert [s["id"] for s in found["snapshots"]] == taken[::-1]  # newest first, as taken
    assert [s["kept"] for s in found["snapshots"]] == [True] * snapshot.KEEP + [False] * 2
    with pytest.raises(InvalidArgument, match="newest snapshots"):
        changes.changes(conn, project, since=taken[0], until=taken[-1])
    with pytest.raises(apsw.ConstraintError, match="immutable"):
        conn.execute("UPDATE map_snapshots SET files = 0")
    with pytest.raises(apsw.ConstraintError, match="immutable"):
        conn.execute("UPDATE map_files SET sha256 = ''")
    with pytest.raises(NotFound):
        changes.changes(conn, project, since="snap_nope", until=taken[-1])


def cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "waymark", *args], cwd=cwd, capture_output=True, text=True
    )


def test_the_cli_refreshes_lists_and_compares(enabled, tree):
    cwd = str(tree)
    first = cli("map", "refresh", cwd=cwd)
    assert first.returncode == 0 and first.stdout.startswith("new snapshot snap_")
    assert "left out: 2 excluded" in first.stdout
    assert cli("map", "refresh", cwd=cwd).stdout.startswith("unchanged since snap_")
    (tree / "config.yaml").write_text("a: 2\n", "utf-8")
    cli("map", "refresh", cwd=cwd)
    assert "M config.yaml" in cli("map", "changes", cwd=cwd).stdout
    listed = json.loads(cli("map", "status", "--json", cwd=cwd).stdout)
    assert len(listed["snapshots"]) == 2 and listed["keep"] == snapshot.KEEP
    missing = cli("map", "changes", "--from", "snap_x", "--to", "snap_y", "--json", cwd=cwd)
    assert missing.returncode != 0 and json.loads(missing.stdout)["code"] == "not_found"


MODULE = '''"""A module the map parses."""
import os, json as j
from .store import Cache as C, load
from pkg.util import *


def cached(fn):
    return fn


class Service(Base):
    """Reads through the cache."""

    @cached
    def get(self, key, default=make_default()):
        value = self.cache.get(key) or load(key)
        return os.path.join(value, helper(key))

    async def close(self):
        def later():
            j.dumps({})
        C().flush()
        return later


def main():
    Service().get("k")
'''


def test_python_declarations_imports_and_explicit_calls_exactly(conn, project, tree):
    (tree / "src/pkg/service.py").write_text(MODULE, "utf-8")
    snapshot.refresh(conn, project)
    found = questions.structure(conn, project, "src/pkg/service.py")
    assert [(d["qualname"], d["kind"], d["start_line"], d["end_line"])
            for d in found["declarations"]] == [
        ("cached", "function", 7, 8),
        ("Service", "class", 11, 23),
        ("Service.get", "method", 14, 17),  # its decorator included
        ("Service.close", "method", 19, 23),
        ("Service.close.later", "function", 20, 21),
        ("main", "function", 26, 27),
    ]  # fmt: skip
    refs = [(r["kind"], r["source"], r["target"], r["line"]) for r in found["references"]]
    assert refs == [  # by line, then kind and target
        ("import", None, "json as j", 2), ("import", None, "os", 2),  # the alias kept
        ("import", None, ".store:Cache as C", 3), ("import", None, ".store:load", 3),
        ("import", None, "pkg.util:*", 4),
        ("call", "Service", "make_default", 15),  # a default, evaluated where defined
        ("call", "Service.get", "load", 16), ("call", "Service.get", "self.cache.get", 16),
        ("call", "Service.get", "helper", 17), ("call", "Service.get", "os.path.join", 17),
        ("call", "Service.close.later", "j.dumps", 21),
        ("call", "Service.close", "C", 22),  # C().flush(): the call on its result is not
        ("call", "main", "Service", 27),
    ]  # fmt: skip
    stored = b"".join(p.read_bytes() for p in tree.parent.rglob("waymark.db*") if p.is_file())
    assert b"Reads through the cache" not in stored  # names and lines, never source text


def test_an_unchanged_file_keeps_its_parse_and_a_changed_one_is_parsed_again(conn, project, tree):
    (tree / "src/pkg/service.py").write_text(MODULE, "utf-8")
    snapshot.refresh(conn, project)
    (tree / "src/pkg/util.py").write_text("def helper():\n    return 2\n\ndef extra():\n    pass\n")
    os.utime(tree / "src/pkg/service.py")  # touched, not changed: its parse is carried
    snapshot.refresh(conn, project)
    names = {d["qualname"] for d in questions.structure(conn, project)["declarations"]}
    assert {"Service.get", "main", "helper", "extra"} <= names
    listed = cli("map", "symbols", "--path", "src/pkg/util.py", cwd=str(tree)).stdout
    assert "src/pkg/util.py:4-5  function extra" in listed and "0 imports, 0 calls" in listed


def test_a_content_is_parsed_once_and_dropped_when_no_kept_snapshot_holds_it(conn, project, tree):
    (tree / "a.py").write_text("def one():\n    pass\n", "utf-8")
    (tree / "b.py").write_text("def one():\n    pass\n", "utf-8")  # the same content
    snapshot.refresh(conn, project)
    digest = conn.execute("SELECT sha256 FROM map_files WHERE path = 'a.py'").fetchone()[0]
    assert (
        conn.execute(
            "SELECT count(*) FROM map_declarations WHERE sha256 = ?", (digest,)
        ).fetchone()[0]
        == 1
    )  # stored once for both paths
    found = questions.structure(conn, project)["declarations"]
    assert {(d["path"], d["qualname"]) for d in found} >= {("a.py", "one"), ("b.py", "one")}
    for n in range(snapshot.KEEP):  # a.py and b.py change; the old content leaves every kept one
        (tree / "a.py").write_text(f"def one():\n    return {n}\n", "utf-8")
        (tree / "b.py").write_text(f"def two():\n    return {n}\n", "utf-8")
        snapshot.refresh(conn, project)
    for table in ("map_declarations", "map_references", "map_parsed"):
        gone = conn.execute(f"SELECT count(*) FROM {table} WHERE sha256 = ?", (digest,))
        assert gone.fetchone()[0] == 0, table


APP = {
    "app/__init__.py": "",
    "app/store.py": (
        "class Cache:\n"
        "    def get(self, key):\n"
        "        return self.load(key)\n"
        "    def load(self, key):\n"
        "        return key\n"
        "def open_cache():\n"
        "    return Cache()\n"
    ),
    "app/service.py": (
        "from .store import Cache, open_cache\n"
        "from app import store\n"
        "def serve(key):\n"
        "    return open_cache().get(key)\n"
        "def warm():\n"
        "    store.open_cache()\n"
        "    return Cache\n"
    ),
    "app/cli.py": (
        "import app.service\n"
        "from app.service import serve\n"
        "def main():\n"
        "    serve('k')\n"
        "    render()\n"  # declared twice in the map: ambiguous, never guessed
        "    helpers()\n"  # declared once: unique
    ),
    "app/a.py": "def render():\n    pass\n",
    "app/b.py": "def render():\n    pass\ndef helpers():\n    pass\n",
}


@pytest.fixture
def app(conn, project, tree):
    for path, text in APP.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text, "utf-8")
    snapshot.refresh(conn, project)
    return tree


def test_references_resolve_only_to_exactly_one_target(conn, project, app):
    from waymark.codemap.resolve import Map

    seq = snapshot.rows.snapshots(conn, project.id, 1)[0]["seq"]
    edges = Map(list(snapshot.rows.files_of(conn, seq)), snapshot.rows.declarations(conn, seq, None),
                snapshot.rows.references(conn, seq, None)).edges()  # fmt: skip
    got = {(e["kind"], e["from"], e["to"]) for e in edges}
    assert ("import", "app/service.py", "app/store.py::Cache") in got  # relative, a declaration
    assert ("import", "app/service.py", "app/store.py") in got  # from app import store: a module
    assert ("import", "app/cli.py", "app/service.py") in got
    assert ("call", "app/store.py::Cache.get", "app/store.py::Cache.load") in got  # self.load
    assert ("call", "app/store.py::open_cache", "app/store.py::Cache") in got  # same file
    assert ("call", "app/service.py::serve", "app/store.py::open_cache") in got  # imported name
    assert ("call", "app/service.py::warm", "app/store.py::open_cache") in got  # store.open_cache
    assert ("call", "app/cli.py::main", "app/service.py::serve") in got
    assert ("call", "app/cli.py::main", "app/b.py::helpers") in got  # unique in the map
    assert not any(e["to"].endswith("::render") for e in edges)  # two candidates: unresolved
    assert not any(e["to"].endswith("::get") for e in edges)  # open_cache().get: no syntax


def test_impact_follows_dependents_to_a_depth_and_never_a_similar_path(conn, project, app):
    (app / "app/store_old.py").write_text("def open_cache():\n    pass\n", "utf-8")
    snapshot.refresh(conn, project)
    found = questions.impact(conn, project, "app/store.py::open_cache", depth=1)
    assert {d["at"] for d in found["dependents"]} == {
        "app/service.py::serve", "app/service.py::warm", "app/service.py",
    }  # fmt: skip
    deeper = questions.impact(conn, project, "app/store.py::open_cache", depth=2)
    assert {"app/cli.py::main", "app/cli.py"} <= {d["at"] for d in deeper["dependents"]}
    assert all(not d["at"].startswith("app/store_old.py") for d in deeper["dependents"])
    whole = questions.impact(conn, project, "app/store.py", depth=1)  # the file and what it holds
    assert "app/service.py" in {d["at"] for d in whole["dependents"]}
    with pytest.raises(NotFound):
        questions.impact(conn, project, "app/store")  # a similar path is not the file
    text = cli("map", "impact", "app/store.py::open_cache", "--depth", "2", cwd=str(app)).stdout
    assert text.startswith(f"{len(deeper['dependents'])} dependents of app/store.py::open_cache")
    assert "app/cli.py::main  calls app/service.py::serve" in text


def test_changes_name_declarations_and_relationships_and_a_body_only_edit(conn, project, app):
    before = snapshot.rows.snapshots(conn, project.id, 1)[0]["id"]
    store = app / "app/store.py"
    store.write_text(store.read_text("utf-8").replace("return key", "return key.lower()"))
    service = app / "app/service.py"
    service.write_text(service.read_text("utf-8") + "def flush():\n    open_cache()\n")
    os.rename(app / "app/a.py", app / "app/views.py")  # moved, unchanged
    after = snapshot.refresh(conn, project)["snapshot"]["id"]
    diff = changes.changes(conn, project, since=before, until=after)
    assert diff["modified"] == ["app/service.py", "app/store.py"]
    assert diff["renamed"] == [{"from": "app/a.py", "to": "app/views.py"}]
    assert diff["declarations"] == {
        "added": ["app/service.py::flush"],
        "removed": [],
        "modified": ["app/store.py::Cache", "app/store.py::Cache.load"],  # the body only
    }  # fmt: skip
    assert diff["relationships"]["added"] == [
        {"kind": "call", "from": "app/service.py::flush", "to": "app/store.py::open_cache"}
    ]
    assert diff["relationships"]["removed"] == []  # the renamed file's edges moved with it
    text = cli("map", "changes", "--from", before, "--to", after, cwd=str(app)).stdout
    assert "M app/store.py::Cache.load" in text and "A app/service.py::flush" in text
    assert "+ app/service.py::flush calls app/store.py::open_cache" in text


def test_find_ranks_exact_names_then_prefixes_then_all_words(conn, project, app):
    found = questions.find(conn, project, "open_cache")
    assert found["results"][0] == {"name": "app/store.py::open_cache", "kind": "function",
                                   "lines": [6, 7], "match": "exact"}  # fmt: skip
    names = [r["name"] for r in questions.find(conn, project, "Cache")["results"]]
    assert names[0] == "app/store.py::Cache"  # exact before the prefix
    assert names.index("app/store.py::Cache") < names.index("app/store.py::Cache.get")
    words = questions.find(conn, project, "store get")["results"]
    exact = [r["name"] for r in words if r["match"] == "exact"]
    assert exact == ["app/store.py::Cache.get", "app/store.py"]  # a word names each
    files = [r for r in questions.find(conn, project, "service")["results"] if r["kind"] == "file"]
    assert files[0]["name"] == "app/service.py" and files[0]["match"] == "exact"
    with pytest.raises(InvalidArgument):
        questions.find(conn, project, "  ")
    text = cli("map", "find", "serve", cwd=str(app)).stdout
    assert text.startswith("app/service.py::serve  (function, exact)")


def test_the_mcp_recall_tool_answers_map_questions_within_its_budget(conn, project, app):
    from conftest import call_tool

    def ask(request, budget=1500):
        done = call_tool(app, "recall", {"query": "-", "map": request, "token_budget": budget})
        assert not done.is_error, done.content
        return done.structured_content["map"]

    impact = ask("impact app/store.py::open_cache")
    assert {d["at"] for d in impact["dependents"]} >= {"app/service.py::serve", "app/cli.py"}
    assert impact["snapshot"].startswith("snap_")
    tight = ask("impact app/store.py::open_cache", budget=100)
    assert tight["omitted"]["dependents"] > 0 and len(tight["dependents"]) < len(
        impact["dependents"]
    )
    assert ask("find open_cache")["results"][0]["name"] == "app/store.py::open_cache"
    (app / "app/a.py").write_text("def render():\n    return 1\n", "utf-8")
    snapshot.refresh(conn, project)
    assert ask("changes")["declarations"]["modified"] == ["app/a.py::render"]
    bad = call_tool(app, "recall", {"query": "-", "map": "explain everything"})
    assert bad.is_error and "impact PATH" in bad.content[0].text


WEB = {
    "web/util.ts": "export function fmt(n: number) { return String(n); }\n"
    "export const pad = (s: string) => s.padStart(2);\n",
    "web/widget.tsx": (
        'import React from "react";\n'
        'import { fmt } from "./util";\n'
        'import * as util from "./util";\n'
        "export default class Widget {\n"
        "  render() { this.paint(); return <b>{fmt(1)}</b>; }\n"
        "  paint() { util.pad('x'); }\n"
        "}\n"
    ),
    "web/index.js": "import Widget from './widget';\nfunction start() { new Widget(); }\n",
}


def test_javascript_and_typescript_declarations_resolve_within_their_family(conn, project, tree):
    for path, text in WEB.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text, "utf-8")
    (tree / "web/app.tsx").unlink()
    snapshot.refresh(conn, project)
    found = questions.structure(conn, project, "web/widget.tsx")
    assert [(d["qualname"], d["kind"], d["start_line"]) for d in found["declarations"]] == [
        ("Widget", "class", 4), ("Widget.render", "method", 5), ("Widget.paint", "method", 6),
    ]  # fmt: skip
    refs = {(r["kind"], r["source"], r["target"]) for r in found["references"]}
    assert {("import", None, "react:default as React"), ("import", None, "./util:fmt"),
            ("import", None, "./util as util"), ("call", "Widget.render", "this.paint"),
            ("call", "Widget.render", "fmt"), ("call", "Widget.paint", "util.pad")} <= refs  # fmt: skip
    util = questions.structure(conn, project, "web/util.ts")["declarations"]
    assert [d["qualname"] for d in util] == ["fmt", "pad"]  # an arrow function bound by const
    on_fmt = questions.impact(conn, project, "web/util.ts::fmt", depth=1)
    assert {d["at"] for d in on_fmt["dependents"]} == {"web/widget.tsx::Widget.render",
                                                      "web/widget.tsx"}  # fmt: skip
    on_pad = questions.impact(conn, project, "web/util.ts::pad", depth=1)
    assert {d["at"] for d in on_pad["dependents"]} == {"web/widget.tsx::Widget.paint"}
    on_paint = questions.impact(conn, project, "web/widget.tsx::Widget.paint", depth=1)
    assert {d["at"] for d in on_paint["dependents"]} == {"web/widget.tsx::Widget.render"}
    on_widget = questions.impact(conn, project, "web/widget.tsx", depth=1)
    assert "web/index.js" in {d["at"] for d in on_widget["dependents"]}  # ./widget -> .tsx


def test_a_checkpoint_saved_through_mcp_refreshes_an_existing_map_only(conn, project, tree):
    from conftest import call_tool

    def save(args):
        done = call_tool(tree, "checkpoint", args)
        assert not done.is_error, done.content
        return done.structured_content

    made = save({"operation": "create", "objective": "Refunds", "next_action": "write refund()"})
    assert conn.execute("SELECT count(*) FROM map_snapshots").fetchone()[0] == 0  # none made
    first = snapshot.refresh(conn, project)["snapshot"]["id"]
    (tree / "src/pkg/util.py").write_text("def helper():\n    return 3\n", "utf-8")
    save(
        {
            "operation": "revise",
            "checkpoint_id": made["checkpoint"]["id"],
            "expected_revision_id": made["saved_revision_id"],
            "next_action": "test refund()",
        }
    )
    newest = questions.status(conn, project)["snapshots"][0]["id"]
    assert newest != first
    assert changes.changes(conn, project)["declarations"]["modified"] == ["src/pkg/util.py::helper"]


BARRELS = {
    "web/util.ts": "export function fmt(n: number) { return String(n); }\n"
    "export function pad(s: string) { return s; }\n",
    "web/lib/deep.ts": "export function deep() { return 1; }\n",
    "web/lib/index.ts": 'export { deep } from "./deep";\n',
    "web/other.ts": "export function fmt() { return 2; }\n",
    "web/index.ts": 'export { fmt, pad as padLeft } from "./util";\n'
    'export * from "./lib";\n'
    'export * as others from "./other";\n',
    "main.ts": 'import { fmt, padLeft, deep } from "./web";\n'
    "function run() { fmt(1); padLeft('x'); deep(); }\n",
}


def test_typescript_barrels_are_followed_to_the_one_declaration_they_re_export(conn, project, tree):
    for path, text in BARRELS.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text, "utf-8")
    snapshot.refresh(conn, project)
    refs = {
        (r["kind"], r["target"])
        for r in questions.structure(conn, project, "web/index.ts")["references"]
    }
    assert refs == {("export", "./util:fmt"), ("export", "./util:pad as padLeft"),
                    ("export", "./lib:*"), ("export", "./other as others")}  # fmt: skip
    on_fmt = questions.impact(conn, project, "web/util.ts::fmt", depth=1)
    assert {d["at"] for d in on_fmt["dependents"]} == {"main.ts", "main.ts::run", "web/index.ts"}
    on_pad = questions.impact(conn, project, "web/util.ts::pad", depth=1)
    assert "main.ts::run" in {d["at"] for d in on_pad["dependents"]}  # through its alias
    on_deep = questions.impact(conn, project, "web/lib/deep.ts::deep", depth=1)
    assert "main.ts::run" in {d["at"] for d in on_deep["dependents"]}  # two barrels deep
    on_other = questions.impact(conn, project, "web/other.ts::fmt", depth=1)
    assert "main.ts::run" not in {d["at"] for d in on_other["dependents"]}  # a namespace only


def test_a_map_of_a_plain_folder_needs_yes_and_never_holds_waymarks_own_data(tmp_path, monkeypatch):
    import json
    import subprocess
    import sys

    folder = tmp_path / "plain"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "app.py").write_text("def run():\n    return 1\n", encoding="utf-8")
    data = folder / "waymark-data"
    env_dir = folder / "tools-env"
    (env_dir / "lib").mkdir(parents=True)
    (env_dir / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    (env_dir / "lib" / "big.py").write_text("x = 1\n" * 100, encoding="utf-8")
    monkeypatch.setenv("WAYMARK_HOME", str(data))

    def wm(*args):
        return subprocess.run([sys.executable, "-m", "waymark", *args, "--json"], cwd=folder,
                              capture_output=True, text=True)  # fmt: skip

    assert wm("remember", "--content", "a note so the database exists").returncode == 0
    refused = wm("map", "refresh")
    assert (
        refused.returncode == 1 and "not a git repository" in json.loads(refused.stdout)["message"]
    )
    done = wm("map", "refresh", "--yes")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["files"] == 1  # src/app.py only
    assert report["skipped"]["Waymark's data folder"] == 1
    assert report["skipped"]["virtual environment"] == 1
    assert wm("map", "refresh").returncode == 0  # once mapped, a refresh needs no --yes


def test_removing_a_project_compacts_the_file_and_compact_does_too(conn, repo, tmp_path):
    import json
    import subprocess
    import sys

    from waymark import home
    from waymark.memories import store
    from waymark.memories.draft import make_draft
    from waymark.projects.resolve import resolve

    other = tmp_path / "other"
    other.mkdir()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    empty = os.path.getsize(home.db_path())  # a store's tables, each a page at least
    project = resolve(conn, str(other))
    for i in range(400):
        store.remember(conn, project, make_draft(project, type="fact",
                                                 content=f"fact {i} " + "padding " * 60))  # fmt: skip
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = os.path.getsize(home.db_path())
    done = subprocess.run(
        [sys.executable, "-m", "waymark", "project", "remove", project.id, "--yes", "--json"],
        cwd=repo, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["bytes_after"] < report["bytes_before"]
    assert os.path.getsize(home.db_path()) < empty + (before - empty) / 4  # the rows' space
    again = subprocess.run([sys.executable, "-m", "waymark", "compact", "--json"], cwd=repo,
                           capture_output=True, text=True)  # fmt: skip
    assert again.returncode == 0 and json.loads(again.stdout)["bytes_after"] > 0


def test_impact_takes_a_path_as_any_command_does(conn, project, app):
    want = questions.impact(conn, project, "app/store.py", depth=1)["dependents"]
    for spelling, base in (
        ("./app/store.py", None),
        (str(app / "app" / "store.py"), None),
        ("store.py", str(app / "app")),  # from the file's directory
        ("app/store.py::open_cache", str(app / "app")),  # from the root, typed in a subdirectory
    ):
        found = questions.impact(conn, project, spelling, depth=1, base=base)
        assert found["target"].startswith("app/store.py")
        if "::" not in spelling:
            assert found["dependents"] == want
    text = cli("map", "impact", "./store.py", "--depth", "1", cwd=str(app / "app")).stdout
    assert text.startswith(f"{len(want)} dependents of app/store.py ")


def _stored_and_full(conn, project):
    """(the newest snapshot's stored relationships, a full resolution of it), comparable."""
    from waymark.codemap.resolve import Map

    seq = snapshot.rows.snapshots(conn, project.id, 1)[0]["seq"]
    key = lambda e: (e["kind"], e["from"], e["to"], e["line"])  # noqa: E731
    stored = sorted(key(e) for e in snapshot.rows.all_edges(conn, seq))
    full = Map(list(snapshot.rows.files_of(conn, seq)), snapshot.rows.declarations(conn, seq, None),
               snapshot.rows.references(conn, seq, None)).edges()  # fmt: skip
    return stored, sorted(key(e) for e in full)


def test_a_body_edit_carries_the_other_files_relationships_and_matches_a_full_resolution(
    conn, project, app, monkeypatch
):
    calls = []
    real = snapshot._carry
    monkeypatch.setattr(snapshot, "_carry", lambda *a: calls.append(real(*a)) or calls[-1])
    cli_file = app / "app/cli.py"
    cli_file.write_text("\n\n" + cli_file.read_text("utf-8").replace("serve('k')", "serve('j')"))
    snapshot.refresh(conn, project)  # same names, same imports: carried
    assert calls == [True]
    stored, full = _stored_and_full(conn, project)
    assert stored == full and ("call", "app/cli.py::main", "app/service.py::serve", 6) in stored
    a_file = app / "app/a.py"  # again: carried from a snapshot whose rows are held earlier
    a_file.write_text(a_file.read_text("utf-8") + "# touched\n")
    snapshot.refresh(conn, project)
    assert calls == [True, True]
    stored, full = _stored_and_full(conn, project)
    assert stored == full
    seq = snapshot.rows.snapshots(conn, project.id, 1)[0]["seq"]
    into = snapshot.rows.edges_into(conn, seq, "app/service.py")  # what the hooks read
    assert ("call", "app/cli.py::main", "app/service.py::serve", 6) in into
    assert conn.execute("SELECT count(*) FROM map_resolved").fetchone()[0] == 1
    store = app / "app/store.py"  # a new declaration: other files may resolve to it now
    store.write_text(store.read_text("utf-8") + "def render():\n    pass\n")
    snapshot.refresh(conn, project)
    assert calls == [True, True, False]
    stored, full = _stored_and_full(conn, project)
    assert stored == full
    service = app / "app/service.py"  # a changed import: resolved again too
    service.write_text(service.read_text("utf-8").replace("from app import store\n", ""))
    snapshot.refresh(conn, project)
    assert calls == [True, True, False, False]
    assert _stored_and_full(conn, project)[0] == _stored_and_full(conn, project)[1]
