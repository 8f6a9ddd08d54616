"""A dbt project's own knowledge: its models, sources, seeds, snapshots, tests and exposures
with the lineage between them, the latest result of each node that ran, and the sources'
freshness, read from the artifacts dbt writes (`target/manifest.json`, `run_results.json`,
`sources.json`). Waymark never runs dbt and never changes a file of it.

A dbt project is a `dbt_project.yml` that git tracks (or one at the root of a folder that is
no repository); its artifacts are in its `target-path`, `target` by default. A refresh reads
an artifact again only when its size or mtime moved; a node keeps its latest result until
another run says otherwise (`dbt run -s one_model` writes that model's result alone). Node
paths are the repository's; descriptions and messages are redacted before they are stored.

A model, seed or snapshot is cited by its path and the checksum its manifest recorded (the
SHA-256 of its text, stripped, as dbt computes it): RECHECK when the file no longer hashes to
it (edited since dbt last parsed it), MISSING when it is gone. Nothing here runs on a hook's path but `edit_lines`, which reads a few index
entries.
"""

from __future__ import annotations

import os
import time

from waymark.base import clock
from waymark.base.files import stat_key
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage import dbt as rows
from waymark.storage.connection import Connection

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

PROJECT_FILE = "dbt_project.yml"
ARTIFACTS = {"manifest": "manifest.json", "results": "run_results.json", "sources": "sources.json"}
FRESH, RECHECK, MISSING = "FRESH", "RECHECK", "MISSING"
# Kinds a manifest lists besides `nodes` (models, tests, seeds, snapshots, analyses).
OTHER_KINDS = ("sources", "exposures", "metrics", "semantic_models", "saved_queries", "unit_tests")
DESCRIPTION_CHARS = 500
MESSAGE_CHARS = 500


def roots(project: Project) -> list[str]:
    """The dbt projects' folders from the repository's root ('' for the root itself)."""
    from waymark.projects import git

    base = project.files or ""
    if not base:
        return []
    listed = git.output(base, "ls-files", "-z") if project.git else None
    if listed is None:
        return [""] if os.path.isfile(os.path.join(base, PROJECT_FILE)) else []
    found = [p for p in listed.split("\0") if p.rsplit("/", 1)[-1] == PROJECT_FILE]
    return sorted(p[: -len(PROJECT_FILE)].rstrip("/") for p in found)


def settings_of(folder: str) -> tuple[str | None, str]:
    """(name, target folder) from a dbt_project.yml's top-level `name:` and `target-path:`
    lines; dbt's own default target when it names none."""
    name, target = None, "target"
    try:
        with open(os.path.join(folder, PROJECT_FILE), encoding="utf-8") as f:
            lines = f.read(256 * 1024).splitlines()
    except (OSError, UnicodeDecodeError):
        return None, target
    for line in lines:
        key, sep, value = line.partition(":")
        value = value.split(" #", 1)[0].strip().strip("\"'")
        if not sep or line[:1].isspace() or not value:
            continue
        if key.strip() == "name":
            name = value
        elif key.strip() == "target-path":
            target = value
    return name, target


def refresh(conn: Connection, project: Project) -> dict[str, Any]:
    """Read what changed: {projects: [{root, name, read: [artifact...], problems}], nodes,
    seconds}. An artifact that does not parse is reported and keeps its last reading."""
    started = time.perf_counter()
    known = {p["root"]: p for p in rows.projects(conn, project.id)}
    found = roots(project)
    out = []
    for root in found:
        out.append(_refresh_one(conn, project, root, known.get(root)))
    gone = [r for r in known if r not in found]
    if gone:
        with db.write(conn):
            for root in gone:
                rows.drop_project(conn, project.id, root)
    return {
        "projects": out,
        "removed": gone,
        "nodes": sum(rows.counts(conn, project.id).values()),
        "seconds": round(time.perf_counter() - started, 3),
    }


def _refresh_one(
    conn: Connection, project: Project, root: str, known: dict[str, Any] | None
) -> dict[str, Any]:
    folder = os.path.join(project.files or "", root)
    name, target = settings_of(folder)
    where = os.path.join(folder, target)
    stats = {k: stat_key(os.path.join(where, f)) for k, f in ARTIFACTS.items()}
    row = dict(known or {}, root=root, name=name, target=target, read_at=clock.now())
    if known is None or known.get("target") != target:
        row.update(manifest_stat=None, results_stat=None, sources_stat=None)
    read, problems = [], []
    loaded: dict[str, Any] = {}
    for kind, stat in stats.items():
        if stat is None or stat == row.get(f"{kind}_stat"):
            continue
        path = os.path.join(where, ARTIFACTS[kind])
        try:
            loaded[kind] = _load(path)
        except (OSError, ValueError) as exc:
            problems.append(f"{_shown(project, path)}: {exc}")
            continue
        row[f"{kind}_stat"] = stat
        read.append(kind)
    with db.write(conn):
        if "manifest" in loaded:
            manifest = loaded["manifest"]
            meta = manifest.get("metadata") or {}
            row.update(manifest_at=_text(meta.get("generated_at")),
                       dbt_version=_text(meta.get("dbt_version")))  # fmt: skip
            nodes, edges = _graph(conn, manifest, root, name)
            rows.put_graph(conn, project.id, root, nodes, edges)
        if "results" in loaded:
            at = _text((loaded["results"].get("metadata") or {}).get("generated_at"))
            row["results_at"] = at
            rows.put_results(conn, project.id, _results(conn, loaded["results"], at))
        if "sources" in loaded:
            at = _text((loaded["sources"].get("metadata") or {}).get("generated_at"))
            row["sources_at"] = at
            rows.put_freshness(conn, project.id, _freshness(loaded["sources"], at))
        rows.put_project(conn, project.id, row)
    return {"root": root, "name": name, "target": target, "read": read, "problems": problems,
            "found": [k for k, s in stats.items() if s is not None]}  # fmt: skip


