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

# Team recall's neighbours come from an IVFFlat index once the store is large enough for
# an exact scan to cost (20,000 vectors: ~20 ms exact). IVFFlat, not HNSW: adding a row costs
# a few hundred distances, where HNSW's graph cut a push from 3,600 to 183 events/s. Its
# lists are learnt from the rows present, so it is built late and rebuilt as the store grows
# fourfold, by this function: it runs as the schema's owner (an index needs the table's
# owner; any member's sync calls it), returns at once when there is nothing to do, and skips
# when another sync is at it.
M002_VECTOR_INDEX = """
CREATE FUNCTION waymark_tend_vectors(min_rows bigint) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $fn$
DECLARE
    n      bigint;
    built  integer;
    lists  integer;
    stale  bigint;
BEGIN
    IF NOT pg_try_advisory_xact_lock(1463900500) THEN
        RETURN 'busy';
    END IF;
    SELECT c.reltuples::bigint, coalesce(s.n_mod_since_analyze, 0)
      INTO n, stale
      FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
     WHERE c.oid = 'team_memories'::regclass;
    IF n < 0 OR stale > greatest(1000, n / 5) THEN  -- never counted, or much changed since
        ANALYZE team_memories;  -- the planner's counts, and the count here, stay current
        SELECT greatest(reltuples, 0)::bigint INTO n
          FROM pg_class WHERE oid = 'team_memories'::regclass;
    END IF;
    SELECT substring(array_to_string(reloptions, ',') FROM 'lists=([0-9]+)')::integer
      INTO built FROM pg_class WHERE relname = 'team_memories_embedding';
    IF n < min_rows OR (built IS NOT NULL AND (n <= built * 4000 OR built >= 4000)) THEN
        RETURN 'kept';
    END IF;
    lists := least(4000, greatest(100, n / 1000))::integer;
    PERFORM set_config('maintenance_work_mem', '256MB', true);
    DROP INDEX IF EXISTS team_memories_embedding;
    EXECUTE format('CREATE INDEX team_memories_embedding ON team_memories'
                   ' USING ivfflat (embedding vector_cosine_ops) WITH (lists = %s)', lists);
    ANALYZE team_memories;
    RETURN 'built ' || lists;
END
$fn$;
"""

# Checkpoints, shared: every revision a machine sends, with the revision it was made from
# (`parent`). The team's line of a checkpoint is `team_checkpoints.head`: a revision made
# from the head becomes the head; one made from an older revision (two machines revised the
# same one) is kept beside it, `mainline` false: a conflict every machine reviews.
M003_CHECKPOINTS = """
CREATE TABLE team_checkpoints (
    id           TEXT PRIMARY KEY,
    project_key  TEXT NOT NULL,
    head         TEXT NOT NULL
);
CREATE TABLE team_checkpoint_revisions (
    id             TEXT PRIMARY KEY,
    checkpoint_id  TEXT NOT NULL,
    project_key    TEXT NOT NULL,
    seq            INTEGER NOT NULL,
    parent         TEXT,
    mainline       BOOLEAN NOT NULL,
    operation      TEXT NOT NULL,
    status         TEXT NOT NULL,
    body           JSONB NOT NULL,
    tokens         INTEGER NOT NULL,
    actor          TEXT NOT NULL,
    client         TEXT,
    session_id     TEXT,
    created_at     TEXT NOT NULL,
    git_branch     TEXT,
    author         TEXT NOT NULL DEFAULT current_user,
    machine        TEXT NOT NULL
);
CREATE INDEX team_checkpoint_revisions_of ON team_checkpoint_revisions (checkpoint_id);
"""

# Who holds each task across machines (agents at once): one row a task, its holder a client
# session of one machine, on a lease; NULL holder: open. A claim is one INSERT ... ON
# CONFLICT DO UPDATE whose WHERE lets it through only when the task is open, already that
# session's, or its lease has passed, so two machines never both hold it.
M004_CLAIMS = """
CREATE TABLE team_claims (
    checkpoint_id   TEXT PRIMARY KEY,
    project_key     TEXT NOT NULL,
    holder_session  TEXT,
    holder_about    TEXT,
    machine         TEXT,
    claimed_at      TEXT,
    lease_until     TEXT,
    branch          TEXT
);
CREATE INDEX team_claims_of ON team_claims (project_key);
"""

MIGRATIONS: list[tuple[str, str]] = [
    ("m001_base", M001_BASE),
    ("m002_vector_index", M002_VECTOR_INDEX),
    ("m003_checkpoints", M003_CHECKPOINTS),
    ("m004_claims", M004_CLAIMS),
]

SCHEMA_VERSION = len(MIGRATIONS)
