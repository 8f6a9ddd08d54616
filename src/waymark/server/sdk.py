"""The places where Waymark's server corrects the MCP SDK's defaults.

1. The SDK parses a string argument that looks like JSON (`{"retries": 3}`, `[1, 2]`,
   `null`) into an object before validation, for clients that send lists as strings. For a
   parameter that is a string (or nothing), that refuses a legitimate title and turns the
   title "null" into no title: such a parameter keeps the string it was sent.
2. Every failure reaches the model as `{"error": {code, message, details}}`, as Waymark's
   own errors do: a schema violation is `invalid_argument` naming the fields, an unknown tool
   `not_found`, a crash `internal`. Never a bare "Error executing tool X".
3. The tool definitions go into every model request, so what `tools/list` advertises is
   compact (`compact_input`): no generated titles, no `anyOf` with null for an optional
   argument, one canonical form where an argument also accepts a string, no defaults and no
   bounds (the server applies and checks them), `"items": {}` for a list whose items the
   description shapes or that holds strings (Codex writes `{"type":"string"}` where none is
   given), no `"type":"string"` on a plain string property (the type every client assumes),
   whitespace collapsed; and none of the arguments in `UNADVERTISED`, which serve people and
   scripts more than a model's own judgement (docs/sessions.md, "MCP tools"). Validation still runs
   against the full models, so nothing accepted changes.
4. Stdio is served in the handshake era only (the SDK's `serve_loop`, not its dual-era loop,
   which lets the first request it reads pick the era). A client that probes
   `server/discover` and, tired of waiting for a slow start, initializes, would otherwise find
   the connection locked to the 2026-07-28 era by its abandoned probe, and every request
   without the envelope refused. The handshake loop answers `server/discover` "method not
   found", the answer every client falls back from (front.py gives it at once).
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
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


# Arguments every tool accepts but does not advertise (tool -> names; "name=value" leaves
# one value out of an enum): they cost every model request tokens, and serve a person asking
# for them (explain a packet, a budget, another branch) or a script. docs/sessions.md lists them.
UNADVERTISED: dict[str, tuple[str, ...]] = {
    "recall": (
        "token_budget",
        "include_session",
        "explain",
        "branch",
        "packet",
        "scope",
        "include_inactive",
    ),
    "remember": ("priority", "key"),
    "forget": ("project",),
    "checkpoint": ("operation=record_event", "kind", "summary", "source_key", "project"),
    "status": ("project",),
}


# Tools a client calls by name and no model needs (`hook_tool`): never listed.
HIDDEN = frozenset({"hook"})

TEXTS = [{"type": "string"}, {"type": "array", "items": {}}]  # as compacted


def _same(a: list[Any], b: list[Any]) -> bool:
    return sorted(json.dumps(x, sort_keys=True) for x in a) == sorted(
        json.dumps(x, sort_keys=True) for x in b
    )


def advertised(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Tool `name`'s compact input schema without its UNADVERTISED arguments."""
    schema = compact_input(schema)
    props = schema.get("properties") or {}
    for hidden in UNADVERTISED.get(name, ()):
        arg, _, value = hidden.partition("=")
        if not value:
            props.pop(arg, None)
        elif arg in props and value in props[arg].get("enum", ()):
            props[arg] = {**props[arg], "enum": [v for v in props[arg]["enum"] if v != value]}
    if "required" in schema:
        schema["required"] = [r for r in schema["required"] if r in props]
    return schema


def compact_input(schema: Any) -> Any:
    """`schema` as the model needs to read it (see the module's point 3)."""
    if isinstance(schema, list):
        return [compact_input(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("title", "default", "minimum", "maximum"):
            continue
        if key == "additionalProperties" and value is True:
            continue
        if key == "properties":
            out[key] = {name: _untyped_text(compact_input(prop)) for name, prop in value.items()}
        elif key == "description":
            out[key] = " ".join(value.split())
        else:
            out[key] = compact_input(value)
    members = out.pop("anyOf", None)
    if members is not None:
        members = [m for m in members if m != {"type": "null"}]
        if "description" not in out and _same(members, TEXTS):
            return out  # a string or a list of strings, either accepted: advertised bare
        arrays = [m for m in members if m.get("type") == "array"]
        chosen = arrays[:1] if arrays else members  # the canonical form of a list argument
        if len(chosen) == 1:
            out = {**chosen[0], **out}
        else:
            out["anyOf"] = chosen
    if out.get("type") == "object" and "description" in out:
        out.pop("additionalProperties", None)  # the description gives the shape
    if "enum" in out and out.get("type") == "string":
        del out["type"]  # the values say it
    if out.get("type") == "array":
        items = out.get("items")
        described = isinstance(out.get("description"), str)
        if items is None or described or items == {"type": "string"} or "anyOf" in items:
            out["items"] = {}  # strings, or the shape the description gives
    return out


def _untyped_text(prop: Any) -> Any:
    """A plain string property without its `"type":"string"`: the one type a client assumes
    when none is given (Codex writes it back before it calls the model)."""
    if (
        isinstance(prop, dict)
        and prop.get("type") == "string"
        and set(prop) <= {"type", "description"}
    ):
        return {k: v for k, v in prop.items() if k != "type"}
    return prop


def _client_of(context: Any) -> str:
    """`claude-code`, `codex` or the name another client gave at `initialize` (Codex names
    itself `codex-mcp-client`); `codex` where no name can be read (a direct call)."""
    try:
        name = str(context.request_context.session.client_params.client_info.name)
    except AttributeError:  # no context, or an SDK that names it otherwise
        return "codex"
    lowered = name.lower()
    return "claude-code" if "claude" in lowered else "codex" if "codex" in lowered else lowered


class Server(MCPServer):
    """MCPServer whose every tool failure carries Waymark's error shape, whose tool
    definitions are compact, and whose stdio speaks one protocol era."""

    waymark_state: Any = None  # the State its tools share (`app.build_server`)

    async def run_stdio_async(self) -> None:
        """Serve stdio in the handshake era only (the module's point 4)."""
        low = self._lowlevel_server
        async with stdio_server() as (read_stream, write_stream), low.lifespan(low) as state:
            await serve_loop(
                low,
                read_stream,
                write_stream,
                lifespan_state=state,
                init_options=low.create_initialization_options(),
            )

    async def list_tools(self) -> list[Any]:
        tools = [tool for tool in await super().list_tools() if tool.name not in HIDDEN]
        for tool in tools:
            tool.input_schema = advertised(tool.name, tool.input_schema)
            if tool.description:
                tool.description = " ".join(tool.description.split())
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            result = await super().call_tool(name, arguments, context)
        except ToolError as exc:
            raise coded(name, exc) from exc.__cause__ or exc
        # The model reads the text: compact JSON of the structured answer, not the SDK's
        # indented copy (a third of the tokens are indentation), so budgets hold as counted.
        structured = getattr(result, "structured_content", None)
        content = getattr(result, "content", None)
        if structured is not None and content and getattr(content[0], "type", "") == "text":
            content[0].text = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
        state = self.waymark_state
        if state is not None and name != "hook" and isinstance(structured, dict) and content:
            # A session whose client ran no SessionStart hook gets its start packet with the
            # first answer (`State.start_once`), as one more field of it: Codex hands the
            # model the structured answer, Claude Code the text.
            import anyio

            packet = await anyio.to_thread.run_sync(state.start_once, _client_of(context))
            if packet:
                structured["session_start"] = packet
                content[0].text = json.dumps(structured, ensure_ascii=False,
                                             separators=(",", ":"))  # fmt: skip
        return result
