"""The server as users run it: a separate process over stdio or streamable HTTP, real MCP clients."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from slowave_graph.embedding.embedder import DEFAULT_MODEL
from slowave_graph.neo4j_local.manager import free_port, pid_alive
from tests.support.mcp_helpers import TOOL_NAMES, activate, call, error, remember
from tests.support.neo4j import Neo4jTarget
from tests.support.servers import CLIENT_INFO, SERVER, http_server, stdio_params

pytestmark = pytest.mark.neo4j


async def lifecycle(client: Client, scope: str) -> None:
    """Remember, then find it by paraphrase; reject a bad call with the envelope."""
    session = (await activate(client, scope, "Investigate Atlas logins"))["session_id"]
    await remember(client, scope, session, "Atlas authentication credentials expire after 45 minutes")
    found = await activate(client, scope, "How long do Atlas login tokens remain valid?")
    assert [m["content"] for m in found["memories"]] == [
        "Atlas authentication credentials expire after 45 minutes"
    ]
    assert found["memories"][0]["provenance"]["integration"] == "transport-test"
    bad = await call(client, "slowave_activate", {"task": "t", "initial_goal": "g", "scope": "nocolon"})
    assert error(bad, "invalid_input")["field_errors"][0]["path"] == "scope"


@pytest.mark.parametrize("scheme", ["bolt", "neo4j"])
async def test_stdio_server_over_bolt_and_routing_uri(neo4j: Neo4jTarget, scope: str, scheme: str) -> None:
    env = neo4j.env()
    env["NEO4J_URI"] = neo4j.uri.replace("bolt://", f"{scheme}://")
    async with Client(stdio_params(env), client_info=CLIENT_INFO) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == TOOL_NAMES
        await lifecycle(client, scope)


def test_stdio_stdout_carries_only_json_rpc(neo4j: Neo4jTarget, scope: str, tmp_path: Path) -> None:
    """Every byte the server writes to stdout is a JSON-RPC message (logs go to stderr)."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "slowave_activate",
            "arguments": {"task": "t", "initial_goal": "g", "scope": scope}}},
    ]  # fmt: skip
    stderr_path = tmp_path / "stderr.log"
    with open(stderr_path, "w") as stderr_file:
        proc = subprocess.Popen(
            [*SERVER, "serve", "--transport", "stdio", "--log-level", "DEBUG"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr_file,
            env=neo4j.env(),
            text=True,
        )
    assert proc.stdin is not None and proc.stdout is not None
    lines: list[str] = []
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:
                lines.append(proc.stdout.readline())
        proc.stdin.close()  # EOF: the server shuts down
        lines.extend(line for line in proc.stdout.read().splitlines() if line)
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
    parsed = [json.loads(line) for line in lines]  # raises on any non-JSON line
    assert all(p.get("jsonrpc") == "2.0" for p in parsed)
    assert [p.get("id") for p in parsed] == [1, 2, 3]
    assert parsed[2]["result"]["structuredContent"]["ok"] is True
    assert "serving MCP on stdio" in stderr_path.read_text(), "logs belong on stderr"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_http_server(http_url: str, scope: str, mode: Any) -> None:
    health = httpx2.get(http_url.replace("/mcp", "/health")).json()
    assert health["status"] == "ok" and health["embedding_model"] == DEFAULT_MODEL
    async with Client(http_url, client_info=CLIENT_INFO, mode=mode) as client:
        await lifecycle(client, scope)
    metrics = httpx2.get(http_url.replace("/mcp", "/metrics")).json()
    assert metrics["tools"]["slowave_remember"]["calls"] >= 1
    assert metrics["group_commits"]["remember_call"]["alone"] >= 1  # one client: nothing to share


async def test_http_bearer_token(neo4j: Neo4jTarget, scope: str) -> None:
    port = free_port()
    env = {**neo4j.env(), "SLOWAVE_AUTH_TOKEN": "s3cret-token"}
    with http_server(env, port):
        url = f"http://127.0.0.1:{port}/mcp"
        denied = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert denied.status_code == 401
        wrong = httpx2.post(url, json={}, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        async with httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token"}) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, client_info=CLIENT_INFO) as client:
                await lifecycle(client, scope)


def test_http_refuses_public_bind_without_token(neo4j: Neo4jTarget) -> None:
    env = {**neo4j.env(), "SLOWAVE_HTTP_HOST": "0.0.0.0"}
    proc = subprocess.run(
        [*SERVER, "serve", "--transport", "http", "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode != 0
    assert "SLOWAVE_AUTH_TOKEN" in proc.stderr


def _managed_env(tmp_path: Path, linger: int = 0) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "SLOWAVE_"))}
    if "SLOWAVE_CACHE_DIR" in os.environ:
        env["SLOWAVE_CACHE_DIR"] = os.environ["SLOWAVE_CACHE_DIR"]
    env.update(SLOWAVE_DATA_DIR=str(tmp_path / "data"), SLOWAVE_NEO4J_BOLT_PORT=str(free_port()),
               SLOWAVE_NEO4J_HEAP="512m", SLOWAVE_NEO4J_PAGECACHE="128m",
               SLOWAVE_NEO4J_LINGER=str(linger))  # fmt: skip
    return env


def _status(env: dict[str, str]) -> dict[str, Any]:
    status: dict[str, Any] = json.loads(_cli(env, "neo4j", "status").stdout)
    return status


def _reaper_pid(env: dict[str, str]) -> int:
    marker = next(Path(env["SLOWAVE_DATA_DIR"]).glob("*/lingering.json"))
    return int(json.loads(marker.read_text())["pid"])


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SERVER, *args], env=env, capture_output=True, text=True, timeout=300)


