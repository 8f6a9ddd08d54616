"""The two places where Waymark's server corrects the MCP SDK's defaults.

1. The SDK parses a string argument that looks like JSON (`{"retries": 3}`, `[1, 2]`,
   `null`) into an object before validation, for clients that send lists as strings. For a
   parameter that is a string (or nothing), that refuses a legitimate title and turns the
   title "null" into no title: such a parameter keeps the string it was sent.
2. Every failure reaches the model as `{"error": {code, message, details}}`, as Waymark's
   own errors do: a schema violation is `invalid_argument` naming the fields, an unknown tool
   `not_found`, a crash `internal`. Never a bare "Error executing tool X".
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from pydantic import ValidationError

from waymark.errors import InternalError, InvalidArgument, NotFound, WaymarkError


def _is_text(annotation: Any) -> bool:
    """True for `str` and `str | None` (a string parameter, maybe optional)."""
    if annotation is str:
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = set(typing.get_args(annotation)) - {type(None)}
        return members == {str}
    return False


_sdk_pre_parse = FuncMetadata.pre_parse_json


def _pre_parse_keeping_text(self: FuncMetadata, data: dict[str, Any]) -> dict[str, Any]:
    parsed = _sdk_pre_parse(self, data)
    fields = self.arg_model.model_fields
    for key, value in data.items():
        field = fields.get(key)
        if isinstance(value, str) and field is not None and _is_text(field.annotation):
            parsed[key] = value
    return parsed


FuncMetadata.pre_parse_json = _pre_parse_keeping_text  # type: ignore[method-assign]


def coded(name: str, exc: ToolError) -> ToolError:
    """`exc` carrying `{"error": {...}}`; unchanged when it already does."""
    text = str(exc)
    if '{"error"' in text:
        return exc
    cause = exc.__cause__
    error: WaymarkError
    if isinstance(cause, ValidationError):
        problems = [
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
            for e in cause.errors()
        ]
        error = InvalidArgument(
            f"the arguments of `{name}` do not match its schema: " + "; ".join(problems),
            fields=sorted({".".join(str(p) for p in e["loc"]) for e in cause.errors()}),
        )
    elif text.startswith("Unknown tool"):
        error = NotFound(f"there is no tool named {name!r}", tool=name)
    elif cause is None and not type(exc).__name__.startswith("Unexpected"):
        error = InvalidArgument(text.removeprefix(f"Error executing tool {name}: "))
    else:
        error = InternalError(
            f"internal error in `{name}`: {type(cause).__name__ if cause else 'unknown'}; "
            "the server's log has the traceback",
            cause=type(cause).__name__ if cause else None,
        )
    payload = json.dumps({"error": error.to_dict()}, default=str)
    return type(exc)(f"Error executing tool {name}: {payload}")


class Server(MCPServer):
    """MCPServer whose every tool failure carries Waymark's error shape."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            raise coded(name, exc) from exc.__cause__ or exc
