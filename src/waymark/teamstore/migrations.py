"""The team store's schema, versioned like the local one: each step runs once, in order, in
one transaction, recorded in `team_schema_migrations`; the count is the schema version. A
client older than the server's schema refuses to write and says so (`connection`)."""

from __future__ import annotations

M001_BASE = """
CREATE EXTENSION IF NOT EXISTS vector;

-- One row per shared memory revision: the record as the machine that wrote it stored it
-- (`record`), with what the server searches and filters on beside it. Revisions are
-- immutable but for their status (superseded, archived), as in the local file.
CREATE TABLE team_memories (
    id            TEXT PRIMARY KEY,
    project_key   TEXT NOT NULL,
    type          TEXT NOT NULL,
    title         TEXT NOT NULL,
    content       TEXT NOT NULL,
    status        TEXT NOT NULL,
    supersedes    TEXT,
    superseded_by TEXT,
    content_hash  TEXT NOT NULL,
    record        JSONB NOT NULL,
    updated_at    TEXT NOT NULL,
    -- Authorship, stamped by the server side of the sync: who, which machine, which client.
    author        TEXT NOT NULL DEFAULT current_user,
    machine       TEXT NOT NULL,
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