def _load(path: str) -> dict[str, Any]:
    import orjson

    with open(path, "rb") as f:
        data = orjson.loads(f.read())
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _scrubbed(conn: Connection, value: object, limit: int) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    from waymark import settings
    from waymark.base import redact

    contacts = bool(settings.get(conn, "capture.redact_contacts"))
    return redact.scrub_cut(" ".join(value.split()), limit, contacts=contacts)[0]


def _graph(
    conn: Connection, manifest: dict[str, Any], root: str, name: str | None
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """The manifest's nodes (paths from the repository's root for this project's own; a
    package's nodes have none) and its parent -> child edges."""
    own = name or (manifest.get("metadata") or {}).get("project_name")
    entries = list((manifest.get("nodes") or {}).values())
    for key in OTHER_KINDS:
        entries += list((manifest.get(key) or {}).values())
    nodes = []
    for n in entries:
        if not isinstance(n, dict) or not isinstance(n.get("unique_id"), str):
            continue
        path = n.get("original_file_path") if n.get("package_name") == own else None
        checksum = _object(n.get("checksum"))
        config = _object(n.get("config"))
        nodes.append({
            "unique_id": n["unique_id"], "root": root,
            "kind": str(n.get("resource_type") or n["unique_id"].split(".", 1)[0]),
            "name": str(n.get("name") or n["unique_id"].rsplit(".", 1)[-1]),
            "path": f"{root}/{path}" if root and isinstance(path, str) else _text(path),
            "checksum": checksum.get("checksum") if checksum.get("name") == "sha256" else None,
            "description": _scrubbed(conn, n.get("description"), DESCRIPTION_CHARS),
            "materialized": _text(config.get("materialized")),
            "attached": _text(n.get("attached_node")),
            "column_name": _text(n.get("column_name")),
        })  # fmt: skip
    edges = []
    for child, parents in (manifest.get("parent_map") or {}).items():
        edges += [(p, child) for p in parents or () if isinstance(p, str)]
    if not manifest.get("parent_map"):  # older manifests: each node's depends_on
        for n in entries:
            depends = (n.get("depends_on") or {}).get("nodes") if isinstance(n, dict) else None
            edges += [(p, n["unique_id"]) for p in depends or () if isinstance(p, str)]
    return nodes, edges


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _results(
    conn: Connection, results: dict[str, Any], at: str | None
) -> list[tuple[str, str, str | None, str]]:
    out = []
    for r in results.get("results") or ():
        if isinstance(r, dict) and isinstance(r.get("unique_id"), str):
            message = _scrubbed(conn, r.get("message"), MESSAGE_CHARS)
            out.append((r["unique_id"], str(r.get("status") or "unknown"), message,
                        at or clock.now()))  # fmt: skip
    return out


def _freshness(
    sources: dict[str, Any], at: str | None
) -> list[tuple[str, str, str | None, float | None, str]]:
    out = []
    for r in sources.get("results") or ():
        if isinstance(r, dict) and isinstance(r.get("unique_id"), str):
            age = r.get("max_loaded_at_time_ago_in_s")
            out.append((r["unique_id"], str(r.get("status") or "unknown"),
                        _text(r.get("max_loaded_at")),
                        float(age) if isinstance(age, (int, float)) else None,
                        _text(r.get("snapshotted_at")) or at or clock.now()))  # fmt: skip
    return out


def _shown(project: Project, path: str) -> str:
    base = project.files or ""
    return os.path.relpath(path, base) if base and path.startswith(base) else path


def state_of(project: Project, node: dict[str, Any]) -> str:
    """FRESH, RECHECK (the file hashes otherwise than the manifest recorded) or MISSING, for
    a node with a file of the repository's; FRESH when the manifest recorded no hash."""
    if not node.get("path") or not project.files:
        return FRESH
    path = os.path.join(project.files, node["path"])
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return MISSING
    if not node.get("checksum"):
        return FRESH
    import hashlib

    # dbt hashes the file's text with its surrounding whitespace stripped.
    text = data.decode("utf-8", "surrogateescape").strip().encode("utf-8", "surrogateescape")
    return FRESH if hashlib.sha256(text).hexdigest() == node["checksum"] else RECHECK
