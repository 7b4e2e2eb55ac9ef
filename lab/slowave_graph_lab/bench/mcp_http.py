"""A lean MCP client for the load benchmark: ``tools/call`` as stateless JSON-RPC POSTs over
streamable HTTP (the SDK's modern protocol revision), and nothing else.

The SDK client builds pydantic models of every message and validates each result against the
tool's output schema with jsonschema: CPU on every call, on the same cores as the server and Neo4j,
and inside every latency it measures at one client (docs/performance.md, "Measuring",
``--client``). An agent's own client runs on its own machine, so the load benchmark drives the
server with this one by default (``--client raw``) and with the SDK's on request (``--client sdk``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx2
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY
from mcp_types.version import LATEST_MODERN_VERSION


@dataclass(frozen=True)
class ToolResult:
    """What the benchmark reads of a tool result (the SDK's ``CallToolResult`` has the same names)."""

    structured_content: dict[str, Any] | None
    is_error: bool


class McpHttpError(RuntimeError):
    """A JSON-RPC error answer, or a body that is not one JSON-RPC message."""


class LeanClient:
    """``call_tool`` over one pooled HTTP client; each call is one POST, one JSON answer."""

    def __init__(self, http: httpx2.AsyncClient, url: str, name: str, version: str) -> None:
        self._http = http
        self._url = url
        self._next_id = 0
        self._meta = {
            PROTOCOL_VERSION_META_KEY: LATEST_MODERN_VERSION,
            CLIENT_INFO_META_KEY: {"name": name, "version": version},
            CLIENT_CAPABILITIES_META_KEY: {},
        }
        self._headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            "mcp-protocol-version": LATEST_MODERN_VERSION,
            "mcp-method": "tools/call",
        }

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        self._next_id += 1
        body = {
            "jsonrpc": "2.0",
            "id": self._next_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": self._meta},
        }
        response = await self._http.post(
            self._url, content=json.dumps(body), headers={**self._headers, "mcp-name": name}
        )
        response.raise_for_status()
        message = answer(response.headers.get("content-type", ""), response.text)
        if "error" in message:
            raise McpHttpError(f"{name}: {message['error']}")
        result = message.get("result") or {}
        return ToolResult(result.get("structuredContent"), bool(result.get("isError")))


def answer(content_type: str, text: str) -> dict[str, Any]:
    """The JSON-RPC answer of a response body: plain JSON, or the last event of an SSE stream
    (the server streams when a call outlives its deferral window)."""
    if content_type.startswith("text/event-stream"):
        events = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        if not events:
            raise McpHttpError("an event stream without a data line")
        text = events[-1]
    message = json.loads(text)
    if not isinstance(message, dict):
        raise McpHttpError(f"not a JSON-RPC message: {text[:200]}")
    return message
