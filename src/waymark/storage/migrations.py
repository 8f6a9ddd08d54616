"""The schema, as ordered named steps.

Each step runs in the same transaction as the row that records it in `schema_migrations`.
Append new steps at the end; never edit one that has shipped. `PRAGMA user_version` mirrors
the number of applied steps so that opening an up-to-date file costs one pragma read.

Over 600 lines and kept whole: it is data, not logic (every shipped step's SQL, never edited
once shipped), read in order as the schema's history; split by era, a reader would hunt
across files for where a table got its columns.
"""

from __future__ import annotations

M001_INITIAL = """
CREATE TABLE projects (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('path', 'named')),
    name        TEXT UNIQUE,
    root        TEXT UNIQUE,
    created_at  TEXT NOT NULL,
    CHECK ((kind = 'path' AND root IS NOT NULL) OR (kind = 'named' AND name IS NOT NULL))
);

CREATE TABLE memories (
    rowid         INTEGER PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    project_id    TEXT REFERENCES projects(id),
    type          TEXT NOT NULL,
    title         TEXT NOT NULL,
    content       TEXT NOT NULL,
    scope_type    TEXT NOT NULL
                  CHECK (scope_type IN ('project', 'directory', 'file', 'symbol', 'global')),
    scope_target  TEXT,
    tags          TEXT NOT NULL DEFAULT '[]',
    priority      INTEGER NOT NULL DEFAULT 0,
    pinned        INTEGER NOT NULL DEFAULT 0,
    status        TEXT NOT NULL DEFAULT 'active'
                  CHECK (status IN ('active', 'superseded', 'archived', 'erased')),
    actor         TEXT NOT NULL CHECK (actor IN ('user', 'agent', 'hook', 'import')),
    client        TEXT,
    session_id    TEXT,
    source_ref    TEXT,
    evidence      TEXT NOT NULL DEFAULT '[]',
    git_branch    TEXT,
    valid_until   TEXT,
    event_time    TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    key           TEXT,
    supersedes    TEXT REFERENCES memories(id),
    superseded_by TEXT REFERENCES memories(id),
    erased_reason TEXT,
    CHECK ((scope_type = 'global') = (project_id IS NULL))
);
CREATE INDEX memories_by_project ON memories (project_id, status, created_at DESC, id DESC);
CREATE INDEX memories_by_hash ON memories (project_id, content_hash) WHERE status = 'active';
CREATE INDEX memories_by_key ON memories (project_id, key) WHERE key IS NOT NULL;

CREATE TABLE events (
    seq         INTEGER PRIMARY KEY,
    at          TEXT NOT NULL,
    op          TEXT NOT NULL,
    project_id  TEXT,
    memory_id   TEXT,
    actor       TEXT,
    session_id  TEXT,
    detail      TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX events_by_memory ON events (memory_id);

-- Lexical index over what a person would search for. External content: the text lives once,
-- in memories; triggers keep the index in the same transaction as every write.
CREATE VIRTUAL TABLE memories_fts USING fts5 (
    title, content, tags, target,
    content = 'memories_fts_source', content_rowid = 'rowid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1);

CREATE VIEW memories_fts_source AS
    SELECT rowid,
           title,
           content,
           (SELECT group_concat(value, ' ') FROM json_each(memories.tags)) AS tags,
           coalesce(scope_target, '') AS target
    FROM memories;

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, title, content, tags, target)
    VALUES (new.rowid, new.title, new.content,
            (SELECT group_concat(value, ' ') FROM json_each(new.tags)),
            coalesce(new.scope_target, ''));
END;

CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, title, content, tags, target)
    VALUES ('delete', old.rowid, old.title, old.content,
            (SELECT group_concat(value, ' ') FROM json_each(old.tags)),
            coalesce(old.scope_target, ''));
END;

CREATE TRIGGER memories_fts_update AFTER UPDATE OF title, content, tags, scope_target
ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, title, content, tags, target)
    VALUES ('delete', old.rowid, old.title, old.content,
            (SELECT group_concat(value, ' ') FROM json_each(old.tags)),
            coalesce(old.scope_target, ''));
    INSERT INTO memories_fts (rowid, title, content, tags, target)
    VALUES (new.rowid, new.title, new.content,
            (SELECT group_concat(value, ' ') FROM json_each(new.tags)),
            coalesce(new.scope_target, ''));
END;
"""

M002_VECTORS_LINKS_ACCESS = """
-- Canonical embeddings: packed float32, tagged with the model and the hash of the exact text
-- embedded, so unchanged text is never embedded twice. Any vec0 index is rebuilt from here.
CREATE TABLE vectors (
    memory_rowid  INTEGER NOT NULL REFERENCES memories(rowid) ON DELETE CASCADE,
    model         TEXT NOT NULL,
    dim           INTEGER NOT NULL,
    text_hash     TEXT NOT NULL,
    vector        BLOB NOT NULL,
    PRIMARY KEY (memory_rowid, model)
);

-- Erasing a memory drops everything derived from its payload.
CREATE TRIGGER memories_erase_vectors AFTER UPDATE OF status ON memories
WHEN new.status = 'erased' BEGIN
    DELETE FROM vectors WHERE memory_rowid = new.rowid;
END;

CREATE TABLE links (
    src         TEXT NOT NULL REFERENCES memories(id),
    dst         TEXT NOT NULL REFERENCES memories(id),
    kind        TEXT NOT NULL CHECK (kind IN
                ('related', 'causes', 'solves', 'contradicts', 'depends_on', 'supersedes')),
    created_at  TEXT NOT NULL,
    actor       TEXT,
    PRIMARY KEY (src, dst, kind),
    CHECK (src <> dst)
);
CREATE INDEX links_by_dst ON links (dst);

-- Use of a memory (injected into a packet, or opened), never mere retrieval.
CREATE TABLE memory_use (
    memory_rowid  INTEGER PRIMARY KEY REFERENCES memories(rowid) ON DELETE CASCADE,
    uses          INTEGER NOT NULL DEFAULT 0,
    last_used     TEXT NOT NULL
);
"""

M003_VOCAB_SETTINGS = """
-- The index's own term list, for repairing typos in queries.
CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab (memories_fts, 'row');

-- User settings (recall half-life, budgets, capture policy): JSON values by dotted key.
CREATE TABLE settings (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
"""

