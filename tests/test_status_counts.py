"""`waymark status`'s counts come from one statement (storage.overview); each count must be
what its own question over the rows says, for this project only."""

from __future__ import annotations

import json
import subprocess
import sys

from waymark.curation import candidates
from waymark.handoff import checkpoints
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.projects.resolve import resolve
from waymark.storage import connection as db
from waymark.storage import vectors
from waymark.storage.overview import global_active, project_counts


def remember(conn, project, content, **fields):
    return store.remember(conn, project, make_draft(project, content=content, **fields)).memory


def rowid_of(conn, memory) -> int:
    return conn.execute("SELECT rowid FROM memories WHERE id = ?", (memory.id,)).fetchone()[0]


def test_each_count_is_its_own_question_over_this_projects_rows(conn, project, tmp_path):
    other_root = tmp_path / "other"
    other_root.mkdir()
    other = resolve(conn, str(other_root))
    kept = [remember(conn, project, f"Decision {i}: use apsw", type="decision") for i in range(3)]
    remember(conn, project, "The CI image pins Python 3.12", type="fact")
    gone = remember(conn, project, "An old fact that was archived", type="fact")
    store.archive(conn, project, gone.id)
    remember(conn, project, "From Claude's memory", type="fact", key="claude-memory:MEMORY.md#a")
    remember(conn, project, "Keyed like it but not it", type="fact", key="claude-memoryx:b")
    remember(conn, project, "From Codex's memory", type="note", key="codex-memories:MEMORY.md#b")
    remember(conn, project, "Prefer small commits", type="preference", scope="global")
    remember(conn, other, "Another project's decision", type="decision")
    remember(conn, other, "Another project's import", type="fact", key="claude-memory:x")
    with db.write(conn):
        for memory in [*kept, gone]:
            vectors.put_vector(conn, rowid_of(conn, memory), "model-a", 4, "h", b"\0" * 16)
        vectors.put_vector(conn, rowid_of(conn, kept[0]), "model-b", 4, "h", b"\0" * 16)
        for i, status in enumerate(("pending", "pending", "rejected")):
            row, _ = candidates.propose(
                conn, project.id, kind="insight", reason="seen twice", fingerprint=f"f{i}",
                fields={"type": "lesson", "content": f"Lesson {i} from the failures"},
            )  # fmt: skip
            if status != "pending":
                conn.execute("UPDATE candidates SET status = ? WHERE id = ?", (status, row["id"]))
    checkpoints.create(conn, project, {"objective": "Ship the importer"})

    counts = project_counts(conn, project.id, ("claude-memory", "codex-memories"))

    assert counts["memories"] == {
        "active": {"decision": 3, "fact": 3, "note": 1},
        "archived": {"fact": 1},
    }
    assert list(counts["memories"]["active"]) == ["decision", "fact", "note"]  # in name order
    assert counts["global"] == 1 == global_active(conn)
    assert counts["checkpoints"] == {"active": 1}
    assert counts["candidates"] == {"pending": 2, "rejected": 1}
    # the archived memory's vector is not counted; a second model's vector is its own count
    assert counts["embedded"] == {"model-a": 3, "model-b": 1}
    assert counts["imported"] == {"claude-memory": 1, "codex-memories": 1}
    assert project_counts(conn, other.id)["imported"] == {}
    assert project_counts(conn, other.id, ("claude-memory",))["imported"] == {"claude-memory": 1}


def test_status_reports_the_counts_as_a_person_reads_them(enabled, repo, conn):
    remember(conn, enabled, "Use apsw, not sqlite3", type="decision")
    remember(conn, enabled, "From Claude's memory", type="fact", key="claude-memory:MEMORY.md#a")
    done = subprocess.run(
        [sys.executable, "-m", "waymark", "status", "--json"],
        cwd=repo, capture_output=True, text=True, check=True,
    )  # fmt: skip
    data = json.loads(done.stdout)
    assert data["memories"] == {"active": {"decision": 1, "fact": 1}}
    assert data["imported"]["claude-memory"]["memories"] == 1
    assert data["imported"]["claude-memory"]["folder"].endswith("memory")
    assert data["imported"]["codex-memories"]["memories"] == 0
    assert data["candidates"] == {"pending": 0, "approved": 0, "rejected": 0, "waiting": []}
    text = subprocess.run(
        [sys.executable, "-m", "waymark", "status"],
        cwd=repo, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "memories    2 active: 1 decision, 1 fact" in text
    assert "imported    1 from claude-memory" in text
