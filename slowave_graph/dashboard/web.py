"""The dashboard as a small Starlette app: server-rendered HTML, no JavaScript.

Mounted at /ui by the HTTP server (behind the same bearer auth as /mcp), or served on its own by
`slowave-graph dashboard --serve`. Templates autoescape everything; the Content-Security-Policy
allows no scripts at all, so stored text can never run in the browser.

It only reads, unless SLOWAVE_DASHBOARD_ACTIONS is on: then the memory page has a person's
corrections (suppress, restore, supersede; operator/corrections.py) as POST forms. A cross-site
request cannot make them: each form carries a token only this process can make (an HMAC of the
memory and the action under a secret drawn at start-up, which a foreign page cannot read through
the CSP and the same-origin policy), and a request a browser marks as coming from another site
(Sec-Fetch-Site, Origin) is refused before the token is even looked at.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from slowave_graph import __version__
from slowave_graph.access import bearer
from slowave_graph.contract.common import is_demo_scope
from slowave_graph.dashboard import data
from slowave_graph.dashboard.graph_svg import layout
from slowave_graph.graph.database import Database
from slowave_graph.operator import corrections

if TYPE_CHECKING:
    from slowave_graph.app import App

HERE = Path(__file__).parent
MAX_PAGE = 100_000  # × data.PAGE_SIZE rows: far beyond any scope a person pages through
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    # nothing to other sites; same-origin, so a form's POST carries its real Origin (with
    # no-referrer, Chromium sends "Origin: null", which the Host/Origin check refuses)
    "Referrer-Policy": "same-origin",
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
    env.tests["demo_scope"] = is_demo_scope  # {% if scope is demo_scope %}
    return env


ACTIONS = ("suppress", "restore", "supersede")
MAX_FORM = 64 * 1024  # a supersede's text (8,000 characters, percent-encoded) and a reason fit


class Dashboard:
    def __init__(self, db: Database, app: App | None = None) -> None:
        self.db = db
        # the application behind corrections (supersede embeds the new text); None: read only
        self.app = app
        self.secret = secrets.token_bytes(32)
        self.env = _environment()
        self.env.globals["actions"] = app is not None
        self.css = (HERE / "static" / "dashboard.css").read_text()

    def form_token(self, memory_id: str, action: str) -> str:
        """The token a form for this action on this memory carries (see the module docstring)."""
        return hmac.new(self.secret, f"{action}\0{memory_id}".encode(), hashlib.sha256).hexdigest()

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
        """Whether the request's token may see this scope (access/tokens.py; no grants: all)."""
        return scope is None or bearer.may_use(request.scope, scope)

    def _scope(self, request: Request) -> str | None:
        scope = request.query_params.get("scope", "").strip()
        if not self._granted(request, scope or None):
            raise HTTPException(403, "this scope is not granted to your token")
        return scope or None

    @staticmethod
    def _page(request: Request) -> int:
        """The ?page= number: 0 to MAX_PAGE (a page far beyond would overflow Neo4j's SKIP)."""
        raw = request.query_params.get("page", "0")
        # ASCII digits only, and few of them: str.isdigit also accepts "²" (int() refuses it), and
        # int() of thousands of digits is refused by Python's conversion limit
        if not (raw.isascii() and raw.isdigit() and len(raw) <= 6) or int(raw) > MAX_PAGE:
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
        visible = (
            None if bearer.grants(request.scope) is None else (lambda scope: self._granted(request, scope))
        )
        find = request.query_params.get("find", "").strip()[:200]
        scopes, total = await data.scopes(self.db, visible, find)
        return self.render(
            request, "index.html", title="Scopes", scopes=scopes, total=total, find=find,
            limit=data.INDEX_SCOPES,
        )  # fmt: skip

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
        _within_grants(key, found, lambda scope: self._granted(request, scope))
        context: dict[str, Any] = {key[0]: found}
        if key == "memory":
            context["graph"] = layout(found["graph"]["nodes"], found["graph"]["edges"])
            if self.app is not None:
                context["tokens"] = {a: self.form_token(item_id, a) for a in ACTIONS}
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

    async def maintenance(self, request: Request) -> Response:
        """The latest maintenance passes (a pass limited to a scope shows only to tokens granted it)."""
        runs = await data.maintenance_runs(self.db)
        runs = [r for r in runs if self._granted(request, r.get("only_scope"))]
        return self.render(request, "maintenance.html", title="Maintenance", runs=runs)

    async def sessions(self, request: Request) -> Response:
        return await self._paged_list(request, "sessions", "Sessions", data.sessions)

    async def session(self, request: Request) -> Response:
        return await self._detail(request, "session", data.session, "sessions")

    # ------------------------------------------------------------------------------ corrections
    @staticmethod
    def _cross_site(request: Request) -> bool:
        """Whether the browser says this request comes from another site (or its Origin is not
        this host): such a POST is refused whatever it carries."""
        site = request.headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            return True
        origin = request.headers.get("origin")
        return origin is not None and urlsplit(origin).netloc != request.headers.get("host", "")

    async def _form(self, request: Request) -> dict[str, str]:
        body = await request.body()
        if len(body) > MAX_FORM:
            raise HTTPException(413, "form too large")
        kind = request.headers.get("content-type", "").split(";")[0].strip()
        if kind != "application/x-www-form-urlencoded":
            raise HTTPException(415, "send the form as application/x-www-form-urlencoded")
        try:
            fields = parse_qs(body.decode("utf-8"), max_num_fields=8, strict_parsing=False)
        except (UnicodeDecodeError, ValueError):
            raise HTTPException(400, "the form is not valid") from None
        return {key: values[0] for key, values in fields.items()}

    async def correct(self, request: Request) -> Response:
        """POST /memory/{id}/{action}: a person's correction, then back to the memory page."""
        assert self.app is not None  # the route exists only with an app
        memory_id, action = request.path_params["memory_id"], request.path_params["action"]
        if action not in ACTIONS:
            return self.not_found(request, f"action {action}")
        if self._cross_site(request):
            raise HTTPException(403, "cross-site requests cannot correct memories")
        form = await self._form(request)
        if not hmac.compare_digest(form.get("token", ""), self.form_token(memory_id, action)):
            raise HTTPException(403, "the form is stale or not from this dashboard: reload the page")
        found = await data.memory_scope(self.db, memory_id)
        if found is None or not self._granted(request, found):
            return self.not_found(request, f"memory {memory_id}")
        principal = bearer.principal(request.scope)
        who = f"dashboard:{principal}"
        reason = form.get("reason")
        try:
            if action == "supersede":
                done = await corrections.supersede(
                    self.app, memory_id, form.get("text", ""), reason=reason, scope=found, who=who
                )
            elif action == "suppress":
                done = await corrections.suppress(
                    self.db, memory_id, reason=reason or "", scope=found, who=who
                )
            else:
                done = await corrections.restore(self.db, memory_id, reason=reason, scope=found, who=who)
        except (corrections.CorrectionRefused, corrections.UnknownMemory) as exc:
            message = exc.args[0] if exc.args else str(exc)
            return self.render(
                request, "error.html", http_status=409, title="Not changed",
                message=f"{message}; nothing changed",
            )  # fmt: skip
        target = done.replacement_id or memory_id
        base = request.scope.get("root_path", "")
        return RedirectResponse(f"{base}/memory/{quote(target, safe='')}", status_code=303)

    async def stylesheet(self, request: Request) -> Response:
        return Response(self.css, media_type="text/css", headers={"Cache-Control": "max-age=300"})