M004_CHECKPOINTS = """
-- A checkpoint is one task in one project; its revisions are immutable.
CREATE TABLE checkpoints (
    id                TEXT PRIMARY KEY,
    project_id        TEXT NOT NULL REFERENCES projects(id),
    status            TEXT NOT NULL CHECK (status IN ('active', 'completed', 'abandoned')),
    current_revision  TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
);
CREATE INDEX checkpoints_by_project ON checkpoints (project_id, status, updated_at DESC);

CREATE TABLE checkpoint_revisions (
    id             TEXT PRIMARY KEY,
    checkpoint_id  TEXT NOT NULL REFERENCES checkpoints(id),
    seq            INTEGER NOT NULL,
    operation      TEXT NOT NULL,
    status         TEXT NOT NULL,
    body           TEXT NOT NULL,
    tokens         INTEGER NOT NULL,
    actor          TEXT NOT NULL,
    client         TEXT,
    session_id     TEXT,
    created_at     TEXT NOT NULL,
    UNIQUE (checkpoint_id, seq)
);

-- "Handoff needed": a session changed files and ended without a checkpoint. Shown at the next
-- SessionStart; cleared only by a save that really wrote a revision.
CREATE TABLE handoff_markers (
    project_id   TEXT NOT NULL REFERENCES projects(id),
    session_id   TEXT NOT NULL,
    reason       TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    cleared_at   TEXT,
    cleared_by   TEXT,
    PRIMARY KEY (project_id, session_id)
);
"""

M005_CAPTURE = """
-- Hooks capture only in projects the user enabled (or every git repository, by setting).
CREATE TABLE project_capture (
    project_id  TEXT PRIMARY KEY REFERENCES projects(id),
    enabled     INTEGER NOT NULL,
    changed_at  TEXT NOT NULL
);

-- The warm vector cache diffs (rowid, text_hash) per model; this makes that an index scan.
CREATE INDEX vectors_by_model ON vectors (model, dim, memory_rowid, text_hash);
"""

M006_SESSIONS = """
-- One row per client session in an enabled project: what the hooks know about it.
CREATE TABLE sessions (
    id               TEXT PRIMARY KEY,
    client           TEXT NOT NULL,
    project_id       TEXT NOT NULL REFERENCES projects(id),
    started_at       TEXT NOT NULL,
    ended_at         TEXT,
    end_reason       TEXT,
    git_head_start   TEXT,
    git_head_end     TEXT,
    git_dirty_seen   TEXT,
    last_shell_at    TEXT,
    last_change_at   TEXT,
    asked_for        TEXT
);
CREATE INDEX sessions_by_project ON sessions (project_id, started_at DESC);

-- The per-session ledger: files edited and failed commands. No transcript, no tool output
-- beyond a bounded, redacted tail of an error.
CREATE TABLE session_ledger (
    seq         INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions(id),
    at          TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('edit', 'failure')),
    path        TEXT,
    command     TEXT,
    exit_code   INTEGER,
    error_tail  TEXT
);
CREATE INDEX ledger_by_session ON session_ledger (session_id, seq);

-- Memories already put in front of the model in a session: never injected twice.
CREATE TABLE session_injected (
    session_id  TEXT NOT NULL REFERENCES sessions(id),
    memory_id   TEXT NOT NULL,
    PRIMARY KEY (session_id, memory_id)
);
"""

M007_READ_PATH_INDEXES = """
-- SessionStart's rules: pinned memories and high-priority rule types, best first.
CREATE INDEX memories_rules ON memories (project_id, pinned DESC, priority DESC,
                                         created_at DESC, id DESC)
WHERE status = 'active'
  AND (pinned = 1 OR (type IN ('convention', 'warning', 'decision', 'preference')
                      AND priority > 0));

-- Memories scoped to a path: exact targets and prefix ranges (symbols, subdirectories).
CREATE INDEX memories_by_target ON memories (project_id, scope_target)
WHERE status = 'active' AND scope_target IS NOT NULL;
"""

M008_LIVE_INDEX = """
-- BM25 candidates are filtered by project and status: thousands of rowid lookups per query.
-- This small covering index answers them without touching the wide rows (19.7 -> 12.9 ms
-- mean per lexical query at 100k memories); recall names it with INDEXED BY.
CREATE INDEX memories_live ON memories (rowid, project_id, status);
"""

M009_COVERING_TARGETS = """
-- Path recall and the prompt hook's file memories read only these columns of the path-scoped
-- memories they find (often hundreds, for a directory near the root): covered here, they
-- cost no lookups of the wide rows (a prompt naming one file at 100k: 14.7 ms -> 0.3 ms).
DROP INDEX memories_by_target;
CREATE INDEX memories_by_target ON memories (project_id, scope_target, priority, created_at,
                                             id, valid_until)
WHERE status = 'active' AND scope_target IS NOT NULL;
"""

M010_PROJECT_IDENTITY = """
-- What survives a move or rename of the repository (its first commit, or a plain folder's
-- inode): a project whose root vanished is found again by it. `notice` holds the one line the
-- next packet says about such a change (moved, renamed, now named), then is cleared.
ALTER TABLE projects ADD COLUMN identity TEXT;
ALTER TABLE projects ADD COLUMN notice TEXT;
CREATE INDEX projects_by_identity ON projects (identity) WHERE identity IS NOT NULL;
"""

M011_CAPTURE_MODES = """
-- Capture modes: on (inject and record), read-only (inject, never record), off (silent).
-- A project's mode is here (enabled = 0 is off); a session may override it.
ALTER TABLE project_capture ADD COLUMN mode TEXT NOT NULL DEFAULT 'on'
    CHECK (mode IN ('on', 'read-only', 'off'));
ALTER TABLE sessions ADD COLUMN capture_mode TEXT
    CHECK (capture_mode IN ('on', 'read-only', 'off'));
"""

M012_RULES_COVER_EXPIRY = """
-- SessionStart counts the rules it leaves out: with valid_until in the index the count reads
-- the index alone (at 100k memories, 6,743 rules: 14.5 ms -> about 1 ms).
DROP INDEX memories_rules;
CREATE INDEX memories_rules ON memories (project_id, pinned DESC, priority DESC,
                                         created_at DESC, id DESC, valid_until)
WHERE status = 'active'
  AND (pinned = 1 OR (type IN ('convention', 'warning', 'decision', 'preference')
                      AND priority > 0));
"""

M013_BRANCHES = """
-- Branch-aware memory: the branch a session started on (the next packet says when it
-- changed) and the branch a checkpoint revision was saved on (labelled when it differs).
ALTER TABLE sessions ADD COLUMN git_branch_start TEXT;
ALTER TABLE checkpoint_revisions ADD COLUMN git_branch TEXT;
"""

