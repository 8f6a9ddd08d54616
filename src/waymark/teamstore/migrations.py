"""The team store's schema, versioned like the local one: each step runs once, in order, in
one transaction, recorded in `team_schema_migrations`; the count is the schema version. A
client older than the server's schema refuses to write and says so (`connection`)."""

from __future__ import annotations

M001_BASE = """
CREATE EXTENSION IF NOT EXISTS vector;

-- One row per shared memory revision, as the machine that wrote it stored it; revisions are
-- immutable but for their status (superseded, archived), as in the local file.
CREATE TABLE team_memories (
    id            TEXT PRIMARY KEY,
    project_key   TEXT NOT NULL,
    type          TEXT NOT NULL,
    title         TEXT NOT NULL,
    content       TEXT NOT NULL,
    scope_type    TEXT NOT NULL,
    scope_target  TEXT,
    tags          JSONB NOT NULL DEFAULT '[]',
    priority      INTEGER NOT NULL DEFAULT 0,
    pinned        BOOLEAN NOT NULL DEFAULT false,
    status        TEXT NOT NULL DEFAULT 'active',
    supersedes    TEXT,
    superseded_by TEXT,
    key           TEXT,
    event_time    TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    -- Authorship, stamped by the server side of the sync: who, which machine, which client.
    author        TEXT NOT NULL DEFAULT current_user,
    machine       TEXT,
    client        TEXT,
    tsv           tsvector GENERATED ALWAYS AS (
                      to_tsvector('simple', title || ' ' || content)) STORED,
    embedding     vector(384)
);
CREATE INDEX team_memories_project ON team_memories (project_key, status);
CREATE INDEX team_memories_tsv ON team_memories USING gin (tsv);

-- The team's event log: each machine's outbox events, applied once by event id, in order.
CREATE TABLE team_events (
    seq          BIGSERIAL PRIMARY KEY,
    event_id     TEXT NOT NULL UNIQUE,
    at           TEXT NOT NULL,
    op           TEXT NOT NULL,
    project_key  TEXT NOT NULL,
    memory_id    TEXT,
    author       TEXT NOT NULL DEFAULT current_user,
    machine      TEXT,
    client       TEXT,
    payload      JSONB NOT NULL DEFAULT '{}',
    received_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX team_events_project ON team_events (project_key, seq);
"""

MIGRATIONS: list[tuple[str, str]] = [
    ("m001_base", M001_BASE),
]

SCHEMA_VERSION = len(MIGRATIONS)
