"""Packets: what the hooks and the MCP `recall` tool put in front of the model, built from
budgeted sections."""
