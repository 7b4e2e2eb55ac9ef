"""What a client needs to reach this server: the HTTP endpoint (+ bearer token) and the stdio command.

Secrets (the bearer token, a Neo4j password) are carried as ``Secret``: the environment variable a
client reads the value from, and the value itself for the clients that can only hold a literal. A
client file that can reference a variable gets the reference, never the value (registry.py).
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import SecretStr

from slowave_graph.config import Settings

SERVER_NAME = "slowave-graph"
Transport = Literal["http", "stdio"]

# Settings that only concern the HTTP listener: a stdio server spawned by a client does not need them.
_HTTP_ONLY = {"http_host", "http_port", "auth_token"}

# What every client syntax (${NAME}, ${env:NAME}, {env:NAME}, Codex's variable names) can refer to.
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Secret:
    """A secret a client passes on: ``var`` is the environment variable it is read from; ``value``
    is known only when setup saw it (needed just for clients that cannot reference a variable).
    The value stays out of ``repr`` so a traceback or debug print cannot show it."""

    var: str
    value: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class ServerSpec:
    """The server as one client configuration entry describes it."""

    transport: Transport
    url: str
    token: Secret | None
    command: str
    args: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)  # plain settings for a spawned server
    secret_env: tuple[Secret, ...] = ()  # secret settings for a spawned server (NEO4J_PASSWORD)
    name: str = SERVER_NAME

    def with_transport(self, transport: Transport) -> ServerSpec:
        return dataclasses.replace(self, transport=transport)

    @property
    def secrets(self) -> tuple[Secret, ...]:
        """The secrets an entry of this transport carries."""
        if self.transport == "http":
            return (self.token,) if self.token else ()
        return self.secret_env

    @property
    def secret_values(self) -> tuple[str, ...]:
        """Every secret value setup knows (either transport): what output must never show."""
        known = [self.token, *self.secret_env]
        return tuple(s.value for s in known if s is not None and s.value)


def http_url(settings: Settings) -> str:
    """The URL clients use: a wildcard bind is reached over loopback."""
    host = settings.http_host
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{settings.http_port}/mcp"


LAUNCHER = Path("~/.local/bin/slowave-graph")  # written by make serve (scripts/launcher)
_LAUNCHER_MARK = "# slowave-graph launcher (scripts/launcher)"
_LAUNCHES = re.compile(r'^exec "(?P<venv>.+)/bin/slowave-graph" "\$@"$', re.MULTILINE)


def stdio_command(launcher: Path = LAUNCHER) -> tuple[str, tuple[str, ...]]:
    """The absolute command a client spawns (``command_prefix``), serving stdio."""
    command, *args = command_prefix(launcher)
    return command, (*args, "serve", "--transport", "stdio")


def command_prefix(launcher: Path = LAUNCHER) -> list[str]:
    """How another program (a client, a user service) runs this installation: make serve's
    launcher when it runs this installation (its path survives a dependency change, the
    virtualenv's does not), else this installation's console script, else ``python -m``."""
    launcher = launcher.expanduser()
    if _launches(launcher, Path(sys.prefix)):
        return [str(launcher)]
    script = Path(sys.executable).parent / "slowave-graph"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "slowave_graph"]


def _launches(launcher: Path, prefix: Path) -> bool:
    """Whether ``launcher`` is make serve's and the virtualenv it runs (through its stable link)
    is ``prefix``."""
    try:
        text = launcher.read_text()
    except (OSError, UnicodeDecodeError):
        return False
    found = _LAUNCHES.search(text)
    return (
        _LAUNCHER_MARK in text.splitlines()
        and found is not None
        and (Path(found["venv"]).resolve() == prefix.resolve())
    )


def stdio_env(settings: Settings) -> tuple[dict[str, str], tuple[Secret, ...]]:
    """Environment for a spawned stdio server (``settings_env`` without the HTTP settings)."""
    return settings_env(settings, skip=_HTTP_ONLY)


def settings_env(settings: Settings, skip: Iterable[str] = ()) -> tuple[dict[str, str], tuple[Secret, ...]]:
    """Environment for a server another program starts: every setting that differs from its
    default (from the environment or a CLI flag), so it uses the same Neo4j and data as this shell.
    Secret settings come back apart, as variables the client passes on. The managed Neo4j's
    generated password is not among them: the server reads it from its data directory itself."""
    defaults = Settings.from_env({})
    names = Settings.env_names()
    env: dict[str, str] = {}
    secrets: list[Secret] = []
    skipped = set(skip)
    for name, var in names.items():
        if name in skipped:
            continue
        value = getattr(settings, name)
        if value == getattr(defaults, name) or value is None:
            continue
        if isinstance(value, SecretStr):
            secrets.append(Secret(var, value.get_secret_value()))
        else:
            env[var] = str(value)
    return env, tuple(secrets)


def bearer_token(settings: Settings, token_env: str | None = None) -> Secret | None:
    """The bearer token clients send. By default the server's own SLOWAVE_AUTH_TOKEN, so one value,
    kept in the user's environment, serves both; ``token_env`` names another variable (e.g. one
    holding a token from `slowave-graph token add`), which setup reads only for literal-only clients."""
    default_var = Settings.env_names()["auth_token"]
    if token_env is None or token_env == default_var:
        if settings.auth_token is None:
            return None
        return Secret(default_var, settings.auth_token.get_secret_value())
    return Secret(token_env, os.environ.get(token_env) or None)


def spec_from_settings(
    settings: Settings, transport: Transport, url: str | None = None, token_env: str | None = None
) -> ServerSpec:
    command, args = stdio_command()
    env, secret_env = stdio_env(settings)
    return ServerSpec(
        transport=transport,
        url=url or http_url(settings),
        token=bearer_token(settings, token_env),
        command=command,
        args=args,
        env=env,
        secret_env=secret_env,
    )
