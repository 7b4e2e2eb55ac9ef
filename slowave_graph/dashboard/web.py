"""The dashboard as a small read-only Starlette app: server-rendered HTML, no JavaScript.

Mounted at /ui by the HTTP server (behind the same bearer auth as /mcp), or served on its own by
`slowave-graph dashboard --serve`. Templates autoescape everything; the Content-Security-Policy
allows no scripts at all, so stored text can never run in the browser.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from slowave_graph import __version__
from slowave_graph.dashboard import data
from slowave_graph.dashboard.graph_svg import layout
from slowave_graph.graph.database import Database
from slowave_graph.mcp.adapter import GRANTS_KEY
from slowave_graph.mcp.tokens import allowed

HERE = Path(__file__).parent
MAX_PAGE = 100_000  # × data.PAGE_SIZE rows: far beyond any scope a person pages through
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _when(value: Any) -> str:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return "" if value is None else str(value)


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = _when
    env.filters["q"] = lambda value: quote(str(value), safe="")
    env.filters["pct"] = lambda value: "" if value is None else f"{float(value):.2f}"
    env.globals["version"] = __version__
    return env


class Dashboard:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.env = _environment()
        self.css = (HERE / "static" / "dashboard.css").read_text()

    def render(self, request: Request, template: str, http_status: int = 200, **context: Any) -> HTMLResponse:
        base = request.scope.get("root_path", "")

        def link(path: str, **params: Any) -> str:
            query = urlencode({k: v for k, v in params.items() if v not in (None, "", 0)})
            return f"{base}{path}" + (f"?{query}" if query else "")

        html = self.env.get_template(template).render(base=base, link=link, **context)
        return HTMLResponse(html, status_code=http_status, headers=SECURITY_HEADERS)

    def not_found(self, request: Request, what: str) -> HTMLResponse:
        return self.render(
            request, "error.html", http_status=404, title="Not found", message=f"{what} not found"
        )

    @staticmethod
    def _granted(request: Request, scope: str | None) -> bool:
        """Whether the request's token may see this scope (mcp/tokens.py; no grants: all)."""
        grants = request.scope.get(GRANTS_KEY)
        return scope is None or allowed(grants, scope)

    def _scope(self, request: Request) -> str | None:
        scope = request.query_params.get("scope", "").strip()
        if not self._granted(request, scope or None):
            raise HTTPException(403, "this scope is not granted to your token")
        return scope or None

    @staticmethod
    def _page(request: Request) -> int:
        """The ?page= number: 0 to MAX_PAGE (a page far beyond would overflow Neo4j's SKIP)."""
        raw = request.query_params.get("page", "0")
        if not raw.isdigit() or int(raw) > MAX_PAGE:
            raise HTTPException(400, f"page must be a whole number from 0 to {MAX_PAGE}")
        return int(raw)

    def _needs_scope(self, request: Request) -> HTMLResponse:
        return self.render(
            request,
            "error.html",
            http_status=400,
            title="Scope missing",
            message="add ?scope=kind:id to the address",
        )

    # ------------------------------------------------------------------------------------ pages
    async def index(self, request: Request) -> Response:
        scopes = [row for row in await data.scopes(self.db) if self._granted(request, row["scope"])]
        return self.render(request, "index.html", title="Scopes", scopes=scopes)

    async def memories(self, request: Request) -> Response:
        scope = self._scope(request)
        if scope is None:
            return self._needs_scope(request)
        status = request.query_params.get("status", "active")
        status_filter = status if status in data.STATUSES else None
        query = request.query_params.get("q", "")[:500]
        page = self._page(request)
        rows, more, counts = await data.memories(self.db, scope, status_filter, query, page)
        return self.render(
            request,
            "memories.html",
            title=f"Memories · {scope}",
            scope=scope,
            tab="memories",
            rows=rows,
            more=more,
            page=page,
            counts=counts,
            status=status_filter or "all",
            query=query,
        )

    async def _paged_list(
        self,
        request: Request,
        tab: str,
        label: str,
        fetch: Callable[[Database, str, int], Awaitable[tuple[list[dict[str, Any]], bool]]],
    ) -> Response:
        """A scope's retrievals or sessions, newest first, a page at a time."""
        scope = self._scope(request)
        if scope is None:
            return self._needs_scope(request)
        page = self._page(request)
        rows, more = await fetch(self.db, scope, page)
        return self.render(
            request, f"{tab}.html", title=f"{label} · {scope}", scope=scope, tab=tab, rows=rows, more=more,
            page=page,
        )  # fmt: skip

    async def _detail(
        self,
        request: Request,
        key: str,
        fetch: Callable[[Database, str], Awaitable[dict[str, Any] | None]],
        tab: str,
    ) -> Response:
        """One memory, retrieval or session. ``key`` names the path parameter (``<key>_id``), the
        template (``<key>.html``, which sees the record as the key's initial: m, r, s) and the part
        of the record that holds the item's own fields (its scope picks the navigation)."""
        item_id = request.path_params[f"{key}_id"]
        found = await fetch(self.db, item_id)
        if found is None or not self._granted(request, found[key].get("scope")):
            return self.not_found(request, f"{key} {item_id}")
        context: dict[str, Any] = {key[0]: found}
        if key == "memory":
            context["graph"] = layout(found["graph"]["nodes"], found["graph"]["edges"])
        scope = found[key].get("scope")
        return self.render(request, f"{key}.html", title=item_id, scope=scope, tab=tab, **context)

    async def memory(self, request: Request) -> Response:
        return await self._detail(request, "memory", data.memory, "memories")

    async def retrievals(self, request: Request) -> Response:
        return await self._paged_list(request, "retrievals", "Retrievals", data.retrievals)

    async def retrieval(self, request: Request) -> Response:
        return await self._detail(request, "retrieval", data.retrieval, "retrievals")

    async def procedures(self, request: Request) -> Response:
        scope = self._scope(request)
        if scope is None:
            return self._needs_scope(request)
        rows = await data.procedures(self.db, scope)
        return self.render(
            request,
            "procedures.html",
            title=f"Procedures · {scope}",
            scope=scope,
            tab="procedures",
            rows=rows,
        )

    async def sessions(self, request: Request) -> Response:
        return await self._paged_list(request, "sessions", "Sessions", data.sessions)

    async def session(self, request: Request) -> Response:
        return await self._detail(request, "session", data.session, "sessions")

    async def stylesheet(self, request: Request) -> Response:
        return Response(self.css, media_type="text/css", headers={"Cache-Control": "max-age=300"})


def build_dashboard(db: Database) -> Starlette:
    """The dashboard app; mount it (e.g. at /ui) or serve it alone. GET only: it never writes."""
    ui = Dashboard(db)
    pages: list[tuple[str, Callable[[Request], Awaitable[Response]]]] = [
        ("/", ui.index),
        ("/memories", ui.memories),
        ("/memory/{memory_id:str}", ui.memory),
        ("/retrievals", ui.retrievals),
        ("/retrieval/{retrieval_id:str}", ui.retrieval),
        ("/procedures", ui.procedures),
        ("/sessions", ui.sessions),
        ("/session/{session_id:str}", ui.session),
        ("/static/dashboard.css", ui.stylesheet),
    ]
    return Starlette(routes=[Route(path, endpoint, methods=["GET"]) for path, endpoint in pages])
