"""Server processes for tests: stdio parameters and a streamable-HTTP server context."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx2
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation
from starlette.types import ASGIApp

from slowave_graph.neo4j_local.manager import free_port
from slowave_graph_lab.bench.servers import server_fleet
from slowave_graph_lab.bench.servers import (
    stdio_params as stdio_params,
)  # re-exported for the transport tests

SERVER = [sys.executable, "-m", "slowave_graph"]
CLIENT_INFO = Implementation(name="transport-test", version="9.9")


@contextmanager
def http_server(env: dict[str, str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    """`slowave-graph serve --transport http` on ``port``, healthy before it is yielded, stopped
    (SIGTERM) afterwards; its log goes to a temporary directory and is shown if it fails to start."""
    logs = Path(tempfile.mkdtemp(prefix="slowave-test-server-"))
    with server_fleet(env, 1, logs, ports=[port]) as (server,):
        yield server.proc


class _Uvicorn(uvicorn.Server):
    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # pytest owns the signals


@asynccontextmanager
async def serve_in_process(asgi: ASGIApp) -> AsyncIterator[str]:
    """An ASGI app served on a free loopback port by uvicorn on the test's event loop (so it can use
    the test's App); yields its base URL."""
    port = free_port()
    server = _Uvicorn(uvicorn.Config(asgi, host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        assert not task.done(), task
        await asyncio.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


@asynccontextmanager
async def client_as(base: str, token: str) -> AsyncIterator[Client]:
    """An MCP client of the server at ``base`` that sends this bearer token."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        transport = streamable_http_client(f"{base}/mcp", http_client=http)
        async with Client(transport, client_info=CLIENT_INFO) as client:
            yield client
