"""Waymark's MCP server inside a client's JSON config, under one container object (Claude
Code's `mcpServers` in .claude.json, opencode's `mcp` in opencode.json): added as `waymark`,
an entry of that name already there (not ours) replaced with its exact text kept, so
uninstall puts it back."""

from __future__ import annotations

from typing import Any

from waymark.errors import InstallRefused

from . import commands, hookconfig, jsonedit
from .files import display


def document(text: str | None, path: str, container: list[str]) -> dict[str, Any]:
    """The parsed file, refused when it or the container is not a JSON object."""
    if text is None or not text.strip():
        return {}
    doc = jsonedit.parse(text, path)
    if not isinstance(doc, dict):
        raise InstallRefused(
            f"{display(path)} is not a JSON object; nothing was changed", path=path
        )
    node: Any = doc
    for key in container:
        node = node.get(key) if isinstance(node, dict) else None
    if node is not None and not isinstance(node, dict):
        name = ".".join(container)
        raise InstallRefused(
            f'{display(path)}: "{name}" is not a JSON object; nothing was changed', path=path
        )
    return doc


def add(text: str | None, path: str, container: list[str], entry: dict) -> tuple[str, dict]:
    document(text, path, container)
    text = hookconfig.blank_to_object(text)
    owned: dict[str, Any] = {"mcp_server": commands.MCP_NAME, "created": [], "empties": []}
    text = hookconfig.ensure_container(text, path, container, {}, owned)
    servers = jsonedit.path_node(jsonedit.scan(text), container)
    assert servers is not None
    existing = servers.get(commands.MCP_NAME)
    owned["replaced"] = None
    if existing is not None:
        owned["replaced"] = text[existing.start : existing.end]
        text = jsonedit.replace_value(text, existing, jsonedit.render_value(text, existing, entry))
    else:
        text = jsonedit.add_member(text, servers, commands.MCP_NAME, entry)
    return text, owned


def strip(text: str, path: str, owned: dict, container: list[str]) -> str:
    document(text, path, container)
    if owned.get("mcp_server"):
        servers = jsonedit.path_node(jsonedit.scan(text), container)
        node = servers.get(commands.MCP_NAME) if servers is not None else None
        if servers is not None and node is not None:
            if owned.get("replaced") is not None:
                text = jsonedit.replace_value(text, node, owned["replaced"])
            else:
                index = [k for k, _, _ in servers.members].index(commands.MCP_NAME)
                text = jsonedit.remove_child(text, servers, index)
    return hookconfig.tidy(text, owned)


def is_empty(text: str, path: str) -> bool:
    return not text.strip() or jsonedit.parse(text, path) == {}
