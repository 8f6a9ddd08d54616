"""Every command: its name, the CLI module that registers it, and its one-line help. `waymark
COMMAND` imports only COMMAND's module (found here), so no
command pays for the others' imports (`waymark --version` 0.23 s -> about 20 ms as whole
processes, `waymark status` about a third less).

Generated from the modules' own registrations, never written by hand:

    python -m waymark.cli.table > src/waymark/cli/table.py

`tests/test_cli.py` fails when this drifts from what the modules register.
"""

from __future__ import annotations

# The modules, in the order `waymark --help` lists their commands.
MODULES = ("memory", "observe", "recall", "checkpoint", "task", "curation", "codemap", "dbt",
           "project", "data", "team", "setup", "ui", "proxy")  # fmt: skip

COMMANDS: tuple[tuple[str, str, str], ...] = (
    (
        "remember",
        "memory",
        "store a memory for this project (exact duplicates return the existing one)",
    ),
    (
        "supersede",
        "memory",
        "replace an active memory with a new version (unset fields are carried over)",
    ),
    (
        "edit",
        "memory",
        "change a memory by exact-text operations, in the order given, all or nothing (one new revision; the same edit retried is reported as already applied)",
    ),
    ("list", "memory", "browse memories, newest first"),
    ("show", "memory", "show one memory in full"),
    ("history", "memory", "the whole supersession chain of a memory, oldest first"),
    ("archive", "memory", "retire an active memory (kept, no longer recalled)"),
    ("erase", "memory", "drop a memory's content for good, keeping a tombstone"),
    ("relate", "memory", "link two memories so recall brings one along with the other"),
    (
        "observe",
        "observe",
        "attach what you report about an active memory (requested, implemented, a test passed or failed) with the files it rests on; Waymark hashes them and says on every read whether they changed since",
    ),
    (
        "observations",
        "observe",
        "a memory's observations, newest first, each checked against its files now",
    ),
    (
        "index",
        "recall",
        "embed memories for semantic recall (only new or changed text; resumable; fetches the model on first use)",
    ),
    ("recall", "recall", "the memories that matter for a query, best first"),
    (
        "checkpoint",
        "checkpoint",
        "show or save the handoff of the current task (what the MCP tool does)",
    ),
    (
        "task",
        "task",
        "the tasks agents work on at once: the board (open, held by whom, lease, definition of done), and claim, release, assign or split one",
    ),
    (
        "candidates",
        "curation",
        "what Waymark proposes to remember, waiting for review (nothing here is recalled)",
    ),
    (
        "review",
        "curation",
        "approve a candidate (it becomes a memory, or changes the ones it names) or reject it (it is not proposed again)",
    ),
    (
        "backfill",
        "curation",
        "read the Claude Code and Codex transcripts already on this machine for this project and propose candidates: decisions stated, failures and what fixed them, the files each session edited (redacted; nothing active until reviewed)",
    ),
    (
        "sweep",
        "curation",
        "sweep: archive what is expired or unused and of low salience, purge what stayed archived long enough (pinned, decisions, conventions and fresh evidence are kept)",
    ),
    (
        "unarchive",
        "curation",
        "bring an archived memory back (a sweep's archive is undone this way)",
    ),
    (
        "insights",
        "curation",
        "insights learned from the error log: list, vote up or down (archived at zero), or promote to a rule",
    ),
    (
        "rules",
        "curation",
        "rules promoted from insights (pinned while active): list, rate after use, or retire; one that rarely helps is suspended",
    ),
    (
        "errors",
        "curation",
        "the error log: failed commands and lessons, each with its category (given, or inferred by rules); three of one category in 30 days propose an insight",
    ),
    (
        "skills",
        "curation",
        "skills learned from work: numbered steps in checkpoints and memories, and command sequences that made a failing check pass, proposed for review; approved ones are named before a matching command or edit",
    ),
    (
        "stats",
        "curation",
        "how much of what the packets inject the sessions use (per section, hook, type), tokens per session, prompt, subagent and used item, and the MCP tools' cost",
    ),
    (
        "statusline",
        "curation",
        "a session's line for Claude Code's status line: records shown, used, its handoff (reads Claude Code's JSON on stdin; `waymark install --statusline` wires it)",
    ),
    (
        "outcomes",
        "curation",
        "what became of the changes decisions, lessons and checkpoints led to, in git: held (boosted in recall) or reverted (demoted, flagged)",
    ),
    (
        "outcome",
        "curation",
        "settle one item's outcome by hand (git leaves it so), or give it back to git",
    ),
    (
        "consolidate",
        "curation",
        "find near-duplicate or contradicting memories and propose each group as one candidate that names all its sources (nothing merges without approval)",
    ),
    (
        "feedback",
        "curation",
        "say how a recalled memory served: it moves in ranking a little; stale or wrong also proposes its archive for review",
    ),
    (
        "map",
        "codemap",
        "the repository's code map: refresh it (incremental), list its snapshots, show the files added, removed, modified and renamed between two, or the declarations, imports and calls parsed from its source files (ten languages, and dbt models), what depends on a file or declaration, or the names a few words find",
    ),
    (
        "notes",
        "codemap",
        "the repository's Markdown notes as cited knowledge (`[knowledge] paths`, default docs/**/*.md, adr/**, *.md at the root): list them, refresh the index, show a section",
    ),
    (
        "dbt",
        "dbt",
        "a dbt project's models, sources, tests and exposures as dbt last wrote them (target/manifest.json, run_results.json, sources.json): what depends on a model, the failing tests, the sources' freshness; dbt itself never runs",
    ),
    (
        "project",
        "project",
        "show which project this directory is (list, rebind and remove projects)",
    ),
    ("status", "project", "the data home, schema, and this project's memory counts"),
    (
        "capture",
        "project",
        "show or set how hooks capture here: on (inject and record), confirm (as on; the agent's own writes wait for review), read-only (inject, never record) or off; for the project, or one --session",
    ),
    ("enable", "project", "let the hooks capture in this project"),
    ("disable", "project", "keep the hooks silent in this project"),
    (
        "import",
        "data",
        "bulk-load memories from JSON lines (re-runs skip unchanged keys), or load a `waymark export` file with every id kept (all or nothing; twice is a no-op), or read Claude Code's or Codex's own memory (never written to)",
    ),
    (
        "backup",
        "data",
        "copy the database (online, checked) to backups/ as waymark-s<schema>-<UTC time>-<sha256>.db, owner-only, never overwriting",
    ),
    (
        "compact",
        "data",
        "give the space of deleted rows back to the disk (VACUUM); `project remove` does it by itself",
    ),
    (
        "restore",
        "data",
        "replace the database with a verified backup; the current one is kept in backups/pre-restore-<time>.db",
    ),
    (
        "export",
        "data",
        "write this project's (or with --all every project's) memories, links, checkpoint revisions, settings and events to a portable file (JSON lines with a digest, re-loadable with `waymark import`) or to Markdown to read",
    ),
    (
        "sync",
        "team",
        "send this project's new memories to the team store and bring the team's here (a project shared by `[team] share = true` in its .waymark.toml)",
    ),
    (
        "share",
        "team",
        "make a personal memory of a shared project the team's (through the review queue, unless the project says `[team] promote = \"direct\"`); or `share export` the project's shared memories into the repository (.waymark/memories/, one file each) and `share import` what a pull brought (`[repository] share = true` opts in)",
    ),
    (
        "team",
        "team",
        "the team store this machine shares memories through (PostgreSQL): connect, status, disconnect",
    ),
    ("doctor", "setup", "check the environment, database, client registrations, model and hooks"),
    (
        "diagnostics",
        "setup",
        "write a support bundle (versions, health, registration; no memory content, paths or ids), owner-only",
    ),
    (
        "log",
        "setup",
        "the audit log: what changed, when and by whom (ids and metadata, no content)",
    ),
    (
        "output",
        "setup",
        "a tool output Waymark trimmed for the model ([output] in .waymark.toml), whole and redacted",
    ),
    ("mcp", "setup", "run the MCP stdio server (started by Claude Code or Codex)"),
    ("config", "setup", "show or change a setting"),
    (
        "install",
        "setup",
        "connect Waymark to Claude Code and Codex: hooks and the `waymark` MCP server",
    ),
    ("uninstall", "setup", "remove exactly what `waymark install` added; memories are kept"),
    (
        "ui",
        "ui",
        "the dashboard: browse, search, fix and review memory in a browser (loopback, this user only); Ctrl-C stops it",
    ),
    (
        "proxy",
        "proxy",
        "the memory proxy: point an agent's base URL here (Anthropic Messages, OpenAI Responses and Chat Completions) and its requests carry this project's memory, its tool calls are recorded; loopback only, Ctrl-C stops it",
    ),
)

# Which module registers each command: what `waymark COMMAND` imports, and nothing else.
MODULE_OF = {name: module for name, module, _ in COMMANDS}


def registered() -> list[tuple[str, str, str]]:
    """(name, module, help) of every command, as the modules register them now."""
    import importlib

    from waymark.cli.parsers import Parser

    common = Parser(add_help=False)
    rows = []
    for name in MODULES:
        parser = Parser(prog="waymark")
        commands = parser.add_subparsers(dest="command", parser_class=Parser)
        importlib.import_module(f"waymark.cli.{name}").register(commands, common)
        rows += [(a.dest, name, str(a.help)) for a in commands._choices_actions]
    return rows


def source() -> str:
    """This file, with COMMANDS as the modules register them now."""
    import pathlib

    text = pathlib.Path(__file__).read_text(encoding="utf-8")
    start = text.index("COMMANDS: tuple")
    end = text.index("\n)\n", start) + 3
    rows = "".join(f"    {row!r},\n" for row in registered())
    return (
        text[:start]
        + "COMMANDS: tuple[tuple[str, str, str], ...] = (\n"
        + rows
        + ")\n"
        + text[end:]
    )


if __name__ == "__main__":
    print(source(), end="")
