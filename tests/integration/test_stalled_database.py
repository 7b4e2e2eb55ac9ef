"""A database that stops answering: calls fail within the tool timeout instead of waiting for ever.

Neo4j 2026.09.0 has been seen to accept a statement and never answer it (docs/managed-neo4j.md),
and the driver has no read timeout. The real Neo4j sits behind a TCP proxy here that can stall:
it keeps the connections open and stops passing the server's bytes on, which is what the client
saw then.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from urllib.parse import urlparse

import pytest
from mcp import Client

from slowave_graph.app import open_app
from slowave_graph.embedding.embedder import Embedder
from slowave_graph.mcp.server import build_server
from tests.support.mcp_helpers import activate, call, error
from tests.support.neo4j import Neo4jTarget

TOOL_TIMEOUT = 2.0


class StallingProxy:
    """Forwards Bolt both ways; while stalled, holds back what the server sends."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.server: asyncio.Server | None = None
        self.port = 0

    async def __aenter__(self) -> StallingProxy:
        self.server = await asyncio.start_server(self._connect, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.flowing.set()
        assert self.server is not None
        self.server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.server.wait_closed(), 5)

    async def _connect(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection(*self.target)
        await asyncio.gather(
            self._pump(client_r, server_w, gated=False), self._pump(server_r, client_w, gated=True)
        )

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, gated: bool) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while chunk := await reader.read(65536):
                if gated:
                    await self.flowing.wait()
                writer.write(chunk)
                await writer.drain()
        writer.close()


@pytest.fixture
async def proxy(neo4j: Neo4jTarget) -> AsyncIterator[StallingProxy]:
    target = urlparse(neo4j.uri)
    assert target.hostname is not None and target.port is not None
    async with StallingProxy(target.hostname, target.port) as running:
        yield running


async def test_a_call_the_database_never_answers_fails_within_the_tool_timeout_and_leaves_nothing(
    neo4j: Neo4jTarget, embedder: Embedder, proxy: StallingProxy, scope: str
) -> None:
    settings = neo4j.settings(neo4j_uri=f"bolt://127.0.0.1:{proxy.port}", tool_timeout=TOOL_TIMEOUT)
    async with open_app(settings, embedder=embedder) as app, Client(build_server(app)) as client:
        await activate(client, scope, "Warm the connections")

        proxy.flowing.clear()
        task = "Find the deploy checklist for the stalled region"
        started = time.perf_counter()
        arguments = {"scope": scope, "task": task, "initial_goal": task}
        # bounded here too, so a server without the deadline fails this test instead of hanging it
        envelope = await asyncio.wait_for(call(client, "slowave_activate", arguments), TOOL_TIMEOUT + 10)
        elapsed = time.perf_counter() - started
        err = error(envelope, "unavailable")
        assert err["retryable"] is True and err["outcome_unknown"] is True, err
        assert "did not answer within 2 s" in err["message"]
        assert TOOL_TIMEOUT <= elapsed < TOOL_TIMEOUT + 3, elapsed

        # Once the database answers again, so does the server, and the call that timed out was
        # cancelled before its write: no session holds its task.
        proxy.flowing.set()
        again = await activate(client, scope, "Find the deploy checklist again")
        assert again["session_id"].startswith("sess_")
        await asyncio.sleep(0.5)  # the abandoned reads finish on their threads
        rows = await app.db.driver.execute_query(
            "MATCH (s:Session {scope: $scope, task: $task}) RETURN count(s) AS n", scope=scope, task=task
        )
        assert rows.records[0]["n"] == 0
