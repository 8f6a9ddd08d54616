"""The code map: immutable snapshots of a repository's files (paths, digests, languages),
refreshed incrementally, and the changes between them."""
