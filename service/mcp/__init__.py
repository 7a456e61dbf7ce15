"""Suanli as MCP tools (stdio and streamable HTTP); see :mod:`service.mcp.server`."""
