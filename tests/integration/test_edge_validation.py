"""Input that must be refused at the edge, before it reaches storage: lone surrogates, NUL, numbers
that are not finite, instants that do not exist in UTC, and dashboard page numbers past SKIP's
range. Each gets a clear refusal (invalid_input, or 400 on the dashboard) over every transport —
never a hang, internal_error or bare text — and a repeated commit stores its trajectory once."""

from __future__ import annotations

import json
import os
import random
import subprocess
import threading
from typing import Any

import httpx2
import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.mcp.server import build_server
from tests.support.mcp_helpers import activate, call, commit, error, settle
from tests.support.neo4j import Neo4jTarget
from tests.support.servers import CLIENT_INFO, SERVER

pytestmark = pytest.mark.neo4j


def activate_args(scope: str, **extra: Any) -> dict[str, Any]:
    return {"task": "Check the deploy", "initial_goal": "Find the failing step", "scope": scope, **extra}


def hostile_arguments(scope: str) -> list[tuple[str, dict[str, Any], str]]:
    """(tool, arguments, path the refusal names)."""
    return [
        # (lone surrogates and non-finite numbers cannot leave the SDK's client — it cannot encode
        # the one and sends null for the other: the stdio test sends them raw)
        ("slowave_activate", activate_args(scope, task="noncharacter \uffff"), "task"),
        ("slowave_activate", activate_args(scope, semantic_context="before\x00after"), "semantic_context"),
        ("slowave_activate", activate_args(scope, task_context={"name": "x\x00"}), "task_context.name"),
    ]


async def test_hostile_values_are_invalid_input_in_process(app: App, scope: str) -> None:
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        for tool, arguments, path in hostile_arguments(scope):
            result = await client.call_tool(tool, arguments)
            assert result.is_error is True  # the MCP flag agrees with the envelope
            err = error(result.structured_content or {}, "invalid_input")
            assert path in {fe["path"] for fe in err["field_errors"]}, (arguments, err)
        # nothing was stored by any of them: the scope is still cold
        fine = await activate(client, scope, "Check the deploy")
        assert fine["memory_state"] == "cold_start"
        session = fine["session_id"]
        for when in ("0001-01-01T00:00:00+10:00", "9999-12-31T23:59:59-10:00"):
            remembered = await call(
                client,
                "slowave_remember",
                {"scope": scope, "session_id": session, "content": "x", "type": "fact", "occurred_at": when},
            )
            assert "occurred_at" in {fe["path"] for fe in error(remembered, "invalid_input")["field_errors"]}