M014_COMMAND_FAILURES = """
-- Failed shell commands, per project, so the next run of one brings its failure (PreToolUse)
-- and how it was fixed once a later run passed. `head` is the command's first plain words (no
-- secret can be in it: see base/shell.py), the lookup key; `command` and `error_tail`
-- are redacted and cut like the ledger's. `fix` is a JSON list of the files the passing
-- session edited after the failure.
CREATE TABLE command_failures (
    id              INTEGER PRIMARY KEY,
    project_id      TEXT NOT NULL REFERENCES projects(id),
    session_id      TEXT NOT NULL,
    head            TEXT NOT NULL,
    command         TEXT NOT NULL,
    exit_code       INTEGER,
    error_tail      TEXT,
    failed_at       TEXT NOT NULL,
    passed_at       TEXT,
    passed_session  TEXT,
    fix             TEXT
);
CREATE INDEX command_failures_by_head ON command_failures (project_id, head, id DESC);
"""

M015_INJECTIONS = """
-- Injection receipts: every line a hook put in front of the model, one row each. `packet`
-- groups the lines of one injection; `item` is the memory id (or checkpoint id, `failure:N`)
-- a line shows, NULL for a line of no record (git changes, the ledger); `why` says what
-- chose it (pinned, a path match, a score). No text of the line itself: it is in the memory.
CREATE TABLE injections (
    seq         INTEGER PRIMARY KEY,
    packet      TEXT NOT NULL,
    at          TEXT NOT NULL,
    project_id  TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    hook        TEXT NOT NULL,
    kind        TEXT NOT NULL,
    section     TEXT NOT NULL,
    item        TEXT,
    why         TEXT NOT NULL,
    tokens      INTEGER NOT NULL
);
CREATE INDEX injections_by_session ON injections (session_id, seq);
CREATE INDEX injections_by_project ON injections (project_id, seq);
"""

M016_SESSION_STEPS = """
-- The session's work map: each tool call as tool, target (a project-relative path, or a
-- command's program and subcommand: never its arguments) and outcome, the newest 60 per
-- session. After a compaction the packet replays it, so the agent knows what it tried.
CREATE TABLE session_steps (
    seq         INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions(id),
    at          TEXT NOT NULL,
    tool        TEXT NOT NULL,
    target      TEXT,
    outcome     TEXT NOT NULL
);
CREATE INDEX session_steps_by_session ON session_steps (session_id, seq);
"""

M017_TOOL_OUTPUTS = """
-- Verbose tool output kept out of the model's context (opt-in, `[output]` in .waymark.toml):
-- the model got a head, the error lines and a tail; the whole output is here, redacted,
-- until `expires_at`, and `waymark output ID` (or the MCP `history` tool) returns it.
CREATE TABLE tool_outputs (
    id          TEXT PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects(id),
    session_id  TEXT NOT NULL,
    at          TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    tool        TEXT NOT NULL,
    command     TEXT,
    output      TEXT NOT NULL,
    chars       INTEGER NOT NULL,
    shown_chars INTEGER NOT NULL
);
CREATE INDEX tool_outputs_by_expiry ON tool_outputs (expires_at);
"""

M018_CANDIDATES = """
-- The review queue: what Waymark infers (a command's repeated failure and fix, an import
-- from a client's own memory, a consolidation, feedback that a memory is stale) waits here
-- until a person or agent approves it; nothing here is recalled. `fields` are the proposed
-- memory's fields as JSON (redacted when proposed, validated again on approval); `action`
-- is what approval does: add a memory, supersede the `sources`, or archive them.
-- `fingerprint` (a SHA-256) names the inference, so the same one is proposed once per project
-- and a rejected one is not proposed again.
CREATE TABLE candidates (
    id           TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects(id),
    kind         TEXT NOT NULL,
    action       TEXT NOT NULL CHECK (action IN ('add', 'supersede', 'archive')),
    fields       TEXT NOT NULL,
    sources      TEXT NOT NULL DEFAULT '[]',
    evidence     TEXT NOT NULL DEFAULT '[]',
    reason       TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'pending'
                 CHECK (status IN ('pending', 'approved', 'rejected')),
    memory_id    TEXT REFERENCES memories(id),
    review_note  TEXT,
    reviewed_by  TEXT,
    reviewed_at  TEXT,
    session_id   TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    UNIQUE (project_id, fingerprint)
);
CREATE INDEX candidates_by_status ON candidates (project_id, status, updated_at DESC);
"""

M019_FEEDBACK = """
-- What agents and people said of a memory after a recall: helpful, not helpful, stale or
-- wrong, one row each, with the recall's words (`terms`, redacted first, JSON) when known.
-- Ranking moves a memory by one bounded multiplier, and only for a query close to the one
-- the verdict was given on; stale and wrong also propose the memory's archive for review.
CREATE TABLE memory_feedback (
    seq           INTEGER PRIMARY KEY,
    memory_rowid  INTEGER NOT NULL REFERENCES memories(rowid) ON DELETE CASCADE,
    verdict       TEXT NOT NULL CHECK (verdict IN ('helpful', 'not_helpful', 'stale', 'wrong')),
    terms         TEXT NOT NULL DEFAULT '[]',
    actor         TEXT,
    session_id    TEXT,
    at            TEXT NOT NULL
);
CREATE INDEX memory_feedback_by_memory ON memory_feedback (memory_rowid);
"""

M020_LEARNED = """
-- Insights (approved from a pattern in the error log) and the rules they become: votes move
-- importance and confidence (the memory is archived at zero); a rule is pinned while active,
-- counts the times it was used (fires) and helped (successes), and is suspended when it
-- rarely helps. Retired rows stay, with their counts.
CREATE TABLE learned (
    memory_id   TEXT PRIMARY KEY REFERENCES memories(id),
    kind        TEXT NOT NULL CHECK (kind IN ('insight', 'rule')),
    importance  INTEGER NOT NULL DEFAULT 1,
    confidence  INTEGER NOT NULL DEFAULT 1,
    fires       INTEGER NOT NULL DEFAULT 0,
    successes   INTEGER NOT NULL DEFAULT 0,
    status      TEXT NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'suspended', 'retired')),
    updated_at  TEXT NOT NULL
);
"""

M021_AGENT_SCOPES = """
-- A memory may belong to a named agent (a Claude Code subagent type, a Codex profile), in the
-- project (agent-workspace) or global (agent-global) tier; NULL is everyone's. Reads by the
-- main session skip agents' memories, so the read-path indexes carry `agent` to stay covering.
ALTER TABLE memories ADD COLUMN agent TEXT;
DROP INDEX memories_live;
CREATE INDEX memories_live ON memories (rowid, project_id, status, agent);
DROP INDEX memories_rules;
CREATE INDEX memories_rules ON memories (project_id, pinned DESC, priority DESC,
                                         created_at DESC, id DESC, valid_until, agent)
WHERE status = 'active'
  AND (pinned = 1 OR (type IN ('convention', 'warning', 'decision', 'preference')
                      AND priority > 0));
DROP INDEX memories_by_target;
CREATE INDEX memories_by_target ON memories (project_id, scope_target, priority, created_at,
                                             id, valid_until, agent)
WHERE status = 'active' AND scope_target IS NOT NULL;
"""

