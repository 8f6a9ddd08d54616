"""Lifecycle hooks for Claude Code and Codex: one small entry module per event.

Each is run as `"<python>" -I -m waymark.hooks.<module> <client>` by the client, reads the
event on stdin, calls one handler, and exits 0 whatever happens (see `runtime`).
"""
