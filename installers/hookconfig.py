"""Waymark's hooks inside a JSON hooks config: Claude Code's settings.json and Codex's
hooks.json share the shape `{"hooks": {"<Event>": [{"matcher"?, "hooks": [handler]}]}}`.

A handler is Waymark's when its command runs a `waymark.hooks.*` module, or when it calls the
`hook` tool of Waymark's MCP server (no tag key: Claude Code and Codex validate these objects). `strip` removes every such handler, then the
containers the manifest says we created, once they are empty; `add` appends one matcher
group per event. `strip(add(x)) == x` byte for byte, which the installer checks.
"""

from __future__ import annotations

from typing import Any

from waymark.errors import InstallRefused

from . import jsonedit
from .commands import is_ours
from .files import display


def document(text: str | None, path: str) -> dict[str, Any]:
    """The parsed file ({} when missing or blank); refuses anything but an object."""
    if text is None or not text.strip():
        return {}
    doc = jsonedit.parse(text, path)
    if not isinstance(doc, dict):
        raise InstallRefused(
            f"{display(path)} holds a JSON {type(doc).__name__}, expected an object; "
            "nothing was changed",
            path=path,
        )
    hooks = doc.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise InstallRefused(
            f'{display(path)}: "hooks" is a JSON {type(hooks).__name__}, expected an object; '
            "nothing was changed",
            path=path,
        )
    return doc


def _find_ours(doc: dict[str, Any]) -> tuple[str, int, int | None] | None:
    """The first Waymark handler: (event, group index, handler index or None = whole group)."""
    for event, groups in (doc.get("hooks") or {}).items():
        if not isinstance(groups, list):
            continue
        for gi, group in enumerate(groups):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list) or not handlers:
                continue
            mine = [is_ours(h) for h in handlers]
            if all(mine):
                return event, gi, None
            if any(mine):
                return event, gi, mine.index(True)
    return None


def strip(text: str, path: str, owned: dict) -> str:
    """`text` without Waymark's handlers and without the containers we created, if empty."""
    while True:
        doc = document(text, path)
        found = _find_ours(doc)
        if found is None:
            break
        event, gi, hi = found
        root = jsonedit.scan(text)
        groups = jsonedit.path_node(root, ["hooks", event])
        assert groups is not None
        if hi is None:
            text = jsonedit.remove_child(text, groups, gi)
        else:
            handlers = groups.items[gi].get("hooks")
            assert handlers is not None
            text = jsonedit.remove_child(text, handlers, hi)
    return tidy(text, owned)


def tidy(text: str, owned: dict) -> str:
    """Containers we created go once empty; containers that were empty get back their
    original inside (`{\n}` stays `{\n}`, not `{}`)."""
    for keys in sorted(owned.get("created", []), key=len, reverse=True):
        text = remove_if_empty(text, keys)
    for empty in owned.get("empties", []):
        node = jsonedit.path_node(jsonedit.scan(text), empty["keys"])
        if node is not None and node.kind != "scalar" and node.end - node.start == 2:
            text = text[: node.start + 1] + empty["inner"] + text[node.end - 1 :]
    return text


def note_empty(text: str, keys: list[str], empties: list[dict]) -> None:
    """Remember the inside of an existing empty container we are about to fill."""
    node = jsonedit.path_node(jsonedit.scan(text), keys)
    if node is None or node.kind == "scalar" or node.members or node.items:
        return
    inner = text[node.start + 1 : node.end - 1]
    if inner and not any(e["keys"] == keys for e in empties):
        empties.append({"keys": list(keys), "inner": inner})


def remove_if_empty(text: str, keys: list[str]) -> str:
    """Remove the member at `keys` when it is an empty object or array."""
    root = jsonedit.scan(text)
    parent = jsonedit.path_node(root, keys[:-1])
    node = jsonedit.path_node(root, keys)
    if parent is None or node is None or node.kind == "scalar" or node.members or node.items:
        return text
    index = [k for k, _, _ in parent.members].index(keys[-1])
    return jsonedit.remove_child(text, parent, index)


def ensure_container(text: str, path: str, keys: list[str], empty: Any, owned: dict) -> str:
    """`text` with an object/array at `keys`: added empty if missing (noted in
    owned["created"]); an existing empty one has its inside noted in owned["empties"]."""
    note_empty(text, keys[:-1], owned["empties"])
    root = jsonedit.scan(text)
    node = jsonedit.path_node(root, keys)
    kind = "object" if isinstance(empty, dict) else "array"
    if node is not None:
        if node.kind != kind:
            raise InstallRefused(
                f"{display(path)}: {'.'.join(keys)} is not a JSON {kind}; nothing was changed",
                path=path,
            )
        note_empty(text, keys, owned["empties"])
        return text
    parent = jsonedit.path_node(root, keys[:-1])
    assert parent is not None and parent.kind == "object"
    owned["created"].append(list(keys))
    return jsonedit.add_member(text, parent, keys[-1], empty)


def blank_to_object(text: str | None) -> str:
    """A missing or blank file's text as an empty object (the manifest restores the blank)."""
    if text is None:
        return "{}\n"
    return text if text.strip() else "{}" + text


def add(text: str | None, path: str, groups: list[tuple[str, dict]]) -> tuple[str, dict]:
    """`text` with each (event, group) appended; returns the new text and what we own:
    the containers created and the original inside of empty ones we filled."""
    document(text, path)
    text = blank_to_object(text)
    owned: dict[str, list] = {"created": [], "empties": []}
    text = ensure_container(text, path, ["hooks"], {}, owned)
    for event, group in groups:
        text = ensure_container(text, path, ["hooks", event], [], owned)
        node = jsonedit.path_node(jsonedit.scan(text), ["hooks", event])
        assert node is not None
        text = jsonedit.add_item(text, node, group)
    return text, owned