M022_OBSERVATIONS = """
-- Implementation evidence on a memory: what a caller reports (requested, implemented, a test
-- passed or failed), with up to 10 role-tagged links to project files that Waymark hashed
-- itself (JSON: role, path, locator?, sha256, size, unhashed?). Never the files' text. Rows
-- are immutable; a newer observation is a new row. Erasing the memory deletes them.
CREATE TABLE observations (
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    memory_id   TEXT NOT NULL REFERENCES memories(id),
    project_id  TEXT NOT NULL REFERENCES projects(id),
    status      TEXT NOT NULL CHECK (status IN ('REQUESTED', 'REPORTED_IMPLEMENTED',
                                                'REPORTED_PASS', 'REPORTED_FAIL')),
    links       TEXT NOT NULL DEFAULT '[]',
    note        TEXT,
    actor       TEXT NOT NULL,
    session_id  TEXT,
    created_at  TEXT NOT NULL
);
CREATE INDEX observations_by_memory ON observations (memory_id, project_id, seq DESC);
CREATE TRIGGER observations_immutable BEFORE UPDATE ON observations
BEGIN
    SELECT RAISE(ABORT, 'observations are immutable: add a new one');
END;
"""

M023_CODE_MAP = """
-- The code map's snapshots: one per refresh that found the tree changed, in the order they
-- were taken (`seq`), with the Git state then (HEAD, its parent, dirty or clean; NULL outside
-- Git) and what the walk left out, by reason (JSON counts). Only the latest few keep their
-- files; an older snapshot keeps its header. Both tables are immutable (triggers), and
-- derived: `waymark map refresh` rebuilds them from the tree.
CREATE TABLE map_snapshots (
    seq          INTEGER PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    project_id   TEXT NOT NULL REFERENCES projects(id),
    git_head     TEXT,
    git_parent   TEXT,
    git_dirty    INTEGER,
    files        INTEGER NOT NULL,
    bytes        INTEGER NOT NULL,
    skipped      TEXT NOT NULL DEFAULT '{}',
    seconds      REAL NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX map_snapshots_by_project ON map_snapshots (project_id, seq DESC);
-- A file of a snapshot: its path relative to the root, language (NULL: recorded by digest
-- only), SHA-256, size, lines and mtime (what an incremental refresh compares first).
CREATE TABLE map_files (
    snapshot_seq INTEGER NOT NULL REFERENCES map_snapshots(seq),
    path         TEXT NOT NULL,
    language     TEXT,
    sha256       TEXT NOT NULL,
    size         INTEGER NOT NULL,
    lines        INTEGER NOT NULL,
    mtime_ns     INTEGER NOT NULL,
    PRIMARY KEY (snapshot_seq, path)
) WITHOUT ROWID;
CREATE TRIGGER map_snapshots_immutable BEFORE UPDATE ON map_snapshots
BEGIN
    SELECT RAISE(ABORT, 'map snapshots are immutable: take a new one');
END;
CREATE TRIGGER map_files_immutable BEFORE UPDATE ON map_files
BEGIN
    SELECT RAISE(ABORT, 'map snapshots are immutable: take a new one');
END;
"""

M024_CODE_STRUCTURE = """
-- What the map parsed out of a file (Python so far), keyed by the file's SHA-256: a file
-- unchanged between snapshots is parsed, and stored, once. Declarations with their qualified
-- names and line spans; references (imports and explicit calls) as written, with the
-- declaration they sit in. Never source text. Derived; a digest no kept snapshot holds any
-- more is deleted with its rows.
CREATE TABLE map_declarations (
    sha256       TEXT NOT NULL,
    qualname     TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('class', 'function', 'method')),
    start_line   INTEGER NOT NULL,
    end_line     INTEGER NOT NULL,
    digest       TEXT NOT NULL,  -- SHA-256 of the declaration's own text: an edit shows
    PRIMARY KEY (sha256, qualname, start_line)
) WITHOUT ROWID;
CREATE TABLE map_references (
    sha256       TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('import', 'call')),
    source       TEXT,
    target       TEXT NOT NULL,
    line         INTEGER NOT NULL
);
CREATE INDEX map_references_by_digest ON map_references (sha256);
-- The digests parsed (a file with no declarations and no references is parsed too).
CREATE TABLE map_parsed (
    sha256       TEXT PRIMARY KEY,
    language     TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX map_files_by_digest ON map_files (sha256);
"""

M025_MAP_LANGUAGES_EDGES = """
-- The map parses all ten of its languages: declarations take the kinds of types (struct,
-- interface, trait, enum) too, and references the package or namespace a file declares
-- and what a JavaScript/TypeScript file re-exports (`export ... from`).
-- The parsed structure is derived, keyed by content: it is dropped here and parsed again by
-- the next refresh. The resolved relationships of each project's newest snapshot are kept
-- (`map_edges`), so a hook finds a file's dependents by index, without a parser;
-- `map_resolved` marks a snapshot whose relationships were resolved (it may have none).
DROP TABLE map_declarations;
DROP TABLE map_references;
DELETE FROM map_parsed;
CREATE TABLE map_declarations (
    sha256       TEXT NOT NULL,
    qualname     TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('class', 'struct', 'interface', 'trait', 'enum',
                                               'function', 'method')),
    start_line   INTEGER NOT NULL,
    end_line     INTEGER NOT NULL,
    digest       TEXT NOT NULL,
    PRIMARY KEY (sha256, qualname, start_line)
) WITHOUT ROWID;
CREATE INDEX map_declarations_by_name ON map_declarations (qualname);
CREATE TABLE map_references (
    sha256       TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('import', 'call', 'package', 'export')),
    source       TEXT,
    target       TEXT NOT NULL,
    line         INTEGER NOT NULL
);
CREATE INDEX map_references_by_digest ON map_references (sha256);
CREATE TABLE map_edges (
    snapshot_seq INTEGER NOT NULL REFERENCES map_snapshots(seq),
    kind         TEXT NOT NULL CHECK (kind IN ('import', 'call')),
    from_node    TEXT NOT NULL,  -- a file, or path::Qualified.name
    to_path      TEXT NOT NULL,
    to_node      TEXT NOT NULL,
    line         INTEGER NOT NULL
);
CREATE INDEX map_edges_into ON map_edges (snapshot_seq, to_path, to_node);
CREATE TABLE map_resolved (
    snapshot_seq INTEGER PRIMARY KEY REFERENCES map_snapshots(seq)
);
"""