def _within_grants(key: str, found: dict[str, Any], granted: Callable[[str | None], bool]) -> None:
    """Drop from a memory or retrieval page what lives in a scope the token is not granted: the
    retrievals of other scopes that assessed a travelling lesson (their questions and reasons), a
    lesson of another scope a retrieval showed (its text)."""
    if key == "memory":
        found["ledger"] = [row for row in found["ledger"] if granted(row.get("retrieval_scope"))]
    elif key == "retrieval":
        found["exposures"] = [row for row in found["exposures"] if granted(row.get("scope"))]


def build_dashboard(db: Database, app: App | None = None) -> Starlette:
    """The dashboard app; mount it (e.g. at /ui) or serve it alone. Given ``app`` (when
    SLOWAVE_DASHBOARD_ACTIONS is on), the memory page also takes a person's corrections;
    otherwise it is GET only and never writes."""
    ui = Dashboard(db, app)
    pages: list[tuple[str, Callable[[Request], Awaitable[Response]]]] = [
        ("/", ui.index),
        ("/memories", ui.memories),
        ("/memory/{memory_id:str}", ui.memory),
        ("/retrievals", ui.retrievals),
        ("/retrieval/{retrieval_id:str}", ui.retrieval),
        ("/procedures", ui.procedures),
        ("/sessions", ui.sessions),
        ("/session/{session_id:str}", ui.session),
        ("/maintenance", ui.maintenance),
        ("/static/dashboard.css", ui.stylesheet),
    ]
    routes = [Route(path, endpoint, methods=["GET"]) for path, endpoint in pages]
    if app is not None:
        routes.append(Route("/memory/{memory_id:str}/{action:str}", ui.correct, methods=["POST"]))
    return Starlette(routes=routes)
