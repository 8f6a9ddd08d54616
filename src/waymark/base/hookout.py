"""What a hook answers with: the one output form both clients accept for model context
(Codex rejects any other key). Hook processes print it; the MCP server's `hook` tool returns
it for Claude Code's `mcp_tool` hooks."""

from __future__ import annotations

from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms


def context_output(name: str, text: str) -> str:
    """`text` as model context from the hook event `name`."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}})
