"""Memories: the typed record, drafts and their validation, writes, scopes, links, browsing."""
