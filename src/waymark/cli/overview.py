"""`waymark` and `waymark --help`: every command under the heading a person looks for it by,
the most used first, one short line each. Written without argparse, which costs the command
~8 ms before it prints anything; `waymark COMMAND --help` says the rest. `tests/test_cli.py`
keeps the groups and the command table (what the modules register) the same set.
"""

from __future__ import annotations

USAGE = "usage: waymark [--version] [--json] [--project PATH_OR_NAME] COMMAND ..."
ABOUT = "Memory for coding agents: the next session starts where the last one stopped."

GROUPS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("set-up", (
        ("install", "connect Waymark to Claude Code and Codex (hooks, MCP server)"),
        ("enable", "let the hooks capture in this project"),
        ("status", "the data home, schema and this project's memory counts"),
        ("doctor", "check the environment, database, registrations, model and hooks"),
        ("capture", "show or set how hooks capture here: on, confirm, read-only, off"),
        ("config", "show or change a setting"),
        ("project", "which project this directory is; list, rebind, remove"),
        ("disable", "keep the hooks silent in this project"),
        ("uninstall", "remove exactly what `waymark install` added; memories are kept"),
    )),
    ("memories", (
        ("remember", "store a memory for this project"),
        ("list", "browse memories, newest first"),
        ("show", "one memory in full"),
        ("edit", "change a memory by exact-text operations, all or nothing"),
        ("supersede", "replace a memory with a new version"),
        ("archive", "retire a memory (kept, no longer recalled)"),
        ("unarchive", "bring an archived memory back"),
        ("erase", "drop a memory's content for good, keeping a tombstone"),
        ("history", "a memory's versions, oldest first"),
        ("relate", "link two memories so recall brings one with the other"),
        ("observe", "record what was done or tested about a memory, and its files"),
        ("observations", "a memory's observations, each checked against its files now"),
    )),
    ("recall", (
        ("recall", "the memories that matter for a query, best first"),
        ("index", "embed memories for semantic recall (only new or changed text)"),
    )),
    ("handoff", (
        ("checkpoint", "show or save the handoff of the current task"),
        ("task", "the tasks agents work on at once; claim, release, assign, split"),
        ("output", "a tool output Waymark trimmed for the model, whole and redacted"),
    )),
    ("curation", (
        ("candidates", "what Waymark proposes to remember, waiting for review"),
        ("review", "approve or reject a candidate"),
        ("feedback", "say how a recalled memory served; it moves in ranking"),
        ("stats", "how much of what Waymark injects the sessions use, and its cost"),
        ("statusline", "a session's line for Claude Code's status line"),
        ("consolidate", "propose near-duplicate or contradicting memories as one"),
        ("sweep", "archive expired or unused memories; purge long-archived ones"),
        ("backfill", "propose candidates from the transcripts already on this machine"),
        ("outcomes", "what became of decisions and lessons in git: held or reverted"),
        ("outcome", "settle one item's outcome by hand, or give it back to git"),
        ("errors", "the error log: failed commands and lessons, by category"),
        ("insights", "insights learned from the error log: vote, promote to a rule"),
        ("rules", "rules promoted from insights: rate after use, retire"),
        ("skills", "procedures learned from work, proposed for review"),
    )),
    ("knowledge", (
        ("map", "the repository's code map: refresh, diff, what depends on a file"),
        ("notes", "the repository's Markdown notes as cited knowledge"),
        ("dbt", "a dbt project's lineage, failing tests and sources' freshness"),
    )),
    ("team", (
        ("team", "the team store (PostgreSQL): connect, status, disconnect"),
        ("sync", "exchange this project's new memories with the team store"),
        ("share", "make a memory the team's, or share through the repository"),
    )),
    ("faces", (
        ("ui", "the dashboard in a browser (loopback, this user only)"),
        ("proxy", "the memory proxy for agents that take a base URL"),
        ("mcp", "run the MCP stdio server (Claude Code and Codex start it)"),
    )),
    ("data", (
        ("export", "write memories and handoffs to a portable file or Markdown"),
        ("import", "load JSON lines, an export, or a client's own memory"),
        ("backup", "copy the database (online, checked) to backups/"),
        ("restore", "replace the database with a verified backup"),
        ("compact", "give the space of deleted rows back to the disk"),
        ("log", "the audit log: what changed, when and by whom (no content)"),
        ("diagnostics", "write a support bundle (no memory content, paths or ids)"),
    )),
)  # fmt: skip


def text() -> str:
    """The overview `waymark --help` prints."""
    width = max(len(name) for _, commands in GROUPS for name, _ in commands)
    lines = [USAGE, "", ABOUT]
    for heading, commands in GROUPS:
        lines += ["", f"{heading}:"]
        lines += [f"  {name:<{width}}  {said}" for name, said in commands]
    lines += [
        "",
        "options: --version  --json (machine-readable output)  --project PATH_OR_NAME",
        "Run `waymark COMMAND --help` for a command's flags and an example.",
    ]
    return "\n".join(lines) + "\n"