M026_PROJECT_ALIASES = """
-- What else addresses a project: a directory that a .waymark.toml named it from (so a branch
-- or a checkout without the file, or the file removed, still finds it), an old name.
CREATE TABLE project_aliases (
    kind        TEXT NOT NULL CHECK (kind IN ('root', 'name')),
    alias       TEXT NOT NULL,
    project_id  TEXT NOT NULL REFERENCES projects(id),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (kind, alias)
) WITHOUT ROWID;
CREATE INDEX project_aliases_by_project ON project_aliases (project_id);
"""

M027_CAPTURE_CONFIRM = """
-- The confirm mode: hooks capture as in `on`, and the agent's own writes (MCP remember,
-- forget) go to the review queue. Stored beside the mode, whose CHECK predates it.
ALTER TABLE project_capture ADD COLUMN confirm INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN capture_confirm INTEGER;
-- Corrections among the rules (a rule that supersedes another), which the packet reads apart
-- so that a tight budget or many older rules cannot hide one.
CREATE INDEX memories_corrections ON memories (project_id, created_at DESC, id DESC)
WHERE status = 'active' AND supersedes IS NOT NULL
  AND (pinned = 1 OR (type IN ('convention', 'warning', 'decision', 'preference')
                      AND priority > 0));
"""

M028_TEAM_SYNC = """
-- Team sync (#25): where this replica stands with each team store it syncs with. `machine`
-- is this replica's id in the team's events; `pushed_seq` the last local events.seq sent
-- (the outbox is the audit log after it); `pulled_seq` the last team event applied here.
CREATE TABLE team_sync (
    store       TEXT PRIMARY KEY,
    machine     TEXT NOT NULL,
    pushed_seq  INTEGER NOT NULL DEFAULT 0,
    pulled_seq  INTEGER NOT NULL DEFAULT 0,
    last_sync   TEXT
) WITHOUT ROWID;
"""

M029_PERSONAL = """
-- Personal memories of a shared project (#25): they never leave this machine. A revision
-- of a personal memory is personal too; `waymark share` (through review) makes one the team's.
CREATE TABLE personal_memories (
    memory_id   TEXT PRIMARY KEY REFERENCES memories(id),
    created_at  TEXT NOT NULL
) WITHOUT ROWID;

-- A candidate may share a personal memory with the team: its CHECK learns `share` (SQLite
-- changes a CHECK only by building the table again; every row is kept as it was).
CREATE TABLE candidates_m029 (
    id           TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects(id),
    kind         TEXT NOT NULL,
    action       TEXT NOT NULL CHECK (action IN ('add', 'supersede', 'archive', 'share')),
    fields       TEXT NOT NULL,
    sources      TEXT NOT NULL DEFAULT '[]',
    evidence     TEXT NOT NULL DEFAULT '[]',
    reason       TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'pending'
                 CHECK (status IN ('pending', 'approved', 'rejected')),
    memory_id    TEXT REFERENCES memories(id),
    review_note  TEXT,
    reviewed_by  TEXT,
    reviewed_at  TEXT,
    session_id   TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    UNIQUE (project_id, fingerprint)
);
INSERT INTO candidates_m029 SELECT id, project_id, kind, action, fields, sources, evidence,
    reason, fingerprint, status, memory_id, review_note, reviewed_by, reviewed_at, session_id,
    created_at, updated_at FROM candidates;
DROP TABLE candidates;
ALTER TABLE candidates_m029 RENAME TO candidates;
CREATE INDEX candidates_by_status ON candidates (project_id, status, updated_at DESC);
"""

M030_CHECKPOINT_CONFLICTS = """
-- A team member's checkpoint revision made from the revision this machine also revised
-- (#25) waits for review as a candidate whose approval puts it on top: its CHECK learns
-- `checkpoint` (the table is built again, every row kept as it was).
CREATE TABLE candidates_m030 (
    id           TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects(id),
    kind         TEXT NOT NULL,
    action       TEXT NOT NULL
                 CHECK (action IN ('add', 'supersede', 'archive', 'share', 'checkpoint')),
    fields       TEXT NOT NULL,
    sources      TEXT NOT NULL DEFAULT '[]',
    evidence     TEXT NOT NULL DEFAULT '[]',
    reason       TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'pending'
                 CHECK (status IN ('pending', 'approved', 'rejected')),
    memory_id    TEXT REFERENCES memories(id),
    review_note  TEXT,
    reviewed_by  TEXT,
    reviewed_at  TEXT,
    session_id   TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    UNIQUE (project_id, fingerprint)
);
INSERT INTO candidates_m030 SELECT id, project_id, kind, action, fields, sources, evidence,
    reason, fingerprint, status, memory_id, review_note, reviewed_by, reviewed_at, session_id,
    created_at, updated_at FROM candidates;
DROP TABLE candidates;
ALTER TABLE candidates_m030 RENAME TO candidates;
CREATE INDEX candidates_by_status ON candidates (project_id, status, updated_at DESC);
"""

# (name, sql) in order. The schema version is the number of steps.
M031_EVENTS_BY_SESSION = """
-- A session's own events (the dashboard's session page: Stop decisions, checkpoint saves).
CREATE INDEX events_by_session ON events (session_id, seq) WHERE session_id IS NOT NULL;
"""

M032_MEMORIES_BY_KIND = """
-- A project's memories counted by state and type from the index alone (the dashboard's
-- overview, `waymark status`): 105 ms at 100,000 memories through the table, ~10 here.
CREATE INDEX memories_by_kind ON memories (project_id, status, type);
"""

M033_ERROR_SIGNATURES = """
-- Failure-time recall: a failed command's error signature (curation/signature.py: the
-- program and the error's shape, no paths, numbers or ids), so the next failure of the same
-- kind finds what fixed it whatever the command's arguments; `tried` is a JSON list of the
-- commands the session ran successfully after the failure (redacted, the last few), the
-- fix when the command then passed. Rows from before have no signature until the first
-- failure of their project fills it in (the partial index finds them, and is empty after).
ALTER TABLE command_failures ADD COLUMN signature TEXT;
ALTER TABLE command_failures ADD COLUMN tried TEXT;
CREATE INDEX command_failures_by_signature ON command_failures (project_id, signature, id DESC)
WHERE signature IS NOT NULL;
CREATE INDEX command_failures_unsigned ON command_failures (project_id) WHERE signature IS NULL;
CREATE INDEX command_failures_open ON command_failures (session_id) WHERE passed_at IS NULL;
"""

