"""Recall: ranking memories for a query (lexical, semantic, path, graph tiers and their
fusion), the embedding model, stored vectors and the warm server."""
