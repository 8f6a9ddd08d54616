"""User settings, stored in the database as JSON values under dotted keys.

Defaults live here, in one table; `waymark config` reads and writes them.
"""

from __future__ import annotations

from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.errors import InvalidArgument
from waymark.storage import connection as db
from waymark.storage.settings import all_settings, get_setting, put_setting

TYPE_CHECKING = False  # typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

    from waymark.storage.connection import Connection

DEFAULTS: dict[str, Any] = {
    "recall.half_life_days": 90.0,
    "recall.int8_queries": True,  # queries through the int8 copy of the model (quantize.py)
    # Vector search: "auto" keeps an approximate graph beside a store of 50,000 vectors or
    # more (recall/ann.py), "ann" at any size, "exact" never (and removes its files).
    "recall.vector_index": "auto",
    # The embedding model (recall/embed.py MODELS): "english" (all-MiniLM-L6-v2) or
    # "multilingual" (paraphrase-multilingual-MiniLM-L12-v2, ~50 languages). Vectors carry
    # their model's name and only the chosen model's are searched; `waymark index` embeds
    # every memory with it.
    "recall.model": "english",
    # On: the first session in any git repository just works; `install.sh --per-project`
    # (or `waymark config capture.all_git_repos false`) makes capture opt-in per project.
    "capture.all_git_repos": True,
    "capture.redact_contacts": True,  # e-mail and IP addresses in captured tool output
    "packet.session_start_tokens": 1750,
    "packet.prompt_tokens": 1300,
    "packet.tool_tokens": 300,  # PreToolUse: what is known about the file or command
    "packet.failure_tokens": 200,  # a failed command: what fixed the same error before
    # Each hook's packet also lists at most `_items` records (memories, failures, the
    # checkpoint: a record's lines count once) and only those at or above its relevance
    # `_floor`, on a 0-1 scale each hook defines (docs/sessions.md, "Budgets"). The
    # defaults are what the packets measured on the coding set (bench/coding_recall.py).
    "packet.session_start_items": 30,
    "packet.prompt_items": 12,
    "packet.tool_items": 8,
    "packet.failure_items": 3,
    "packet.session_start_floor": 0.0,
    "packet.prompt_floor": 0.5,
    "packet.tool_floor": 0.0,
    "packet.failure_floor": 0.0,
    "packet.subagent": "small",  # a subagent's packet: "small" (next action, rules) or "none"
    "packet.subagent_tokens": 400,
    "checkpoint.budget_tokens": 600,
    # A claimed task's lease (agents at once): the holder's hooks renew it as it works; past
    # it, with no renewal, the task is anyone's to claim, its checkpoint intact.
    "task.lease_minutes": 15,
    # The code map's refresh at SessionStart (an existing map only): past this many
    # milliseconds the hook stops and `waymark map refresh` finishes in the background.
    "map.refresh_ms": 150.0,
    # The MCP server builds a captured project's first code map in the background, so no
    # hook ever waits for it (`waymark map refresh` builds it by hand).
    "map.server_builds_first": True,
    # Retention (curation/retention.py): nothing is archived or purged unless a sweep is asked
    # for (`waymark sweep`) or scheduled here ("daily" or "weekly"; the MCP server runs it).
    "retention.schedule": "off",
    "retention.archive_after_days": 120.0,
    "retention.salience_floor": 0.2,
    "retention.purge_after_days": 180.0,
    # Team sync (team/sync.py): the MCP server syncs a shared project every this many
    # minutes (0: never; `waymark sync` by hand). Never a hook.
    "team.sync_minutes": 0.0,
    # The memory proxy (`waymark proxy`): where it listens and where requests go when its
    # flags do not say; the API key always comes from the request (or --api-key-env).
    "proxy.port": 8795,
    "proxy.anthropic_upstream": "https://api.anthropic.com",
    "proxy.openai_upstream": "https://api.openai.com",
    # Codex's own memories (where `[features] memories = true`) get each project's rules and
    # decisions through `$CODEX_HOME/memories/extensions/waymark/` (packets/codex_memories.py).
    "codex.memories_extension": False,
}

# Settings that hold an http(s) URL.
URLS = ("proxy.anthropic_upstream", "proxy.openai_upstream")