M034_OUTCOMES = """
-- Outcomes from git (curation/outcomes.py): a decision, lesson or checkpoint that cites
-- files or commits, linked to the change that followed it (its session's commits touching
-- them, or the commits it cites). `state` is linked, held (N later commits touched the same
-- files and it stands) or reverted (`git revert`, or its lines restored); `set_by` is git,
-- or person when someone settled it by hand (git then leaves it alone).
CREATE TABLE outcomes (
    item_id      TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects(id),
    kind         TEXT NOT NULL,
    commits      TEXT NOT NULL,
    files        TEXT NOT NULL,
    state        TEXT NOT NULL,
    later        INTEGER NOT NULL DEFAULT 0,
    reverted_by  TEXT,
    set_by       TEXT NOT NULL DEFAULT 'git',
    checked_at   TEXT NOT NULL
);
CREATE INDEX outcomes_by_state ON outcomes (project_id, state);
"""

M035_MEASURED_USE = """
-- Measured use of what the packets show (curation/use.py): a shown item the session then
-- used (its id cited in a tool call or the agent's last message, a file it names edited, a
-- command it names run, feedback on it), one row per session and item with how. A memory's
-- `shown` and `used` count since this migration (`uses` counted showings before): one shown
-- often and never used decays faster in ranking.
CREATE TABLE injected_used (
    session_id  TEXT NOT NULL,
    item        TEXT NOT NULL,
    how         TEXT NOT NULL,
    at          TEXT NOT NULL,
    PRIMARY KEY (session_id, item)
);
ALTER TABLE memory_use ADD COLUMN shown INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memory_use ADD COLUMN used INTEGER NOT NULL DEFAULT 0;
-- Per project and packet section, its measured use over the last 30 days and the share of
-- its token budget it keeps (1.0; less for a section whose items are never used), refreshed
-- at each SessionEnd; the packets read it with one probe.
CREATE TABLE section_use (
    project_id  TEXT NOT NULL,
    section     TEXT NOT NULL,
    shown       INTEGER NOT NULL,
    used        INTEGER NOT NULL,
    factor      REAL NOT NULL,
    at          TEXT NOT NULL,
    PRIMARY KEY (project_id, section)
);
"""

M036_COMPACTION = """
-- After a compaction: the session's recorded facts (files edited, failures, decisions it
-- relied on, the checkpoint's objective and next action) that the client's summary no
-- longer mentions (handoff/compaction.py), JSON, until a packet has said them.
ALTER TABLE sessions ADD COLUMN compact_dropped TEXT;
"""

M037_NOTES = """
-- The repository's own notes as knowledge (codemap/notes.py): each Markdown section of the
-- files `[knowledge] paths` names, with its path, heading path, line span and SHA-256, and
-- the file's hash and stat when it was read (a changed file is RECHECK on read). The text
-- is searchable (redacted, in notes_fts, rowid = notes.id) and never copied into memories.
CREATE TABLE notes (
    id           INTEGER PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects(id),
    path         TEXT NOT NULL,
    heading      TEXT NOT NULL,
    start_line   INTEGER NOT NULL,
    end_line     INTEGER NOT NULL,
    sha256       TEXT NOT NULL,
    file_sha256  TEXT NOT NULL,
    file_stat    TEXT NOT NULL,
    kind         TEXT NOT NULL DEFAULT 'note',
    indexed_at   TEXT NOT NULL
);
CREATE INDEX notes_by_path ON notes (project_id, path);
CREATE VIRTUAL TABLE notes_fts USING fts5 (
    heading, body, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""

M038_PROCEDURES = """
-- Procedures, skills, agent profiles and prompts the repository holds (codemap/notes.py),
-- indexed as notes of their own kind, with the trigger their front matter gives.
ALTER TABLE notes ADD COLUMN description TEXT;
CREATE INDEX notes_by_kind ON notes (project_id, kind);
"""

M039_NOTE_FOLDERS = """
-- Folders of Markdown outside the repository (an Obsidian vault) a project opted in to
-- (`waymark notes add PATH`), read-only; and the wiki links between their notes, followed
-- as relations when a note is recalled.
CREATE TABLE note_folders (
    project_id  TEXT NOT NULL REFERENCES projects(id),
    path        TEXT NOT NULL,
    added_at    TEXT NOT NULL,
    PRIMARY KEY (project_id, path)
);
CREATE TABLE note_links (
    project_id  TEXT NOT NULL,
    src         TEXT NOT NULL,
    dst         TEXT NOT NULL,
    PRIMARY KEY (project_id, src, dst)
);
"""

# A hook event the warm server recorded for a hook, by the hook's delivery key: the hook's own
# fallback after a missed deadline then finds it claimed and records nothing twice.
M040_HOOK_DELIVERIES = """
CREATE TABLE hook_deliveries (
    key  TEXT PRIMARY KEY,
    at   TEXT NOT NULL
) WITHOUT ROWID;
"""

# A dbt project's artifacts (codemap/dbt.py): what its manifest says (models, sources, tests,
# seeds, snapshots, exposures and the edges between them) and the latest results and source
# freshness, read from target/ (dbt itself never runs). `root` is the dbt project's folder
# from the repository's root ('' at the root). Each artifact's stat says when to read again.
M041_DBT = """
CREATE TABLE dbt_projects (
    project_id      TEXT NOT NULL,
    root            TEXT NOT NULL,
    name            TEXT,
    target          TEXT NOT NULL,
    manifest_stat   TEXT,
    manifest_at     TEXT,
    dbt_version     TEXT,
    results_stat    TEXT,
    results_at      TEXT,
    sources_stat    TEXT,
    sources_at      TEXT,
    read_at         TEXT NOT NULL,
    PRIMARY KEY (project_id, root)
) WITHOUT ROWID;
CREATE TABLE dbt_nodes (
    project_id      TEXT NOT NULL,
    unique_id       TEXT NOT NULL,
    root            TEXT NOT NULL,
    kind            TEXT NOT NULL,
    name            TEXT NOT NULL,
    path            TEXT,
    checksum        TEXT,
    description     TEXT,
    materialized    TEXT,
    attached        TEXT,
    column_name     TEXT,
    status          TEXT,
    message         TEXT,
    result_at       TEXT,
    freshness       TEXT,
    loaded_at       TEXT,
    age_s           REAL,
    checked_at      TEXT,
    PRIMARY KEY (project_id, unique_id)
) WITHOUT ROWID;
CREATE INDEX dbt_nodes_by_path ON dbt_nodes (project_id, path);
CREATE INDEX dbt_nodes_by_name ON dbt_nodes (project_id, name);
CREATE INDEX dbt_nodes_by_attached ON dbt_nodes (project_id, attached);
CREATE TABLE dbt_edges (
    project_id      TEXT NOT NULL,
    root            TEXT NOT NULL,
    parent          TEXT NOT NULL,
    child           TEXT NOT NULL,
    PRIMARY KEY (project_id, parent, child)
) WITHOUT ROWID;
CREATE INDEX dbt_edges_by_child ON dbt_edges (project_id, child, parent);
"""

# A snapshot's relationships may stay stored under the snapshot before it (`edges_seq`):
# a refresh that changed a few files replaces only their rows there (codemap/snapshot.py).
# A snapshot's overview (files by language, fullest directories) is kept with it, so a
# SessionStart packet reads one row instead of counting a large map's files.
M042_MAP_EDGES_HELD = """
ALTER TABLE map_resolved ADD COLUMN edges_seq INTEGER;
ALTER TABLE map_snapshots ADD COLUMN overview TEXT;
"""

# The highest vectors rowid ever written: a new vector takes the next, even after the top one
# was erased, so "the vectors written since rowid V" (the approximate index's watermark,
# recall/ann.py) never misses one written under a reused rowid.
M043_VECTOR_SEQ = """
CREATE TABLE vector_seq (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    last  INTEGER NOT NULL
);
INSERT INTO vector_seq (id, last) VALUES (1, (SELECT coalesce(max(rowid), 0) FROM vectors));
CREATE TRIGGER vectors_seq AFTER INSERT ON vectors BEGIN
    UPDATE vector_seq SET last = max(last, new.rowid) WHERE id = 1;
