"""slowave-graph: long-term memory for AI agents over MCP, stored in Neo4j."""

__version__ = "0.1.0"
