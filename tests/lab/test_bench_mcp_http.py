"""The load benchmark's lean MCP client reads a JSON-RPC answer from either response form."""

from __future__ import annotations

import json

import pytest

from slowave_graph_lab.bench.mcp_http import McpHttpError, answer

MESSAGE = {"jsonrpc": "2.0", "id": 7, "result": {"structuredContent": {"ok": True, "data": {}}}}


def test_a_json_body_is_the_answer() -> None:
    assert answer("application/json", json.dumps(MESSAGE)) == MESSAGE


def test_an_event_stream_answers_with_its_last_event() -> None:
    stream = f": ping\r\n\r\nevent: message\r\ndata: {json.dumps({'jsonrpc': '2.0', 'method': 'x'})}\r\n\r\n"
    stream += f"event: message\r\ndata: {json.dumps(MESSAGE)}\r\n\r\n"
    assert answer("text/event-stream", stream) == MESSAGE


def test_a_body_that_is_no_message_is_an_error() -> None:
    with pytest.raises(McpHttpError):
        answer("text/event-stream", ": ping\r\n\r\n")
    with pytest.raises(McpHttpError):
        answer("application/json", "[1, 2]")
