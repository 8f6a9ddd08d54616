"""Team memory: a shared PostgreSQL store beside every machine's local file."""