def stdio_server(neo4j: Neo4jTarget, text: bool) -> subprocess.Popen[Any]:
    """`serve --transport stdio` with pipes to write lines to and read answers from."""
    return subprocess.Popen(
        [*SERVER, "serve", "--transport", "stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=neo4j.env(),
        text=text,
    )


def test_stdio_answers_every_line_even_hostile_ones(neo4j: Neo4jTarget, scope: str) -> None:
    """Raw lines no SDK client would send: each request gets its envelope and each line that is not
    a message its JSON-RPC error, in order, and the server lives on."""

    def tool_call(ident: int, arguments: str) -> str:
        return json.dumps(
            {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
             "params": {"name": "slowave_activate", "arguments": "ARGS"}}
        ).replace('"ARGS"', arguments)  # fmt: skip

    base = f'"initial_goal":"g","scope":"{scope}"'
    parse, invalid = -32700, -32600
    lines: list[tuple[str, int | None, int | None]] = [  # (line, answer id, error code)
        (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}), 1, None),
        (json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), None, None),
        (tool_call(2, f'{{"task":"lone \\ud800",{base}}}'), 2, None),
        (tool_call(3, f'{{"task":"t","task_context":{{"k\\udfff":1}},{base}}}'), 3, None),
        (tool_call(4, f'{{"task":"t","task_context":{{"v":NaN}},{base}}}'), 4, None),
        (tool_call(5, f'{{"task":"t","task_context":{{"v":1e400}},{base}}}'), 5, None),
        (tool_call(6, f'{{"task":"t","semantic_context":"a\\u0000b",{base}}}'), 6, None),
        # nested deeper than the parsers go, once through the surrogate repair: refused, not fatal
        ('{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\\u0041","b":'
         + "[" * 1500 + "]" * 1500 + "}}", None, parse),
        ("[" * 1500, None, parse),
        ("not JSON at all", None, parse),
        ('{"jsonrpc":"2.0","id":8,"method":"ping","params":{"a":"x\x00y"}}', None, parse),  # a raw NUL
        ('{"jsonrpc":"2.0","id":' + "9" * 5000 + ',"method":"ping"}', None, parse),
        ('{"id":10,"hello":"world"}', 10, invalid),  # JSON, not JSON-RPC: the id is echoed
        ('{"jsonrpc":"2.0","id":"x\\ud800","method":"ping"}', None, invalid),  # an id no client matches
        ("[1, 2, 3]", None, invalid),
        (tool_call(7, f'{{"task":"t",{base}}}'), 7, None),
    ]  # fmt: skip
    proc = stdio_server(neo4j, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    answers: dict[int, dict[str, Any]] = {}
    try:
        for line, ident, code in lines:  # one line at a time, as a client waits for each answer
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            if ident is None and code is None:
                continue  # a notification
            message = json.loads(proc.stdout.readline())
            assert message["id"] == ident, (line[:80], message)
            if code is not None:
                assert message["error"]["code"] == code, (line[:80], message)
            else:
                assert ident is not None
                answers[ident] = message
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
    assert sorted(answers) == [1, 2, 3, 4, 5, 6, 7]
    for ident in (2, 3, 4, 5, 6):
        result = answers[ident]["result"]
        assert result["isError"] is True, answers[ident]
        refused = result["structuredContent"]
        assert refused["ok"] is False and refused["error"]["code"] == "invalid_input", refused
    assert answers[7]["result"]["structuredContent"]["ok"] is True


def test_dashboard_page_numbers_past_the_range_are_400(http_url: str, scope: str) -> None:
    ui = http_url.replace("/mcp", "/ui")
    for page in ("922337203685477580", "-1", "2.5"):
        response = httpx2.get(f"{ui}/memories", params={"scope": scope, "page": page})
        assert response.status_code == 400, (page, response.status_code, response.text[:200])
    assert httpx2.get(f"{ui}/memories", params={"scope": scope, "page": "3"}).status_code == 200


async def test_a_repeated_commit_stores_its_trajectory_once(app: App, scope: str) -> None:
    trajectory = [
        {"kind": "action", "summary": "Ran the deploy script", "status": "failed"},
        {"kind": "observation", "summary": "The migration step timed out", "status": "succeeded"},
    ]
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        act = await activate(client, scope, "Deploy the shop")
        await settle(client, act)
        done = [await commit(client, act["session_id"], trajectory=trajectory) for _ in range(3)]
    assert [d["operation"] for d in done] == ["closed", "updated", "updated"]
    found = await app.db.driver.execute_query(
        "MATCH (:Session {id: $id})-[:RECORDED]->(e:Event {type: 'trajectory'}) RETURN count(e) AS n",
        id=act["session_id"],
        database_=app.db.database,
    )
    assert found.records[0]["n"] == len(trajectory)


async def test_scope_names_that_only_look_alike_warn_and_invisible_ones_are_refused(
    app: App, scope: str
) -> None:
    kind, name = scope.split(":", 1)
    lookalike = f"{kind}:{name}-sh\u043ep"  # a Cyrillic о
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        act = await activate(client, f"{kind}:{name}-shop", "Record the shop's deploy rules")
        await call(
            client,
            "slowave_remember",
            {"scope": f"{kind}:{name}-shop", "session_id": act["session_id"], "content": "Deploys run at 9",
             "type": "fact"},
        )  # fmt: skip
        twin = await activate(client, lookalike, "Record the shop's deploy rules")
        assert [w["code"] for w in twin["warnings"]] == ["scope_fragmentation"], twin["warnings"]
        hidden = await call(client, "slowave_activate", activate_args(f"{kind}:{name}\u200b-shop"))
        assert "scope" in {fe["path"] for fe in error(hidden, "invalid_input")["field_errors"]}


def test_stdio_answers_each_of_many_random_lines(neo4j: Neo4jTarget) -> None:
    """Random bytes, line after line (SLOWAVE_FUZZ_EXAMPLES of them; `make fuzz` sends 10,000): one
    JSON-RPC error per line, and a request after them is still answered."""
    rng = random.Random(11)
    count = int(os.environ.get("SLOWAVE_FUZZ_EXAMPLES", "200"))
    garbage = []
    while len(garbage) < count:
        raw = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 120))).replace(b"\n", b"")
        if raw.decode("utf-8", errors="replace").strip():
            garbage.append(raw)
    proc = stdio_server(neo4j, text=False)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        stdin = proc.stdin
        lines = (
            b"".join(line + b"\n" for line in garbage) + b'{"jsonrpc":"2.0","id":"last","method":"ping"}\n'
        )
        # written from a thread: the answers must be read while the lines go in, or both pipes fill
        writer = threading.Thread(target=lambda: (stdin.write(lines), stdin.flush()))
        writer.start()
        answers = [json.loads(proc.stdout.readline()) for _ in range(count + 1)]
        writer.join()
        stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
    assert all(a["error"]["code"] in (-32700, -32600) and a["id"] is None for a in answers[:-1])
    assert answers[-1] == {"jsonrpc": "2.0", "id": "last", "result": {}}
