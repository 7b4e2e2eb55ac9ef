"""HTTP hardening around every route (/mcp, /health, /metrics, /ui): Host and Origin checks against
DNS rebinding, and a request body limit.

DNS rebinding: a web page the user opens can make its own hostname resolve to 127.0.0.1 and then
talk to a server on the loopback interface as if same-origin. Such requests carry the attacker's
hostname in ``Host`` (and usually an ``Origin``), so a loopback server accepts only loopback names
(plus any the operator lists in SLOWAVE_HTTP_ALLOWED_HOSTS). A server bound beyond loopback needs
the bearer token anyway, which a rebinding page does not have; there the Host check applies only
when hosts are listed. The MCP SDK runs the same kind of check on /mcp; it gets the same list.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from slowave_graph.config import Settings

LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts(settings: Settings) -> list[str]:
    """Host header patterns accepted: ``name``, ``name:port`` or ``name:*`` (any port)."""
    extra = [h.strip() for h in settings.http_allowed_hosts.split(",") if h.strip()]
    return [*LOOPBACK_HOSTS, *extra] if is_loopback(settings.http_host) else extra


def host_matches(value: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        if value == pattern:
            return True
        if pattern.endswith(":*") and value.startswith(pattern[:-1]) and value[len(pattern) - 1 :].isdigit():
            return True
    return False


def origin_matches(origin: str, patterns: list[str]) -> bool:
    """An Origin is scheme://host[:port]; it passes when its host part passes the Host check."""
    scheme, sep, rest = origin.partition("://")
    return bool(sep) and scheme in ("http", "https") and host_matches(rest, patterns)


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """The SDK's own /mcp check, given the same allowed hosts (its defaults know only loopback)."""
    hosts = allowed_hosts(settings)
    if not hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


class HostGuard:
    """421 for a Host, 403 for an Origin, that is not allowed (see module docstring)."""

    def __init__(self, app: ASGIApp, patterns: list[str]) -> None:
        self.app = app
        self.patterns = patterns

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.patterns:
            headers = Headers(scope=scope)
            host = headers.get("host", "")
            origin = headers.get("origin")
            problem = None
            if not host_matches(host, self.patterns):
                problem = (421, "host_not_allowed", "this Host is not accepted (SLOWAVE_HTTP_ALLOWED_HOSTS)")
            elif origin is not None and not origin_matches(origin, self.patterns):
                problem = (403, "origin_not_allowed", "cross-origin requests are not accepted")
            if problem is not None:
                status, code, message = problem
                await JSONResponse({"error": code, "message": message}, status_code=status)(
                    scope, receive, send
                )
                return
        await self.app(scope, receive, send)


def harden(
    app: ASGIApp, settings: Settings, authenticate: Callable[[ASGIApp], ASGIApp] = lambda inner: inner
) -> ASGIApp:
    """The Host/Origin check, then the token check (``authenticate``), then the body limit: a
    foreign page gets nothing, not even a 413, and no byte of a body is read (nor held) before its
    token is checked."""
    limited = RequestBodyLimitMiddleware(app, settings.http_max_body)
    return HostGuard(authenticate(limited), allowed_hosts(settings))
