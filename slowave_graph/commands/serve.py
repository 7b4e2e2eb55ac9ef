"""`slowave-graph serve`: the MCP server over streamable HTTP (default) or stdio, until a signal."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import signal
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from slowave_graph.commands import Common
from slowave_graph.config import Settings
from slowave_graph.telemetry import GC_PAUSES

if TYPE_CHECKING:
    from mcp.server import Server
    from starlette.types import ASGIApp

    from slowave_graph.app import App

log = logging.getLogger("slowave_graph")


def register(sub: Any, common: Common) -> None:
    serve = sub.add_parser("serve", help="run the MCP server (HTTP by default, or stdio)")
    serve.add_argument("--transport", choices=["http", "stdio"], default="http")
    serve.add_argument("--host", help="HTTP bind address (SLOWAVE_HTTP_HOST, default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="HTTP port (SLOWAVE_HTTP_PORT, default 8766)")
    common(serve)
    serve.set_defaults(handler=run)
    # `serve --transport stdio` in one word: clients that parse a server command line with options
    # of their own (the MCP Inspector takes --transport as its own) can still start it
    stdio = sub.add_parser("stdio", help="run the MCP server on stdio (serve --transport stdio)")
    common(stdio)
    stdio.set_defaults(handler=run, transport="stdio")


def run(args: argparse.Namespace, settings: Settings) -> int:
    _serve_until_signal(settings, args.transport)
    return 0


def site(app: App, server: Server[Any], tokens: dict[str, str] | None = None) -> ASGIApp:
    """What `serve` answers over HTTP: /mcp and /health (mcp/server.py) and the dashboard at /ui,
    behind the same token, grants and limits; a person's corrections only when
    SLOWAVE_DASHBOARD_ACTIONS is on."""
    from slowave_graph.dashboard import build_dashboard
    from slowave_graph.mcp.server import http_app

    dashboard = build_dashboard(app.db, app if app.settings.dashboard_actions else None)
    return http_app(app, server, tokens, mounts={"/ui": dashboard})


async def _maintain(app: App) -> None:
    """The server's maintenance pass, every SLOWAVE_MAINTENANCE_INTERVAL; the first waits out the
    start-up's own work (model, concept backfill)."""
    from slowave_graph.operator.maintenance import keep_current

    await keep_current(app, app.settings.maintenance_interval, first_delay=60.0)


def _freeze_startup_heap() -> None:
    """What start-up built (the embedder's Python side, the drivers, the tool schemas) lives as
    long as the process: gc.freeze() takes it out of the collector's reach, so a full collection
    scans only what calls allocated since. Without it every gen-2 collection re-walked the whole
    start-up heap, a pause of tens of milliseconds in the middle of some call (docs/performance.md).
    The pauses that remain are recorded for ``GET /metrics``."""
    gc.collect()
    gc.freeze()
    GC_PAUSES.install()


async def _serve(settings: Settings, transport: str, stop: asyncio.Event) -> None:
    """Serve until the client goes away (stdio) or ``stop`` is set (SIGTERM/SIGINT)."""
    import uvicorn

    from slowave_graph.app import open_app
    from slowave_graph.mcp import stdio
    from slowave_graph.mcp.deadlines import DeadlineH11Protocol
    from slowave_graph.mcp.server import build_server, check_http_exposure

    class Uvicorn(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield  # this CLI owns SIGINT/SIGTERM: it shuts uvicorn down, then the app and Neo4j

    if transport == "http":
        check_http_exposure(settings)  # before minutes of start-up, not after
    background = [_maintain] if settings.maintenance_interval > 0 else []
    async with open_app(settings, background=background) as app:
        server = build_server(app)
        _freeze_startup_heap()
        if transport == "stdio":
            stdio.install()  # every line is answered: the SDK drops one it cannot parse
            log.info("serving MCP on stdio")
            serving = asyncio.ensure_future(server.run_stdio_async())
            stopping = asyncio.ensure_future(stop.wait())
            await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
            for task in (serving, stopping):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await serving
            return
        config = uvicorn.Config(
            site(app, server),
            host=settings.http_host,
            port=settings.http_port,
            log_level=settings.log_level.lower(),
            lifespan="on",
            http=DeadlineH11Protocol,  # headers in time, few connections waiting for theirs
        )
        web = Uvicorn(config)
        watcher = asyncio.ensure_future(stop.wait())
        watcher.add_done_callback(lambda _: setattr(web, "should_exit", True))
        log.info("serving MCP on http://%s:%d/mcp", settings.http_host, settings.http_port)
        try:
            await web.serve()
        finally:
            watcher.cancel()
    log.info("stopped")


def _serve_until_signal(settings: Settings, transport: str) -> None:
    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await _serve(settings, transport, stop)

    # uvloop's event loop where it is installed (not on Windows): with httptools, a lower one-client
    # p50 over HTTP (docs/performance.md, "Design choices, with their measured effect")
    try:
        import uvloop
    except ImportError:
        asyncio.run(main())
    else:
        uvloop.run(main())
