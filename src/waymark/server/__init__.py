"""The MCP stdio server, `waymark mcp`: `front` answers first, `app` is the server and its
tools (`memory_tools`, `checkpoint_tool`), `state` what the process holds."""
