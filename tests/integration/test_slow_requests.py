"""No request can hold the HTTP server: connections that dribble their headers, floods of silent
connections and bodies shorter than their Content-Length are closed within seconds, before any
token check, and the server keeps serving (mcp/deadlines.py). Deadlines are shortened here."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from slowave_graph.app import App
from slowave_graph.commands.serve import site
from slowave_graph.mcp.deadlines import BodyDeadline, DeadlineH11Protocol
from slowave_graph.mcp.server import build_server
from slowave_graph.neo4j_local.manager import free_port
from tests.support.servers import _Uvicorn

HEADER_TIMEOUT = 1.0
BODY_TIMEOUT = 1.0
MAX_PENDING = 20


class QuickDeadlines(DeadlineH11Protocol):
    header_timeout = HEADER_TIMEOUT
    max_pending = MAX_PENDING
    max_pending_per_client = MAX_PENDING
    pending: dict[DeadlineH11Protocol, None] = {}  # noqa: RUF012  (its own, not the default's)


@asynccontextmanager
async def guarded_server(app: App, tokens: dict[str, str] | None = None) -> AsyncIterator[int]:
    port = free_port()
    asgi = BodyDeadline(site(app, build_server(app), tokens), timeout=BODY_TIMEOUT)
    config = uvicorn.Config(asgi, host="127.0.0.1", port=port, log_level="warning", http=QuickDeadlines)
    server = _Uvicorn(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        assert not task.done(), task
        await asyncio.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        await task


async def closed_after(reader: asyncio.StreamReader, limit: float) -> tuple[float, bytes]:
    """Seconds until the server closes the connection, and what it said before."""
    started = time.perf_counter()
    said = await asyncio.wait_for(reader.read(), timeout=limit)  # until EOF
    return time.perf_counter() - started, said


async def test_dribbled_headers_and_silent_floods_are_closed(app: App) -> None:
    async with guarded_server(app) as port:
        conns = [await asyncio.open_connection("127.0.0.1", port) for _ in range(100)]
        for _, writer in conns:  # a request line and one header, never the end of the headers
            writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            await writer.drain()
        waits = await asyncio.gather(*(closed_after(r, HEADER_TIMEOUT + 5) for r, _ in conns))
        times = sorted(t for t, _ in waits)
        # 80 evicted at once by the newer ones, the rest at the header deadline: none left open
        assert sum(t < HEADER_TIMEOUT / 2 for t in times) >= 100 - MAX_PENDING
        assert times[-1] < HEADER_TIMEOUT + 2, times[-5:]
        for _, writer in conns:
            writer.close()
        async with httpx2.AsyncClient() as client:
            assert (await client.get(f"http://127.0.0.1:{port}/health")).status_code == 200
        print(f"100 dribbling connections: {100 - MAX_PENDING}+ closed at once, last at {times[-1]:.2f} s")


async def test_a_body_shorter_than_its_length_gets_408_in_time(app: App) -> None:
    async with guarded_server(app) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode()
            + b"Content-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n"
            b'{"jsonrpc":'
        )
        await writer.drain()
        took, said = await closed_after(reader, BODY_TIMEOUT + 5)
        writer.close()
        assert said.startswith(b"HTTP/1.1 408"), said[:200]
        assert took < BODY_TIMEOUT + 2
        async with httpx2.AsyncClient() as client:  # and the server serves on
            assert (await client.get(f"http://127.0.0.1:{port}/health")).status_code == 200
        print(f"short body: 408 and closed after {took:.2f} s")


async def test_a_flood_of_silent_connections_locks_nobody_out(app: App) -> None:
    """200 silent connections held open (each reopened a header deadline after it is closed) while
    /health and an MCP client are served: each newcomer evicts the oldest silent connection, never
    a real one. Refusing newcomers at the cap reset every /health here."""
    async with guarded_server(app) as port:
        stop = asyncio.Event()

        async def hold_one() -> None:
            while not stop.is_set():
                try:
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
                except OSError:
                    await asyncio.sleep(0.01)
                    continue
                await reader.read()  # until the server closes it
                writer.close()
                await asyncio.sleep(HEADER_TIMEOUT)  # and open another (the flood: every 10 s)

        holders = [asyncio.create_task(hold_one()) for _ in range(200)]
        await asyncio.sleep(HEADER_TIMEOUT)  # the flood is on
        latencies = []
        try:
            async with httpx2.AsyncClient(timeout=10) as client:
                for _ in range(20):
                    started = time.perf_counter()
                    assert (await client.get(f"http://127.0.0.1:{port}/health")).status_code == 200
                    latencies.append(time.perf_counter() - started)
                    await asyncio.sleep(0.05)
            async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp")) as mcp:
                assert {t.name for t in (await mcp.list_tools()).tools} >= {"slowave_activate"}
        finally:
            stop.set()
            for holder in holders:
                holder.cancel()
            await asyncio.gather(*holders, return_exceptions=True)
        print(f"under a flood of 200 silent connections: /health p50 {sorted(latencies)[10] * 1000:.1f} ms")


async def test_the_token_is_checked_before_any_body_is_read(app: App) -> None:
    """A request without a valid token is answered 401 at once: the megabyte it announces is never
    waited for nor held."""
    async with guarded_server(app, tokens={"swg_the-token": "someone"}) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode()
            + b"Authorization: Bearer swg_wrong\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000000\r\n\r\n"
        )
        await writer.drain()
        started = time.perf_counter()
        status = await asyncio.wait_for(reader.readline(), timeout=BODY_TIMEOUT + 5)
        took = time.perf_counter() - started
        writer.close()
        assert status.startswith(b"HTTP/1.1 401"), status
        assert took < BODY_TIMEOUT / 2, took  # not after the body deadline
