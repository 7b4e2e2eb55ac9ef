"""What a client needs to reach this server: the HTTP endpoint (+ bearer token) and the stdio command."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from slowave_graph.config import Settings

SERVER_NAME = "slowave-graph"
Transport = Literal["http", "stdio"]

# Settings that only concern the HTTP listener: a stdio server spawned by a client does not need them.
_HTTP_ONLY = {"http_host", "http_port", "auth_token"}


@dataclass(frozen=True)
class ServerSpec:
    """The server as one client configuration entry describes it."""

    transport: Transport
    url: str
    token: str | None
    command: str
    args: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    name: str = SERVER_NAME

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def with_transport(self, transport: Transport) -> ServerSpec:
        return ServerSpec(transport, self.url, self.token, self.command, self.args, self.env, self.name)


def http_url(settings: Settings) -> str:
    """The URL clients use: a wildcard bind is reached over loopback."""
    host = settings.http_host
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{settings.http_port}/mcp"


def stdio_command() -> tuple[str, tuple[str, ...]]:
    """The absolute command a client spawns: this installation's console script, else ``python -m``."""
    script = Path(sys.executable).parent / "slowave-graph"
    if script.is_file():
        return str(script), ("serve", "--transport", "stdio")
    return sys.executable, ("-m", "slowave_graph", "serve", "--transport", "stdio")


def stdio_env(settings: Settings) -> dict[str, str]:
    """Environment for a spawned server: every setting that differs from its default (from the
    environment or a CLI flag), so the client's server uses the same Neo4j and data as this shell."""
    defaults = Settings.from_env({})
    names = Settings.env_names()
    env: dict[str, str] = {}
    for name, var in names.items():
        if name in _HTTP_ONLY:
            continue
        value = getattr(settings, name)
        if value == getattr(defaults, name) or value is None:
            continue
        if hasattr(value, "get_secret_value"):
            value = value.get_secret_value()
        env[var] = str(value)
    return env


def spec_from_settings(settings: Settings, transport: Transport, url: str | None = None) -> ServerSpec:
    command, args = stdio_command()
    token = settings.auth_token.get_secret_value() if settings.auth_token else None
    return ServerSpec(
        transport=transport,
        url=url or http_url(settings),
        token=token,
        command=command,
        args=args,
        env=stdio_env(settings),
    )
