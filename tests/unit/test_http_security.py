"""The HTTP hardening as ASGI middleware, without a server: Host/Origin allow-list (DNS rebinding),
body limit, bearer token (compared in constant time)."""

from __future__ import annotations

import hmac
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from slowave_graph.access.bearer import BearerAuth
from slowave_graph.config import Settings
from slowave_graph.mcp.security import allowed_hosts, harden, host_matches, origin_matches, transport_security


async def echo(request: Request) -> JSONResponse:
    return JSONResponse({"bytes": len(await request.body())})


def inner() -> Starlette:
    return Starlette(routes=[Route("/mcp", echo, methods=["POST"]), Route("/health", echo, methods=["GET"])])


def client(app: Any, host: str = "127.0.0.1:8766") -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=f"http://{host}")


def test_host_patterns() -> None:
    patterns = ["127.0.0.1:*", "[::1]:*", "memory.internal", "proxy.example.com:8443"]
    assert host_matches("127.0.0.1:8766", patterns) and host_matches("[::1]:1", patterns)
    assert host_matches("memory.internal", patterns) and host_matches("proxy.example.com:8443", patterns)
    for bad in ("127.0.0.1", "127.0.0.1:80x", "127.0.0.1.evil.com:80", "evil.com:8766", "memory.internal:1",
                "", "proxy.example.com:8444"):  # fmt: skip
        assert not host_matches(bad, patterns), bad
    assert origin_matches("http://127.0.0.1:3000", patterns)
    assert not origin_matches("http://evil.example", patterns) and not origin_matches("null", patterns)


def test_allowed_hosts_follow_the_bind_address() -> None:
    loopback = Settings.from_env({}, http_allowed_hosts="memory.internal:8766, ")
    assert allowed_hosts(loopback) == ["127.0.0.1:*", "localhost:*", "[::1]:*", "memory.internal:8766"]
    public = Settings.from_env({}, http_host="0.0.0.0")
    assert allowed_hosts(public) == []  # the bearer token guards a public bind
    assert transport_security(public).enable_dns_rebinding_protection is False
    sdk = transport_security(loopback)
    assert sdk.enable_dns_rebinding_protection and "memory.internal:8766" in sdk.allowed_hosts
    assert "https://memory.internal:8766" in sdk.allowed_origins


async def test_foreign_host_and_origin_are_refused_on_every_route() -> None:
    app = harden(inner(), Settings.from_env({}, http_max_body=2048))
    async with client(app) as http:
        assert (await http.get("/health")).status_code == 200
        assert (await http.post("/mcp", content=b"{}")).status_code == 200
        cross = await http.post("/mcp", content=b"{}", headers={"Origin": "http://evil.example"})
        assert cross.status_code == 403 and cross.json()["error"] == "origin_not_allowed"
        same = await http.post("/mcp", content=b"{}", headers={"Origin": "http://localhost:5173"})
        assert same.status_code == 200
    async with client(app, host="evil.example:8766") as http:  # a rebinding page's requests
        for response in (await http.get("/health"), await http.post("/mcp", content=b"{}")):
            assert response.status_code == 421 and response.json()["error"] == "host_not_allowed"


async def test_bodies_over_the_limit_get_413() -> None:
    app = harden(inner(), Settings.from_env({}, http_max_body=2048))
    async with client(app) as http:
        assert (await http.post("/mcp", content=b"x" * 2048)).json() == {"bytes": 2048}
        assert (await http.post("/mcp", content=b"x" * 2049)).status_code == 413

        async def chunks() -> Any:  # no Content-Length: counted while it streams
            for _ in range(5):
                yield b"y" * 1000

        assert (await http.post("/mcp", content=chunks())).status_code == 413


async def test_bearer_token_uses_a_constant_time_comparison(monkeypatch: pytest.MonkeyPatch) -> None:
    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    app = harden(BearerAuth(inner(), {"s3cret": "default"}), Settings.from_env({}))
    async with client(app) as http:
        assert (await http.get("/health")).status_code == 200  # exempt, for load balancers
        for headers in ({}, {"Authorization": "Bearer s3creT"}, {"Authorization": "Bearer s3cret "},
                        {"Authorization": "bearer s3cret"}, {"Authorization": "Bearer x"}):  # fmt: skip
            denied = await http.post("/mcp", content=b"{}", headers=headers)
            assert denied.status_code == 401 and denied.headers["www-authenticate"] == "Bearer"
        assert (
            await http.post("/mcp", content=b"{}", headers={"Authorization": "Bearer s3cret"})
        ).status_code == 200
    # every presented token compared in constant time (no header at all: nothing to compare)
    assert len(compared) == 5 and all(b == b"Bearer s3cret" for _, b in compared)