END;
"""

# Two indexes a record pays for on every write, made smaller (measured at 50,000 records):
# - the project index in ascending order (a reverse scan serves "newest first" with the same
#   plans): new rows land at the right-hand end of a project's range, where a page split
#   leaves full pages; descending, each landed at the left and split pages stayed half
#   empty (100 of its 195 bytes a record unused);
# - the duplicate check's index holds the first 16 of the hash's 64 hex digits (the query
#   compares the whole hash on the row it finds): 116 -> 52 bytes a record.
M044_SMALLER_INDEXES = """
DROP INDEX memories_by_project;
CREATE INDEX memories_by_project ON memories (project_id, status, created_at, id);
DROP INDEX memories_by_hash;
CREATE INDEX memories_by_hash ON memories (project_id, substr(content_hash, 1, 16))
WHERE status = 'active';
"""

# Imported conversation turns by session, in order: a turn is embedded with its neighbours
# (recall/vectors.py `with_context`). Only such turns are in it.
M045_TURNS = """
CREATE INDEX memories_by_turn ON memories (project_id, session_id, event_time)
WHERE actor = 'import' AND session_id IS NOT NULL;
"""

# The lexical index's document counts of common words, kept for the next process: fts5vocab
# counts a word by reading its whole posting list, 2 ms a word at a million memories. They
# belong to one state of the index (its structure record, `search.index_state`); counts of
# another state are never read, and go at the next keep. Only words in many memories are
# kept (`lexical.KEEP_DOCS`): stems of words already in the index's redacted text.
M046_TERM_COUNTS = """
CREATE TABLE term_counts (term TEXT PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE term_counts_state (id INTEGER PRIMARY KEY CHECK (id = 1), state BLOB NOT NULL);
"""

# Which sessions a handoff covered: a save marks its own session, and any session whose
# edited files it names (`relevant_files`), as handed off at its time. Stop compares a
# session's last change with its own mark, never with a save another session made.
# The newest decisions, for the SessionStart packet: through `memories_by_kind` it sorted a
# project's every decision (35 ms at 12,000 of 100,000 memories); this index holds only
# the active decisions. Who wrote the team's memories, for the overview, counted whole (it
# counted among the newest 5,000 pulls): an index of the memories pulled from the team.
M047_HANDED_OFF = """
ALTER TABLE sessions ADD COLUMN handed_off_at TEXT;
CREATE INDEX memories_decisions ON memories (project_id, created_at DESC, id DESC)
WHERE status = 'active' AND type = 'decision';
CREATE INDEX memories_team_authors ON memories (project_id, client)
WHERE status = 'active' AND client LIKE 'team:%';
"""

# Each receipt line's text as sent (its dashboard view showed only the section and the
# record's id, so nine lines of a checkpoint read alike). NULL for a line left out, and for
# a line read from the repository rather than the store (git's commit subjects, the code
# map, notes), which the hook does not run the redactor over; erasing a memory empties the
# text of every line that showed it.
M048_RECEIPT_TEXT = """
ALTER TABLE injections ADD COLUMN text TEXT;
"""

# The redactor's clearance of the text a memory would share (`redact.clearance`), stamped
# when it is written: a sync checks the stamp, a digest, where it scanned every revision
# again (0.6 s of a 13,000-memory push). NULL: not stamped (written before, pulled from the
# team, or flagged), so scanned as before.
M049_CLEARED = """
ALTER TABLE memories ADD COLUMN cleared TEXT;
"""

# A new memory's index row is written by `storage.memories.insert_memory` beside the row, no
# longer by a trigger: a trigger's statement opens a savepoint, and FTS5 writes its pending
# terms to disk at every savepoint, so each memory was a segment of its own to merge (the
# index's share of 13,000 inserts: 0.8 s by the trigger, 0.1 s written directly). Updates and
# deletes, rare, keep their triggers.
M050_FTS_INSERT_DIRECT = """
DROP TRIGGER memories_fts_insert;
"""

# Tasks: a checkpoint that an agent can claim. The holder is a client session (its
# subagents work for it; `holder_agent` names one of them, or ''); NULL: open for the
# taking. The lease is renewed by the holder's hooks; once `lease_until` has passed, anyone
# may claim the task, its checkpoint intact. A claim notes where the work started: the base
# commit, the branch and the working tree. `parent_id`: a subtask's task. `tree`: the
# working tree a session started in (a worktree's own top), which tells sessions of one
# project apart.
M051_TASKS = """
ALTER TABLE checkpoints ADD COLUMN parent_id TEXT REFERENCES checkpoints(id);
ALTER TABLE checkpoints ADD COLUMN holder_session TEXT;
ALTER TABLE checkpoints ADD COLUMN holder_agent TEXT;
ALTER TABLE checkpoints ADD COLUMN holder_about TEXT;
ALTER TABLE checkpoints ADD COLUMN claimed_at TEXT;
ALTER TABLE checkpoints ADD COLUMN lease_until TEXT;
ALTER TABLE checkpoints ADD COLUMN base_commit TEXT;
ALTER TABLE checkpoints ADD COLUMN branch TEXT;
ALTER TABLE checkpoints ADD COLUMN worktree TEXT;
CREATE INDEX checkpoints_by_holder ON checkpoints (holder_session) WHERE holder_session IS NOT NULL;
CREATE INDEX checkpoints_by_parent ON checkpoints (parent_id) WHERE parent_id IS NOT NULL;
ALTER TABLE sessions ADD COLUMN tree TEXT;
-- The last run of each command a task's definition of done names, by its holder's session:
-- whether it passed, and when (Stop compares it with the session's last edit).
CREATE TABLE task_checks (
    checkpoint_id  TEXT NOT NULL REFERENCES checkpoints(id),
    command        TEXT NOT NULL,
    result         TEXT NOT NULL CHECK (result IN ('pass', 'fail')),
    at             TEXT NOT NULL,
    session_id     TEXT,
    PRIMARY KEY (checkpoint_id, command)
) WITHOUT ROWID;
-- What a subagent saved to the task its lead gave it, for the lead's next packet (once).
CREATE TABLE task_reports (
    id             TEXT PRIMARY KEY,
    session_id     TEXT NOT NULL,
    agent_id       TEXT NOT NULL,
    agent_type     TEXT,
    checkpoint_id  TEXT NOT NULL REFERENCES checkpoints(id),
    revision_id    TEXT NOT NULL,
    events         TEXT NOT NULL DEFAULT '[]',
    at             TEXT NOT NULL,
    shown_at       TEXT
);
CREATE INDEX task_reports_waiting ON task_reports (session_id) WHERE shown_at IS NULL;
-- A candidate may be a claim two machines hold (`team.claims`): approving gives it up here.
CREATE TABLE candidates_m051 (
    id           TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects(id),
    kind         TEXT NOT NULL,
    action       TEXT NOT NULL
                 CHECK (action IN ('add', 'supersede', 'archive', 'share', 'checkpoint',
                                   'claim')),
    fields       TEXT NOT NULL,
    sources      TEXT NOT NULL DEFAULT '[]',
    evidence     TEXT NOT NULL DEFAULT '[]',
    reason       TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'pending'
                 CHECK (status IN ('pending', 'approved', 'rejected')),
    memory_id    TEXT REFERENCES memories(id),
    review_note  TEXT,
    reviewed_by  TEXT,
    reviewed_at  TEXT,
    session_id   TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    UNIQUE (project_id, fingerprint)
);
INSERT INTO candidates_m051 SELECT id, project_id, kind, action, fields, sources, evidence,
    reason, fingerprint, status, memory_id, review_note, reviewed_by, reviewed_at, session_id,
    created_at, updated_at FROM candidates;
DROP TABLE candidates;
ALTER TABLE candidates_m051 RENAME TO candidates;
CREATE INDEX candidates_by_status ON candidates (project_id, status, updated_at DESC);
"""

M052_PROXY_CONVERSATIONS = """
-- What the memory proxy put into each conversation (`proxy.app`), so a request that comes
-- after the proxy restarted (a resumed session) carries the same bytes in the same places
-- and the provider's prompt cache keeps its prefix. The packets as sent, redacted again.
CREATE TABLE proxy_conversations (
    key         TEXT PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects(id),
    session_id  TEXT NOT NULL,
    opening     TEXT,
    packets     TEXT NOT NULL DEFAULT '{}',
    answered    INTEGER NOT NULL DEFAULT 0,
    updated_at  TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX proxy_conversations_by_time ON proxy_conversations (updated_at);
"""

M053_RECALLS_SERVED = """
-- Recalls an agent asked for that answered with memories (`stats --impact`, the Overview):
-- found by project and time without reading the whole audit log.
CREATE INDEX events_recalls_served ON events (project_id, at) WHERE op = 'recall.served';
"""

MIGRATIONS: list[tuple[str, str]] = [
    ("m001_initial", M001_INITIAL),
    ("m002_vectors_links_use", M002_VECTORS_LINKS_ACCESS),
    ("m003_vocab_settings", M003_VOCAB_SETTINGS),
    ("m004_checkpoints", M004_CHECKPOINTS),
    ("m005_capture", M005_CAPTURE),
    ("m006_sessions", M006_SESSIONS),
    ("m007_read_path_indexes", M007_READ_PATH_INDEXES),
    ("m008_live_index", M008_LIVE_INDEX),
    ("m009_covering_targets", M009_COVERING_TARGETS),
    ("m010_project_identity", M010_PROJECT_IDENTITY),
    ("m011_capture_modes", M011_CAPTURE_MODES),
    ("m012_rules_cover_expiry", M012_RULES_COVER_EXPIRY),
    ("m013_branches", M013_BRANCHES),
    ("m014_command_failures", M014_COMMAND_FAILURES),
    ("m015_injections", M015_INJECTIONS),
    ("m016_session_steps", M016_SESSION_STEPS),
    ("m017_tool_outputs", M017_TOOL_OUTPUTS),
    ("m018_candidates", M018_CANDIDATES),
    ("m019_feedback", M019_FEEDBACK),
    ("m020_learned", M020_LEARNED),
    ("m021_agent_scopes", M021_AGENT_SCOPES),
    ("m022_observations", M022_OBSERVATIONS),
    ("m023_code_map", M023_CODE_MAP),
    ("m024_code_structure", M024_CODE_STRUCTURE),
    ("m025_map_languages_edges", M025_MAP_LANGUAGES_EDGES),
    ("m026_project_aliases", M026_PROJECT_ALIASES),
    ("m027_capture_confirm", M027_CAPTURE_CONFIRM),
    ("m028_team_sync", M028_TEAM_SYNC),
    ("m029_personal", M029_PERSONAL),
    ("m030_checkpoint_conflicts", M030_CHECKPOINT_CONFLICTS),
    ("m031_events_by_session", M031_EVENTS_BY_SESSION),
    ("m032_memories_by_kind", M032_MEMORIES_BY_KIND),
    ("m033_error_signatures", M033_ERROR_SIGNATURES),
    ("m034_outcomes", M034_OUTCOMES),
    ("m035_measured_use", M035_MEASURED_USE),
    ("m036_compaction", M036_COMPACTION),
    ("m037_notes", M037_NOTES),
    ("m038_procedures", M038_PROCEDURES),
    ("m039_note_folders", M039_NOTE_FOLDERS),
    ("m040_hook_deliveries", M040_HOOK_DELIVERIES),
    ("m041_dbt", M041_DBT),
    ("m042_map_edges_held", M042_MAP_EDGES_HELD),
    ("m043_vector_seq", M043_VECTOR_SEQ),
    ("m044_smaller_indexes", M044_SMALLER_INDEXES),
    ("m045_turns", M045_TURNS),
    ("m046_term_counts", M046_TERM_COUNTS),
    ("m047_handed_off_decisions", M047_HANDED_OFF),
    ("m048_receipt_text", M048_RECEIPT_TEXT),
    ("m049_cleared", M049_CLEARED),
    ("m050_fts_insert_direct", M050_FTS_INSERT_DIRECT),
    ("m051_tasks", M051_TASKS),
    ("m052_proxy_conversations", M052_PROXY_CONVERSATIONS),
    ("m053_recalls_served", M053_RECALLS_SERVED),
]

SCHEMA_VERSION = len(MIGRATIONS)