# Settings that take one of a few words.
CHOICES: dict[str, tuple[str, ...]] = {
    "packet.subagent": ("small", "none"),
    "recall.vector_index": ("auto", "exact", "ann"),
    "recall.model": ("english", "multilingual"),
    "retention.schedule": ("off", "daily", "weekly"),
}


# The sane range of each number: a budget of 999999 tokens is a typo, not a wish.
RANGES: dict[str, tuple[float, float]] = {
    "recall.half_life_days": (1, 3650),
    "packet.session_start_tokens": (200, 8000),
    "packet.prompt_tokens": (100, 8000),
    "packet.tool_tokens": (50, 4000),
    "packet.failure_tokens": (50, 1000),
    "packet.session_start_items": (1, 100),
    "packet.prompt_items": (1, 50),
    "packet.tool_items": (1, 50),
    "packet.failure_items": (1, 20),
    "packet.session_start_floor": (0, 1),
    "packet.prompt_floor": (0, 1),
    "packet.tool_floor": (0, 1),
    "packet.failure_floor": (0, 1),
    "packet.subagent_tokens": (50, 4000),
    "checkpoint.budget_tokens": (100, 8000),
    "task.lease_minutes": (1, 1440),
    "map.refresh_ms": (0, 5000),  # 0: never wait, refresh in the background
    "retention.archive_after_days": (1, 3650),
    "retention.salience_floor": (0.01, 1),
    "retention.purge_after_days": (1, 3650),
    "team.sync_minutes": (0, 1440),
    "proxy.port": (1, 65535),
}


# What each setting does, in a line (the dashboard's Settings page says it beside the value).
HELP: dict[str, str] = {
    "recall.half_life_days": "how fast an unused memory's recency weight halves, in days",
    "recall.int8_queries": "embed queries with the int8 copy of the model (faster, same ranking)",
    "recall.vector_index": "approximate vector index: auto (from 50,000 vectors), ann, or exact",
    "recall.model": "the embedding model: english or multilingual (`waymark index` after a change)",
    "capture.all_git_repos": "capture in every git repository (false: only where `waymark enable` ran)",
    "capture.redact_contacts": "redact e-mail and IP addresses in captured tool output",
    "packet.session_start_tokens": "the SessionStart packet's budget, in tokens",
    "packet.prompt_tokens": "a prompt packet's budget, in tokens",
    "packet.tool_tokens": "what is known about a file or command before a tool runs, in tokens",
    "packet.failure_tokens": "what fixed the same error before, after a failed command, in tokens",
    "packet.session_start_items": "the most records a SessionStart packet lists",
    "packet.prompt_items": "the most records a prompt packet lists",
    "packet.tool_items": "the most records listed before a tool runs",
    "packet.failure_items": "the most records listed after a failed command",
    "packet.session_start_floor": "SessionStart's relevance floor, 0-1 (over 0.5 leaves out what "
    "is not new since the last session: older decisions, recent work, changes, the code)",
    "packet.prompt_floor": "a prompt packet's relevance floor, 0-1: the share of the best "
    "match's score a memory needs",
    "packet.tool_floor": "the relevance floor before a tool runs, 0-1 (1: the file itself; "
    "its folder 0.5, each folder up halves)",
    "packet.failure_floor": "the relevance floor after a failure, 0-1 (1: the same error, or a "
    "memory naming its quoted cause; 0.5 its words)",
    "packet.subagent": "a subagent's packet: small (next action, rules) or none",
    "packet.subagent_tokens": "a subagent packet's budget, in tokens",
    "checkpoint.budget_tokens": "a checkpoint's size limit, in tokens",
    "task.lease_minutes": "a claimed task stays its agent's this long after its last sign of work",
    "map.refresh_ms": "how long SessionStart refreshes the code map before the background takes over",
    "map.server_builds_first": "the MCP server builds a project's first code map in the background",
    "retention.schedule": "when the retention sweep runs by itself: off, daily or weekly",
    "retention.archive_after_days": "a sweep archives what went unused this long (and is of low salience)",
    "retention.salience_floor": "below this salience an unused memory may be archived by a sweep",
    "retention.purge_after_days": "a sweep purges what stayed archived this long",
    "team.sync_minutes": "the MCP server syncs a shared project this often (0: only `waymark sync`)",
    "proxy.port": "the memory proxy's port",
    "proxy.anthropic_upstream": "where the proxy sends Anthropic requests",
    "proxy.openai_upstream": "where the proxy sends OpenAI requests",
    "codex.memories_extension": "give Codex's own memories each project's rules and decisions "
    "(its memories/extensions/waymark folder), refreshed at each session's end",
}


