"""The MCP server and its transports: stdio, and streamable HTTP with /health and bearer auth."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from mcp import MCPError, stdio_server
from mcp.server import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.types import (
    INVALID_PARAMS,
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
)
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from slowave_graph import __version__
from slowave_graph.access.bearer import TOKEN_PRINCIPAL, BearerAuth, grants
from slowave_graph.access.tokens import TokensFile
from slowave_graph.app import App
from slowave_graph.config import Settings
from slowave_graph.mcp import stdio
from slowave_graph.mcp.adapter import RequestContext, ToolSet
from slowave_graph.mcp.deadlines import BodyDeadline
from slowave_graph.mcp.security import harden, is_loopback, transport_security
from slowave_graph.mcp.tools import INSTRUCTIONS, build_tools
from slowave_graph.telemetry import GC_PAUSES

log = logging.getLogger(__name__)

HEALTH_TIMEOUT = 5.0


class MemoryServer(Server[Any]):
    """The SDK's low-level server (the tools need it: mcp/adapter.py) with the stdio entry point
    that ``serve --transport stdio`` runs."""

    async def run_stdio_async(self) -> None:
        """stdio with every line answered (``stdio.install`` screens stdin; refused lines are
        answered on the SDK's writer)."""
        async with (
            stdio_server() as (read_stream, write_stream),
            stdio.refusals_answered(read_stream, write_stream) as incoming,
        ):
            await self.run(incoming, write_stream, self.create_initialization_options())


def build_server(app: App) -> MemoryServer:
    tools = ToolSet(build_tools(app.services, app.metrics, app.settings.tool_timeout))
    server = MemoryServer(
        "slowave-graph",
        title="slowave-graph memory",
        version=__version__,
        instructions=INSTRUCTIONS,
        get_tool_input_schema=tools.input_schema,
        on_list_tools=tools.list_tools,
        on_call_tool=tools.call_tool,
        # What the SDK's MCPServer serves for every server, answered the same way, so initialize
        # and server/discover advertise the same capabilities: no prompts, no resources, and
        # subscriptions/listen for clients that follow list changes (2026-07-28).
        on_list_prompts=_no_prompts,
        on_get_prompt=_unknown_prompt,
        on_list_resources=_no_resources,
        on_list_resource_templates=_no_resource_templates,
        on_read_resource=_unknown_resource,
        on_subscriptions_listen=ListenHandler(InMemorySubscriptionBus()),
    )
    # seals the requestState of multi-round calls and refuses one it did not seal (as MCPServer does)
    server.middleware.append(
        RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=server.name)
    )
    return server


async def _no_prompts(ctx: RequestContext, params: PaginatedRequestParams | None) -> ListPromptsResult:
    return ListPromptsResult(prompts=[])


async def _unknown_prompt(ctx: RequestContext, params: GetPromptRequestParams) -> GetPromptResult:
    raise ValueError(f"Unknown prompt: {params.name}")


async def _no_resources(ctx: RequestContext, params: PaginatedRequestParams | None) -> ListResourcesResult:
    return ListResourcesResult(resources=[])


async def _no_resource_templates(
    ctx: RequestContext, params: PaginatedRequestParams | None
) -> ListResourceTemplatesResult:
    return ListResourceTemplatesResult(resource_templates=[])


async def _unknown_resource(ctx: RequestContext, params: ReadResourceRequestParams) -> ReadResourceResult:
    raise MCPError(code=INVALID_PARAMS, message=f"Unknown resource: {params.uri}", data={"uri": params.uri})


def http_routes(app: App) -> list[Route]:
    """The HTTP routes next to /mcp: the dashboard's landing, /health and /metrics."""

    async def root(request: Request) -> RedirectResponse:
        """A person who opens the server's address lands on the dashboard."""
        return RedirectResponse("/ui/")

    async def health(request: Request) -> JSONResponse:
        try:  # answer within seconds: a load balancer must not wait out the tool calls' retry budget
            await asyncio.wait_for(app.db.run_read("server_components"), HEALTH_TIMEOUT)
        except Exception as exc:
            detail = str(exc)[:200] or type(exc).__name__
            return JSONResponse({"status": "unavailable", "neo4j": "down", "detail": detail}, 503)
        info = app.db.server
        return JSONResponse(
            {
                "status": "ok",
                "version": __version__,
                "neo4j": info.version if info else "up",
                "embedding_model": app.embedder.model_name,
            }
        )

    async def metrics(request: Request) -> JSONResponse:
        """Per-tool latency percentiles since start, split into embed / neo4j / python and by
        Neo4j statement, the garbage collector's pauses (when serve installed the monitor), and
        how writes shared commits since start (``group_commits``, graph/group_commit.py).
        DELETE starts a new window (the load benchmark does, between phases). Only for a caller
        that may see every scope (the master token, or no authentication): the figures are the
        whole server's, every tenant's calls included."""
        if grants(request.scope) is not None:
            return JSONResponse({"error": "metrics cover every scope: they need the master token"}, 403)
        snapshot = {
            "tools": app.metrics.snapshot(),
            "gc": GC_PAUSES.snapshot() if GC_PAUSES.installed else None,
            "group_commits": {name: group.stats() for name, group in app.db.groups.items()},
        }
        if request.method == "DELETE":
            app.metrics.reset()
            GC_PAUSES.reset()
        return JSONResponse(snapshot)

    return [
        Route("/", endpoint=root, methods=["GET"]),
        Route("/health", endpoint=health, methods=["GET"]),
        Route("/metrics", endpoint=metrics, methods=["GET", "DELETE"]),
    ]


def check_http_exposure(settings: Settings) -> str | None:
    """The bearer token to require, if any; refuses a non-loopback bind without one (or a tokens
    file)."""
    token = settings.auth_token.get_secret_value() if settings.auth_token else None
    if not is_loopback(settings.http_host) and not token and not settings.tokens_path.exists():
        raise SystemExit(
            f"refusing to listen on {settings.http_host}: binding beyond loopback requires "
            "SLOWAVE_AUTH_TOKEN or named tokens (slowave-graph token add); clients then send "
            "Authorization: Bearer <token>"
        )
    return token


def http_app(
    app: App,
    server: Server[Any],
    tokens: dict[str, str] | None = None,
    mounts: Mapping[str, ASGIApp] | None = None,
) -> ASGIApp:
    """Streamable HTTP at /mcp plus /health, behind the bearer token when one is configured, the
    Host/Origin check and the body limit. ``tokens`` (token → principal) replaces the configured
    token; ``mounts`` (path → ASGI app: the serve command's dashboard) sit behind the same."""
    settings = app.settings
    token = check_http_exposure(settings)
    if tokens is None:
        tokens = {token: TOKEN_PRINCIPAL} if token else {}
    # named tokens once the file exists (then every request needs a token)
    file = TokensFile(settings.tokens_path) if settings.tokens_path.exists() else None
    starlette = server.streamable_http_app(
        streamable_http_path="/mcp",
        host=settings.http_host,
        max_request_body_size=settings.http_max_body,
        transport_security=transport_security(settings),
        custom_starlette_routes=http_routes(app),
    )
    for path, mounted in (mounts or {}).items():
        starlette.mount(path, mounted)

    # the body deadline and the Host/Origin check in front of everything, then the token, then the
    # body limit (see mcp/security.py, mcp/deadlines.py; the header deadline is uvicorn's protocol)
    def authenticate(inner: ASGIApp) -> ASGIApp:
        return BearerAuth(inner, tokens, file) if tokens or file else inner

    return BodyDeadline(harden(starlette, settings, authenticate))
