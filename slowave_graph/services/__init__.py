"""Services: the five tools' behaviour over the graph repository. No MCP types here."""
