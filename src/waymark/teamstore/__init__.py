"""The team store: the same seam as `waymark.storage`, on PostgreSQL with pgvector (psycopg 3).

The local SQLite file stays the replica every hook reads and writes; only a sync (its own
process: the CLI, or the MCP server's background work) talks to this store, never a hook.
Every SQL statement for PostgreSQL lives here, in modules named as the SQLite ones whose
functions they mirror (a test checks the names).
"""
