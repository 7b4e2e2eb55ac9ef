"""The HTTP server process under hostile requests: foreign Host/Origin (DNS rebinding), oversized
bodies, and raw JSON no SDK client would send (lone surrogate escapes, 100,000-deep nesting,
broken JSON). Each gets a clear refusal — never a 5xx — and the server keeps serving."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

pytestmark = pytest.mark.neo4j

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def rpc_messages(response: httpx2.Response) -> list[dict[str, Any]]:
    """JSON-RPC messages of a response, whether plain JSON or server-sent events."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]
    return [response.json()] if response.content else []


def test_foreign_host_and_origin_are_refused(http_url: str) -> None:
    health = http_url.replace("/mcp", "/health")
    port = http_url.split(":")[2].split("/")[0]
    assert httpx2.get(health).status_code == 200
    for url in (health, http_url):
        rebound = httpx2.post(url, json={}, headers={**HEADERS, "Host": f"attacker.example:{port}"})
        assert rebound.status_code == 421, rebound.text
    cross = httpx2.post(http_url, json={}, headers={**HEADERS, "Origin": "https://attacker.example"})
    assert cross.status_code == 403 and cross.json()["error"] == "origin_not_allowed"


def test_oversized_body_gets_413_and_the_server_stays_up(http_url: str) -> None:
    big = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"' + b"a" * (1 << 20) + b'"}}'
    assert httpx2.post(http_url, content=big, headers=HEADERS).status_code == 413
    assert httpx2.get(http_url.replace("/mcp", "/health")).status_code == 200


def test_raw_hostile_json_is_refused_and_the_server_keeps_serving(http_url: str, scope: str) -> None:
    init = httpx2.post(http_url, headers=HEADERS, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    })  # fmt: skip
    assert init.status_code == 200
    session = {**HEADERS, "mcp-session-id": init.headers["mcp-session-id"]}
    assert httpx2.post(
        http_url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
    )

    def tool_call(arguments: str, ident: int) -> str:
        return (f'{{"jsonrpc":"2.0","id":{ident},"method":"tools/call",'
                f'"params":{{"name":"slowave_activate","arguments":{arguments}}}}}')  # fmt: skip

    depth = 100_000
    nested = '{"a":' * depth + "1" + "}" * depth
    hostile = [
        tool_call(f'{{"task":"\\ud800 lone","initial_goal":"g","scope":"{scope}"}}', 2),
        tool_call(f'{{"task":"t","initial_goal":"g","scope":"{scope}","semantic_context":"\\udfff"}}', 3),
        tool_call(f'{{"task":"t","initial_goal":"g","scope":"{scope}","task_context":{{"k\\udfff":1}}}}', 8),
        tool_call(f'{{"task":"t","initial_goal":"g","scope":"{scope}","task_context":{{"v":NaN}}}}', 10),
        tool_call(f'{{"task":"t","initial_goal":"g","scope":"{scope}","task_context":{nested}}}', 4),
        tool_call(f'{{"task":"t","initial_goal":"g","scope":"{scope}","page_size":1e999}}', 5),
        '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":',
        "[" * depth,
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}',
    ]
    for body in hostile:
        response = httpx2.post(http_url, content=body.encode(), headers=session)
        assert response.status_code < 500, (body[:80], response.status_code, response.text[:300])
        for message in rpc_messages(response):
            result = message.get("result")
            if result is not None and "structuredContent" in result:  # one of our tools: the envelope
                assert result["structuredContent"]["ok"] is False, message
            elif result is not None:  # the SDK itself: no such tool
                assert result["isError"] is True and "no_such_tool" in body, message
            else:
                assert "error" in message, message

    fine = httpx2.post(http_url, headers=session, content=tool_call(
        f'{{"task":"t","initial_goal":"g","scope":"{scope}"}}', 9).encode())  # fmt: skip
    [answer] = rpc_messages(fine)
    assert answer["result"]["structuredContent"]["ok"] is True
    assert httpx2.get(http_url.replace("/mcp", "/health")).status_code == 200