def test_neo4j_start_keeps_running_until_stop(tmp_path: Path) -> None:
    env = _managed_env(tmp_path)
    started = _cli(env, "neo4j", "start")
    assert started.returncode == 0, started.stderr
    info = json.loads(started.stdout)
    try:
        assert info["started"] is True and info["running"] is True
        assert info["rss_mb"] > 50
        again = json.loads(_cli(env, "neo4j", "start").stdout)
        assert again["started"] is False and again["pid"] == info["pid"]
        # a short-lived command joins it and must not stop it
        assert _cli(env, "stats").returncode == 0
        assert json.loads(_cli(env, "neo4j", "status").stdout)["running"] is True
    finally:
        stopped = json.loads(_cli(env, "neo4j", "stop").stdout)
    assert stopped == {"stopped": True}
    assert json.loads(_cli(env, "neo4j", "status").stdout)["running"] is False


async def test_serve_runs_its_own_neo4j_which_lingers_for_the_next_conversation(
    tmp_path: Path, scope: str
) -> None:
    """The Quick start path: no NEO4J_URI → managed Neo4j started by serve; after serve exits it
    lingers, the next (stdio) conversation joins it, and once that one's linger runs out it stops."""
    env = _managed_env(tmp_path, linger=300)
    port = free_port()
    with http_server(env, port) as proc:
        status = _status(env)
        assert status["running"] is True and status["version"].startswith("2026.")
        assert status["stops_at"] is None  # in use
        assert Path(status["password_file"]).stat().st_mode & 0o777 == 0o600
        async with Client(f"http://127.0.0.1:{port}/mcp", client_info=CLIENT_INFO) as client:
            await lifecycle(client, scope)
        stats = _cli(env, "stats", "--json")  # joins the running Neo4j and leaves it running
        assert stats.returncode == 0, stats.stderr
        counts = json.loads(stats.stdout)
        assert counts["labels"]["Memory"] == 1
        assert [s["scope"] for s in counts["scopes"]] == [scope]
        assert _status(env)["running"] is True
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=90) == 0
    lingering = _status(env)
    assert lingering["pid"] == status["pid"] and lingering["stops_at"] is not None
    short = {**env, "SLOWAVE_NEO4J_LINGER": "3"}  # this one's exit starts a short linger
    with anyio.fail_after(120):  # a linger process holding the server's stdout would hang the exit
        async with Client(stdio_params(short), client_info=CLIENT_INFO) as client:
            assert _status(env)["pid"] == status["pid"]  # joined, not started again
            found = await activate(client, scope, "How long do Atlas login tokens remain valid?")
            assert [m["content"] for m in found["memories"]] == [
                "Atlas authentication credentials expire after 45 minutes"
            ]
    assert _status(env)["pid"] == status["pid"]
    reaper = _reaper_pid(env)
    assert _exits_within(reaper, 60)  # the linger runs out: Neo4j stopped, the process exits
    assert _status(env)["running"] is False
    # gone, or an exited zombie that init has not reaped yet (Neo4j is not serve's child once the
    # lease has handed it over): either way no longer running
    assert not pid_alive(status["pid"])


def _exits_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not pid_alive(pid)
