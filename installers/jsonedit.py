"""Surgical edits of a JSON document: add or remove one member or item, touch nothing else.

The document is scanned into a tree of spans; an edit splices text at those spans, indented
like its neighbours, so the user's formatting stays as it was. Each insertion has an exact
inverse: removing the last member deletes precisely the `,\\n  "key": value` that appending
it added, and emptying a container restores `{}` / `[]`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from waymark.errors import ConfigMalformed

from .files import display

WS = " \t\r\n"


@dataclass
class Node:
    """A JSON value's span; `members` for objects (key, key start, value), `items` for arrays."""

    kind: str  # "object" | "array" | "scalar"
    start: int
    end: int
    members: list[tuple[str, int, Node]] = field(default_factory=list)
    items: list[Node] = field(default_factory=list)

    def get(self, key: str) -> Node | None:
        found = None
        for name, _, value in self.members:
            if name == key:
                found = value  # the last one wins, as in json.loads
        return found


def parse(text: str, path: str) -> Any:
    """The document's value; a malformed one is refused with its file, line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigMalformed(
            f"{display(path)} line {exc.lineno}, column {exc.colno}: {exc.msg}; "
            "fix the file and re-run (nothing was changed)",
            path=path,
            line=exc.lineno,
            column=exc.colno,
        ) from None


def scan(text: str) -> Node:
    """The span tree of a document that `json.loads` accepted."""
    node, _ = _value(text, _skip(text, 0))
    return node


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in WS:
        i += 1
    return i


def _string_end(text: str, i: int) -> int:
    i += 1
    while text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _value(text: str, i: int) -> tuple[Node, int]:
    c = text[i]
    if c == "{":
        node = Node("object", i, i)
        i = _skip(text, i + 1)
        while text[i] != "}":
            key_end = _string_end(text, i)
            key = json.loads(text[i:key_end])
            value, after = _value(text, _skip(text, _skip(text, key_end) + 1))
            node.members.append((key, i, value))
            i = _skip(text, after)
            if text[i] == ",":
                i = _skip(text, i + 1)
        node.end = i + 1
        return node, i + 1
    if c == "[":
        node = Node("array", i, i)
        i = _skip(text, i + 1)
        while text[i] != "]":
            item, after = _value(text, i)
            node.items.append(item)
            i = _skip(text, after)
            if text[i] == ",":
                i = _skip(text, i + 1)
        node.end = i + 1
        return node, i + 1
    if c == '"':
        end = _string_end(text, i)
        return Node("scalar", i, end), end
    end = i
    while end < len(text) and text[end] not in WS + ",]}":
        end += 1
    return Node("scalar", i, end), end


def newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def indent_unit(text: str) -> str:
    """The file's indentation step: the leading whitespace of its first indented line."""
    for line in text.splitlines():
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    line = text[start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _render(value: Any, unit: str, indent: str, nl: str) -> str:
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", nl + indent)


def _children_starts(node: Node) -> list[int]:
    return (
        [k for _, k, _ in node.members] if node.kind == "object" else [n.start for n in node.items]
    )


def _append(text: str, node: Node, piece_for: Any) -> str:
    """Append a child to an object or array; `piece_for(indent)` renders it."""
    nl, unit = newline(text), indent_unit(text)
    starts = _children_starts(node)
    if not starts:
        outer = _line_indent(text, node.start)
        inner = outer + unit
        opening, closing = text[node.start], text[node.end - 1]
        body = opening + nl + inner + piece_for(inner) + nl + outer + closing
        return text[: node.start] + body + text[node.end :]
    last_end = node.members[-1][2].end if node.kind == "object" else node.items[-1].end
    between = text[node.start + 1 : starts[0]]
    if "\n" in between:
        inner = _line_indent(text, starts[0])
        piece = "," + nl + inner + piece_for(inner)
    else:  # a one-line container stays on one line
        piece = ", " + piece_for(None)
    return text[:last_end] + piece + text[last_end:]


def add_member(text: str, node: Node, key: str, value: Any) -> str:
    """`node` (an object of `text`) with `"key": value` appended."""
    nl, unit = newline(text), indent_unit(text)

    def piece(indent: str | None) -> str:
        if indent is None:
            return (
                json.dumps(key, ensure_ascii=False) + ": " + json.dumps(value, ensure_ascii=False)
            )
        return json.dumps(key, ensure_ascii=False) + ": " + _render(value, unit, indent, nl)

    return _append(text, node, piece)


def add_item(text: str, node: Node, value: Any) -> str:
    """`node` (an array of `text`) with `value` appended."""
    nl, unit = newline(text), indent_unit(text)

    def piece(indent: str | None) -> str:
        if indent is None:
            return json.dumps(value, ensure_ascii=False)
        return _render(value, unit, indent, nl)

    return _append(text, node, piece)


def remove_child(text: str, node: Node, index: int) -> str:
    """`node` without its child number `index` (a member or an item) and its separator."""
    starts = _children_starts(node)
    ends = (
        [v.end for _, _, v in node.members]
        if node.kind == "object"
        else [n.end for n in node.items]
    )
    if len(starts) == 1:
        return text[: node.start] + text[node.start] + text[node.end - 1] + text[node.end :]
    if index == len(starts) - 1:
        return text[: ends[index - 1]] + text[ends[index] :]
    return text[: starts[index]] + text[starts[index + 1] :]


def replace_value(text: str, node: Node, new_text: str) -> str:
    return text[: node.start] + new_text + text[node.end :]


def render_value(text: str, node: Node, value: Any) -> str:
    """`value` rendered to stand where `node` starts, indented like that line."""
    return _render(value, indent_unit(text), _line_indent(text, node.start), newline(text))


def new_document(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def path_node(root: Node, keys: list[str]) -> Node | None:
    node: Node | None = root
    for key in keys:
        if node is None or node.kind != "object":
            return None
        node = node.get(key)
    return node
