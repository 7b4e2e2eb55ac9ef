"""`slowave-graph dashboard`: where the read-only dashboard is, or serve it on its own.

The HTTP server (`slowave-graph serve`) serves the dashboard at /ui, behind its bearer token when
one is set. `--serve` runs the dashboard alone against the same Neo4j, without the MCP tools or the
embedding model; it listens on loopback only (like an HTTP server without a token), so a browser
can open it without sending a header.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import webbrowser
from typing import Any

from slowave_graph.clients.spec import http_url
from slowave_graph.commands import Common
from slowave_graph.config import Settings

STANDALONE_PORT = 8767


def register(sub: argparse._SubParsersAction, common: Common) -> None:
    parser = sub.add_parser(
        "dashboard",
        help="print (or open) the dashboard URL, or serve the dashboard on its own",
        description=(
            "The dashboard shows memories per scope (full-text search, status filter), a memory's "
            "provenance, supersession chain, feedback history and association graph, retrievals with "
            "what they exposed and how it was assessed, procedures and sessions. It only reads, "
            "unless SLOWAVE_DASHBOARD_ACTIONS=true: then a memory's page can suppress, restore and "
            "supersede it (recorded, like `slowave-graph memory`)."
        ),
    )
    parser.add_argument("--open", action="store_true", help="open the URL in a web browser")
    parser.add_argument(
        "--serve",
        action="store_true",
        help=f"serve the dashboard alone on 127.0.0.1 (port --port, default {STANDALONE_PORT})",
    )
    parser.add_argument("--host", help="HTTP host of the server (SLOWAVE_HTTP_HOST)")
    parser.add_argument("--port", type=int, help="HTTP port (of the server, or of --serve)")
    common(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.serve:
        port = args.port or STANDALONE_PORT
        url = f"http://127.0.0.1:{port}/ui/"
        mode = "corrections on" if settings.dashboard_actions else "read-only"
        print(f"dashboard at {url} ({mode}; Ctrl-C stops it)", file=sys.stderr)
        if args.open:
            webbrowser.open(url)
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve(settings, port))
        return 0
    url = http_url(settings).removesuffix("/mcp") + "/ui/"
    answering = _answers(url.removesuffix("/ui/") + "/health")
    print(url)
    if not answering:
        print(
            "nothing answers there yet: start `slowave-graph serve`, or run `slowave-graph dashboard "
            "--serve` for the dashboard alone",
            file=sys.stderr,
        )
    elif settings.auth_token is not None:
        print(
            "the server requires its bearer token on /ui too (Authorization: Bearer …); a browser "
            "without it can use `slowave-graph dashboard --serve` (loopback only) instead",
            file=sys.stderr,
        )
    if args.open:
        webbrowser.open(url)
    return 0 if answering else 1


def _answers(url: str) -> bool:
    import httpx2

    try:
        return httpx2.get(url, timeout=3).status_code == 200
    except httpx2.HTTPError:
        return False


def standalone_site(ui: Any, max_body: int) -> Any:
    """The dashboard app on its own, as `--serve` runs it: / leads to /ui/; loopback names only and
    a body limit, as the HTTP server guards /ui — a web page that rebinds its own name to 127.0.0.1
    gets nothing (mcp/security.py), so it can neither read the pages nor lift a form token."""
    from mcp.server.transport_security import RequestBodyLimitMiddleware
    from starlette.applications import Starlette
    from starlette.responses import RedirectResponse
    from starlette.routing import Mount, Route

    from slowave_graph.mcp.security import LOOPBACK_HOSTS, HostGuard

    site = Starlette(routes=[Route("/", lambda request: RedirectResponse("/ui/")), Mount("/ui", ui)])
    return HostGuard(RequestBodyLimitMiddleware(site, max_body), list(LOOPBACK_HOSTS))


async def serve(settings: Settings, port: int) -> None:
    import uvicorn

    from slowave_graph.app import open_app, open_database
    from slowave_graph.dashboard import build_dashboard

    async def run_site(ui: Any) -> None:
        site = standalone_site(ui, settings.http_max_body)
        config = uvicorn.Config(site, host="127.0.0.1", port=port, log_level=settings.log_level.lower())
        await uvicorn.Server(config).serve()

    if settings.dashboard_actions:  # a supersede embeds the corrected text: the whole application
        async with open_app(settings) as app:
            await run_site(build_dashboard(app.db, app))
    else:
        async with open_database(settings) as db:
            await run_site(build_dashboard(db))
