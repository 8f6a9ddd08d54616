"""Lifecycle hooks for Claude Code and Codex: one small entry module per event.

The client runs each as `"<python>" -I -c "from waymark.hooks.<module> import main;main()"
<client>` (see `waymark.base.launch`); it reads the event on stdin, calls one handler, and
exits 0 whatever happens (see `runtime`).
"""
