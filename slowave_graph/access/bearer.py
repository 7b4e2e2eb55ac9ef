"""The bearer-token layer in front of /mcp, /metrics and the dashboard, and what it leaves for them.

A request that passes names, in its ASGI scope, the principal its token belongs to
(``PRINCIPAL_KEY``) and the scope patterns the token may use (``GRANTS_KEY``; None: all).
``principal`` and ``grants`` read them back, the same way for the MCP adapter and the dashboard;
without the layer (stdio, HTTP with no token) there is one local user with every scope.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from slowave_graph.access.tokens import Identity, TokensFile
from slowave_graph.services.context import LOCAL_PRINCIPAL, MASTER_PRINCIPAL, granted

PRINCIPAL_KEY = "slowave.principal"
GRANTS_KEY = "slowave.grants"


def principal(asgi_scope: Mapping[str, Any]) -> str:
    """Who the request's credentials belong to (the local user when nothing checked them)."""
    found = asgi_scope.get(PRINCIPAL_KEY)
    return found if isinstance(found, str) and found else LOCAL_PRINCIPAL


def grants(asgi_scope: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The scope patterns the request's token may use (None: every scope)."""
    found = asgi_scope.get(GRANTS_KEY)
    return tuple(found) if isinstance(found, tuple | list) else None


def may_use(asgi_scope: Mapping[str, Any], scope: str) -> bool:
    """Whether the request's token is granted ``scope``."""
    return granted(grants(asgi_scope), scope)


# The principal of the one token in SLOWAVE_AUTH_TOKEN: sessions opened with it stay its own when
# the token is rotated.
TOKEN_PRINCIPAL = MASTER_PRINCIPAL


class BearerAuth:
    """Requires ``Authorization: Bearer <token>`` on every request except GET /health, and names
    the principal the token belongs to (``PRINCIPAL_KEY`` in the ASGI scope) and the scopes it may
    use (``GRANTS_KEY``; None: all). Tokens: ``static`` (token → principal, all scopes: the
    SLOWAVE_AUTH_TOKEN) and the tokens file (access/tokens.py), read again when it changes."""

    def __init__(self, app: ASGIApp, static: dict[str, str], file: TokensFile | None = None) -> None:
        self.app = app
        self.expected = [(f"Bearer {token}".encode(), name) for token, name in static.items()]
        self.file = file

    def identify(self, supplied: bytes) -> Identity | None:
        found = None
        for expected, name in self.expected:  # every token compared, in constant time each
            if hmac.compare_digest(supplied, expected):
                found = Identity(name)
        if found is None and self.file is not None and supplied.startswith(b"Bearer "):
            found = self.file.identify(supplied.removeprefix(b"Bearer "))
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path") != "/health":
            supplied = [v for k, v in scope.get("headers") or [] if k == b"authorization"]
            # two Authorization headers are ambiguous (proxies keep different ones): refused
            identity = self.identify(supplied[0]) if len(supplied) == 1 else None
            if identity is None:
                response = JSONResponse(
                    {"error": "unauthorized", "message": "missing or wrong bearer token"},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
                await response(scope, receive, send)
                return
            scope[PRINCIPAL_KEY] = identity.principal
            scope[GRANTS_KEY] = identity.scopes
        await self.app(scope, receive, send)
