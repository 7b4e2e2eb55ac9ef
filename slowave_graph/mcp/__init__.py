"""MCP adapter layer."""
