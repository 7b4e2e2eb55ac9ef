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

from slowave_graph.app import App
from slowave_graph.mcp.deadlines import BodyDeadline, DeadlineH11Protocol
from slowave_graph.mcp.server import build_server, http_app
from slowave_graph.neo4j_local.manager import free_port
from tests.servers import _Uvicorn

HEADER_TIMEOUT = 1.0
BODY_TIMEOUT = 1.0
MAX_PENDING = 20


class QuickDeadlines(DeadlineH11Protocol):
    header_timeout = HEADER_TIMEOUT
    max_pending = MAX_PENDING
    pending: set[DeadlineH11Protocol] = set()  # noqa: RUF012  (its own count, not the default's)


@asynccontextmanager
async def guarded_server(app: App) -> AsyncIterator[int]:
    port = free_port()
    asgi = BodyDeadline(http_app(app, build_server(app)), timeout=BODY_TIMEOUT)
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
        # the 80 beyond the cap at once, the rest at the header deadline: none left open
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