# What to do next after a change, said by whoever changed it.
AFTER: dict[str, str] = {
    "codex.memories_extension": "`waymark export --to codex-memories` writes it now (Codex's "
    "memories must be on: `[features] memories = true` in its config.toml); turned off, the "
    "next session's end takes the folder out",
    "recall.model": "run `waymark index` to embed every memory with it (until then recall "
    "searches only what it has embedded; a running MCP server switches by itself)",
}


def parse(text: str) -> Any:
    """A value as typed (`waymark config KEY VALUE`, the dashboard's form): JSON where it
    reads as JSON (true, 1750, 0.5, "x"), else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def changes(conn: Connection, limit: int = 20) -> list[dict[str, Any]]:
    """The latest setting changes, newest first: {at, key, old, new, via}."""
    from waymark.storage.events import query_events

    found = query_events(conn, project_id=None, everywhere=True, ops=("config.set",),
                         since=None, limit=limit)  # fmt: skip
    out = []
    for e in found:
        payload = e["detail"]
        out.append({"at": e["at"], "key": payload.get("key"), "old": payload.get("old"),
                    "new": payload.get("new"), "via": payload.get("via", "cli")})  # fmt: skip
    return out


def budget(conn: Connection, hook: str) -> tuple[int, int, float]:
    """(tokens, items, floor) of a hook's packet: `session_start`, `prompt`, `tool` or
    `failure` (`packet.<hook>_tokens`, `_items`, `_floor`)."""
    return (int(get(conn, f"packet.{hook}_tokens")), int(get(conn, f"packet.{hook}_items")),
            float(get(conn, f"packet.{hook}_floor")))  # fmt: skip


def get(conn: Connection, key: str) -> Any:
    if key not in DEFAULTS:
        import difflib

        near = difflib.get_close_matches(key, list(DEFAULTS), n=1, cutoff=0.6)
        hint = f"; did you mean {near[0]}?" if near else ""
        raise InvalidArgument(
            f"unknown setting {key!r}{hint} (settings: {', '.join(sorted(DEFAULTS))})",
            valid=sorted(DEFAULTS),
        )
    stored = get_setting(conn, key)
    return DEFAULTS[key] if stored is None else json.loads(stored)


KINDS = {bool: "true or false", int: "a whole number", float: "a number", str: "text"}


def set_value(conn: Connection, key: str, value: Any, *, via: str = "cli") -> Any:
    """Set `key` to `value` (checked for its kind, range, choices), audited as a
    config.set event by the user through `via` (cli, dashboard)."""
    current = get(conn, key)  # refuses an unknown key, naming the known ones
    kind = type(DEFAULTS[key])
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise InvalidArgument(
            f"{key} takes {KINDS.get(kind, kind.__name__)} (now {current!r}, default "
            f"{DEFAULTS[key]!r})"
        )
    if key in RANGES:
        low, high = RANGES[key]
        if not low <= value <= high:
            raise InvalidArgument(
                f"{key} is {low:g}-{high:g} (got {value!r}; now {current!r}, default "
                f"{DEFAULTS[key]!r})",
                low=low,
                high=high,
            )
    if key in URLS and not value.startswith(("http://", "https://")):
        raise InvalidArgument(f"{key} takes an http(s) URL (got {value!r}; now {current!r})")
    if key in CHOICES and value not in CHOICES[key]:
        raise InvalidArgument(f"{key} takes one of {', '.join(CHOICES[key])} (now {current!r})")
    from waymark.storage.events import log_event

    with db.write(conn):
        put_setting(conn, key, json.dumps(value))
        log_event(conn, "config.set", project_id=None, actor="user", key=key, old=current,
                  new=value, via=via)  # fmt: skip
    return value


def all_values(conn: Connection) -> dict[str, Any]:
    stored = {k: json.loads(v) for k, v in all_settings(conn).items()}
    return {k: stored.get(k, default) for k, default in DEFAULTS.items()}
