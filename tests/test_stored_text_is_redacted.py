"""No secret reaches the disk through any stored text field.

Every TEXT column of the schema is either free text that a person, an agent or a tool can
fill (each is written here with a secret through the real write paths: the CLI, the library
the MCP tools call, an import, the hooks as processes) or declared structural below (ids,
enums, times, hashes, Waymark's own strings). A new column fails until it is put in one of
the two; then the database file and its WAL are searched byte for byte for every secret.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys

from waymark.cli import main
from waymark.curation import candidates, feedback
from waymark.handoff import checkpoints
from waymark.memories import observations, store
from waymark.memories.draft import make_draft
from waymark.projects import capture
from waymark.storage import connection as db

# Columns filled with text from outside: each is written with a secret below.
FREE_TEXT = {
    "memories": {"title", "content", "tags", "evidence", "source_ref", "key", "erased_reason",
                 "git_branch"},
    "events": {"detail"},
    "session_ledger": {"path", "command", "error_tail"},
    "sessions": {"end_reason", "git_branch_start", "compact_dropped"},
    "checkpoint_revisions": {"body", "git_branch"},
    "checkpoints": {"branch"},  # the branch a claim started on
    "command_failures": {"head", "command", "error_tail", "fix", "signature", "tried"},
    "session_steps": {"target"},
    "tool_outputs": {"command", "output"},
    "candidates": {"fields", "evidence", "reason", "review_note"},
    "memory_feedback": {"terms"},
    "observations": {"links", "note"},
    "notes": {"path", "heading", "description"},
    "dbt_nodes": {"description", "message"},
    # A packet line as sent: from the store's redacted text; a line read from the repository
    # (the branch, commit subjects, the code map) keeps none. The hooks below write it.
    "injections": {"text"},
}  # fmt: skip
# Columns that hold no free text: ids, enums, times, hashes, paths Waymark resolved itself,
# settings' typed JSON values, and reasons and notices Waymark writes itself.
STRUCTURAL = {
    "team_sync": {"store", "machine", "last_sync"},
    "personal_memories": {"memory_id", "created_at"},
    "projects": {"id", "kind", "name", "root", "created_at", "identity", "notice"},
    "memories": {"id", "project_id", "type", "scope_type", "scope_target", "status", "actor",
                 "client", "session_id", "valid_until", "event_time", "created_at",
                 "updated_at", "content_hash", "supersedes", "superseded_by", "cleared",
                 "agent"},  # a validated name; one holding a secret is refused (test_agents)
    "events": {"at", "op", "project_id", "memory_id", "actor", "session_id"},
    "vectors": {"model", "text_hash"},
    "links": {"src", "dst", "kind", "created_at", "actor"},
    "memory_use": {"last_used"},
    "settings": {"key", "value"},
    "checkpoints": {"id", "project_id", "status", "current_revision", "created_at",
                    "updated_at", "parent_id", "holder_session", "holder_agent", "claimed_at",
                    "lease_until", "base_commit",
                    "worktree",  # the working tree Waymark resolved
                    # client and machine names, a validated agent type, ids and times
                    "holder_about"},
    # A done command as its revision stored it (redacted there), its result, ids and times.
    "task_checks": {"checkpoint_id", "command", "result", "at", "session_id"},
    # The proxy's packets as sent, redacted again before they are kept (packets.conversation),
    # a hash of what names the conversation, ids and times.
    "proxy_conversations": {"key", "project_id", "session_id", "opening", "packets",
                            "updated_at"},
    # Ids, a validated agent type, times; events: the recorded memories' (redacted) text.
    "task_reports": {"id", "session_id", "agent_id", "agent_type", "checkpoint_id",
                     "revision_id", "events", "at", "shown_at"},
    "checkpoint_revisions": {"id", "checkpoint_id", "operation", "status", "actor", "client",
                             "session_id", "created_at"},
    "handoff_markers": {"project_id", "session_id", "reason", "created_at", "cleared_at",
                        "cleared_by"},
    "project_capture": {"project_id", "changed_at", "mode"},
    "project_aliases": {"kind", "alias", "project_id", "created_at"},  # a resolved root, a name
    "sessions": {"id", "client", "project_id", "started_at", "ended_at", "git_head_start",
                 "git_head_end", "git_dirty_seen", "last_shell_at", "last_change_at",
                 "asked_for", "capture_mode", "handed_off_at",
                 "tree"},  # the working tree Waymark resolved
    "session_ledger": {"session_id", "at", "kind"},
    "session_injected": {"session_id", "memory_id"},
    "command_failures": {"project_id", "session_id", "failed_at", "passed_at", "passed_session"},
    # Shown items are ids and Waymark's keys; sections are its packets' own titles.
    "injected_used": {"session_id", "item", "how", "at"},
    "notes": {"project_id", "sha256", "file_sha256", "file_stat", "kind", "indexed_at"},
    # Folders and links are real paths Waymark resolved (a note's own path is free text).
    "note_folders": {"project_id", "path", "added_at"},
    "note_links": {"project_id", "src", "dst"},
    "hook_deliveries": {"key", "at"},
    # Stems of words in many memories' (redacted) text, as the lexical index holds them.
    "term_counts": {"term"},
    # Names and paths parsed from a dbt project's own files, dbt's statuses, stats and times.
    "dbt_projects": {"project_id", "root", "name", "target", "manifest_stat", "manifest_at",
                     "dbt_version", "results_stat", "results_at", "sources_stat", "sources_at",
                     "read_at"},
    "dbt_nodes": {"project_id", "unique_id", "root", "kind", "name", "path", "checksum",
                  "materialized", "attached", "column_name", "status", "result_at",
                  "freshness", "loaded_at", "checked_at"},
    "dbt_edges": {"project_id", "root", "parent", "child"},  # an event name and its payload's length and checksums
    "section_use": {"project_id", "section", "at"},
    # Commit ids and paths from git's own output, its states; a person's reason is in events.
    "outcomes": {"item_id", "project_id", "kind", "commits", "files", "state", "reverted_by",
                 "set_by", "checked_at"},
    # Receipts: Waymark's own section titles and reasons (no command text), ids, times.
    "injections": {"packet", "at", "project_id", "session_id", "hook", "kind", "section", "item",
                   "why"},
    "session_steps": {"session_id", "at", "tool", "outcome"},
    "tool_outputs": {"id", "project_id", "session_id", "at", "expires_at", "tool"},
    "candidates": {"id", "project_id", "kind", "action", "sources", "fingerprint", "status",
                   "memory_id", "reviewed_by", "reviewed_at", "session_id", "created_at",
                   "updated_at"},
    "memory_feedback": {"verdict", "actor", "session_id", "at"},
    "learned": {"memory_id", "kind", "status", "updated_at"},
    "observations": {"id", "memory_id", "project_id", "status", "actor", "session_id",
                     "created_at"},
    "schema_migrations": {"name", "applied_at"},
    # The code map: paths Waymark read from the tree itself, digests, Git state, counts.
    "map_snapshots": {"id", "project_id", "git_head", "git_parent", "skipped", "created_at",
                      "overview"},  # counts by language and directories of mapped paths
    "map_files": {"path", "language", "sha256"},
    "map_declarations": {"sha256", "qualname", "kind", "digest"},  # names parsed from the tree's code
    "map_references": {"sha256", "kind", "source", "target"},
    "map_parsed": {"sha256", "language"},
    "map_edges": {"kind", "from_node", "to_path", "to_node"},  # paths and parsed names
}  # fmt: skip

SECRETS = {
    "github": "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8",
    "aws": "AKIA" + "Z7Y6X5W4V3U2T1S0",
    "openai": "sk-proj-" + "Mn4Bv5Cx6Zl7Kj8Hg9Fd0Sa1Qw2Er3Ty",
    "slack": "xoxb-" + "1234567890-0987654321-Ab1Cd2Ef3Gh4Ij5Kl6",
}


def text_columns(conn) -> dict[str, set[str]]:
    tables = [
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if not r[0].startswith(("sqlite_", "memories_fts"))
    ]
    return {
        t: {str(c[1]) for c in conn.execute(f'PRAGMA table_info("{t}")') if c[2] == "TEXT"}
        for t in tables
    }


def test_every_text_column_is_declared_free_text_or_structural(conn):
    for table, columns in text_columns(conn).items():
        declared = FREE_TEXT.get(table, set()) | STRUCTURAL.get(table, set())
        assert columns - declared == set(), f"{table}: classify {sorted(columns - declared)}"
        assert FREE_TEXT.get(table, set()) & STRUCTURAL.get(table, set()) == set()


def hook(event, module, data, client="claude-code"):
    done = subprocess.run(
        [sys.executable, "-I", "-m", f"waymark.hooks.{module}", client],
        input=json.dumps(data).encode(),
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr


def test_secrets_written_through_every_path_never_reach_the_file(
    conn, project, repo, waymark_home, tmp_path, monkeypatch, capsys
):
    s = SECRETS
    monkeypatch.chdir(repo)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    # The CLI: every flag that is stored.
    assert main([
        "remember", "--type", "decision", "--title", f"use {s['github']}",
        "--content", f"the key is {s['aws']}", "--tag", s["openai"],
        "--evidence", f"cmd:curl -H 'Authorization: Bearer {s['slack']}'", "--key", s["github"],
    ]) == 0  # fmt: skip
    saved = store.remember(
        conn,
        project,
        make_draft(project, type="note", content="to archive", git_branch=f"fix/{s['aws']}"),
    )
    store.archive(conn, project, saved.memory.id, reason=f"leaked {s['openai']}")
    doomed = store.remember(conn, project, make_draft(project, type="note", content="to erase"))
    store.erase(conn, project, doomed.memory.id, reason=f"held {s['slack']} " + "x" * 600)
    store.remember(
        conn,
        project,
        make_draft(
            project, type="fact", content="sourced", source_ref=f"https://x/?t={s['github']}"
        ),
    )
    # An import: key and text.
    lines = tmp_path / "in.jsonl"
    lines.write_text(json.dumps({"key": f"k:{s['openai']}", "text": f"t {s['aws']}"}) + "\n")
    assert main(["import", str(lines), "--project", "imported"]) == 0
    # The checkpoint tool's library: fields, and an event's source key.
    # ...held by an agent's session on a branch whose name holds a key (the claim's branch)
    from conftest import git_env

    done = subprocess.run(["git", "-C", str(project.files), "checkout", "-q", "-b",
                           f"claim/{s['github']}"], capture_output=True, text=True,
                          env=git_env(tmp_path))  # fmt: skip
    assert done.returncode == 0, done.stderr
    cp = checkpoints.create(
        conn,
        project,
        {"objective": f"rotate {s['github']}"},
        checkpoints.Origin(actor="agent", session_id="s-1", git_branch=f"fix/{s['aws']}"),
    )
    checkpoints.record_event(
        conn, project, kind="failure", summary=f"401 with {s['slack']}",
        source_key=f"run-{s['aws']}", checkpoint_id=cp.id,
    )  # fmt: skip
    # The review queue: a proposal and its rejection note.
    with db.write(conn):
        proposed, _ = candidates.propose(
            conn, project.id, kind="import", reason=f"read {s['aws']}",
            fingerprint=f"k {s['github']}", evidence=[{"path": f"notes/{s['openai']}.md"}],
            fields={"type": "fact", "content": f"uses {s['slack']}", "title": s["github"]},
        )  # fmt: skip
    candidates.reject(conn, project, proposed["id"], note=f"no: {s['openai']}")
    # Feedback on a recall: the recall's words.
    feedback.give(conn, project, saved.memory.id, "helpful", query=f"deploy {s['aws']} now")
    # Implementation evidence: a locator and a verification note.
    observed = store.remember(conn, project, make_draft(project, type="fact", content="built"))
    observations.observe(
        conn, project, observed.memory.id, "REPORTED_PASS",
        [{"role": "test", "path": "src/pkg/core.py", "locator": f"t-{s['github']}"}],
        f"passed with {s['openai']}",
    )  # fmt: skip
    # The repository's notes, indexed: a secret in a file name, a heading and a body.
    (repo / "docs").mkdir(exist_ok=True)
    (repo / "docs" / f"keys-{s['aws']}.md").write_text(
        f"# Rotate {s['github']}\n\nexport SLACK={s['slack']}\n", encoding="utf-8")  # fmt: skip
    (repo / "procedures").mkdir(exist_ok=True)
    (repo / "procedures" / "rotate.md").write_text(
        f"---\nname: rotate\ndescription: use {s['openai']} to rotate\n---\nsteps\n")  # fmt: skip
    # A dbt project's artifacts: a secret in a model's description and in a test's message.
    (repo / "dbt_project.yml").write_text("name: shop\n", encoding="utf-8")
    (repo / "target").mkdir()
    (repo / "target" / "manifest.json").write_text(json.dumps({"nodes": {
        "model.shop.m": {"unique_id": "model.shop.m", "resource_type": "model", "name": "m",
                         "package_name": "shop", "original_file_path": "models/m.sql",
                         "description": f"reads with {s['aws']}"},
        "test.shop.t": {"unique_id": "test.shop.t", "resource_type": "test", "name": "t",
                        "package_name": "shop", "attached_node": "model.shop.m"}},
        "parent_map": {"test.shop.t": ["model.shop.m"]}}), encoding="utf-8")  # fmt: skip
    (repo / "target" / "run_results.json").write_text(json.dumps({"results": [
        {"unique_id": "test.shop.t", "status": "error",
         "message": f"Database Error: password authentication failed for {s['slack']}"}]}),
        encoding="utf-8")  # fmt: skip
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, capture_output=True)
    assert main(["notes", "refresh"]) == 0
    assert main(["dbt", "refresh"]) == 0
    assert conn.execute("SELECT count(*) FROM dbt_nodes WHERE message LIKE '%REDACTED%'"
                        " OR description LIKE '%REDACTED%'").fetchone()[0] == 2  # fmt: skip
    # The hooks, as the clients run them.
    capture.set_enabled(conn, project, True)
    base = {"session_id": "hooked", "cwd": str(repo), "transcript_path": None}
    subprocess.run(  # a branch named after a secret, as a careless checkout can be
        ["git", "-C", str(repo), "checkout", "-q", "-b", f"fix/{s['aws']}"],
        check=True, capture_output=True,
    )  # fmt: skip
    hook("SessionStart", "session_start", {
        **base, "hook_event_name": "SessionStart", "source": "startup"
    })  # fmt: skip
    hook("PostToolUseFailure", "post_tool_use_failure", {
        **base, "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
        "tool_input": {"command": f"deploy --token {s['github']}"},
        "error": f"Exit code 1\nauth header was Bearer {s['openai']}",
    })  # fmt: skip
    hook("PostToolUse", "post_tool_use", {
        **base, "hook_event_name": "PostToolUse", "tool_name": "Write",
        "tool_input": {"file_path": str(repo / f"keys-{s['aws']}.txt"), "content": "x"},
        "tool_response": {"filePath": str(repo / "x")},
    })  # fmt: skip
    (repo / ".waymark.toml").write_text("[output]\ntrim_over = 1000\n")
    hook("PostToolUse", "post_tool_use", {  # a long output kept whole for `waymark output`
        **base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": f"env | grep {s['slack']}"},
        "tool_response": {"stdout": f"TOKEN={s['github']}\n" + "line\n" * 400, "stderr": ""},
    })  # fmt: skip
    hook("PostToolUse", "post_tool_use", {  # a command run while the failure is open
        **base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": f"curl -H 'Authorization: Bearer {s['openai']}' localhost"},
        "tool_response": {"stdout": "ok", "interrupted": False},
    })  # fmt: skip
    hook("PostToolUse", "post_tool_use", {  # the failed command passes: its fix is recorded
        **base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": f"deploy --token {s['github']}"},
        "tool_response": {"stdout": "ok", "interrupted": False},
    })  # fmt: skip
    hook(
        "PostCompact",
        "post_compact",
        {  # a summary that names none of the session's facts
            **base,
            "hook_event_name": "PostCompact",
            "trigger": "auto",
            "compact_summary": f"<summary>we talked; key {s['openai']}</summary>",
        },
        client="codex",
    )  # fmt: skip  (Codex: kept for the next prompt's packet)
    hook("SessionEnd", "session_end", {
        **base, "hook_event_name": "SessionEnd", "reason": f"x {s['slack']}"
    })  # fmt: skip
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")

    # Every free-text column was really written...
    for table, columns in FREE_TEXT.items():
        for column in columns:
            filled = conn.execute(
                f'SELECT count(*) FROM "{table}" WHERE "{column}" IS NOT NULL'
                f" AND \"{column}\" NOT IN ('', '[]', '{{}}')"
            ).fetchone()[0]
            assert filled, f"the test wrote nothing into {table}.{column}"
    # ...and no secret is anywhere in the file or its WAL.
    for path in waymark_home.glob("waymark.db*"):
        data = path.read_bytes()
        for name, secret in SECRETS.items():
            assert secret.encode() not in data, f"{name} secret in {path.name}"
