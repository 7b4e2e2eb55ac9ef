"""`slowave-graph serve` processes for the benchmarks (soak, load, conversations): their environment
and command; over HTTP, start, wait until healthy, stop."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx2

from slowave_graph.config import Settings
from slowave_graph.neo4j_local.manager import free_port

if TYPE_CHECKING:
    from mcp import StdioServerParameters


def server_env(
    settings: Settings, neo4j: Mapping[str, str] | None = None, drop: tuple[str, ...] = (), **extra: str
) -> dict[str, str]:
    """Environment of a server process: this process's own less the variables whose names start
    with one of ``drop``, then its Neo4j (``neo4j``, else ``neo4j_env(settings)``), ``extra``, and
    the embedding model when one is set (unset: the server follows the database's model)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(neo4j_env(settings) if neo4j is None else neo4j)
    env.update(extra)
    if settings.embedding_model:
        env["SLOWAVE_EMBEDDING_MODEL"] = settings.embedding_model
    return env


def neo4j_env(settings: Settings) -> dict[str, str]:
    """How a server process reaches the Neo4j of ``settings``: an external one by its URI and
    login; the managed one through its lease (the same directories, version and port; the caller's
    flags such as --data-dir, --neo4j-version or --bolt-port reach the server too)."""
    if not settings.neo4j_uri:
        return settings.managed_env()
    env = {"NEO4J_URI": settings.neo4j_uri, "NEO4J_USER": settings.neo4j_user}
    if settings.neo4j_password:
        env["NEO4J_PASSWORD"] = settings.neo4j_password.get_secret_value()
    return env


def serve_command(transport: str, *options: str) -> list[str]:
    """`slowave-graph serve` by this interpreter: the installation the caller runs."""
    return [sys.executable, "-m", "slowave_graph", "serve", "--transport", transport, *options]


def stdio_params(env: dict[str, str]) -> StdioServerParameters:
    """A stdio server, as an MCP client such as Claude Desktop spawns one per conversation."""
    from mcp import StdioServerParameters

    command, *args = serve_command("stdio")
    return StdioServerParameters(command=command, args=args, env=env)


@dataclass
class ServerProcess:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


def wait_healthy(servers: list[ServerProcess], timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    pending = list(servers)
    while pending:
        for server in list(pending):
            if server.proc.poll() is not None:
                tail = server.log.read_text(errors="replace")[-2000:] if server.log.exists() else ""
                raise RuntimeError(
                    f"server on port {server.port} exited with {server.proc.returncode}:\n{tail}"
                )
            with contextlib.suppress(httpx2.HTTPError):
                if httpx2.get(f"http://127.0.0.1:{server.port}/health", timeout=2).status_code == 200:
                    pending.remove(server)
        if pending and time.monotonic() > deadline:
            raise RuntimeError(f"{len(pending)} server(s) did not become healthy within {timeout:.0f}s")
        if pending:
            time.sleep(0.3)


def stop_server(server: ServerProcess, timeout: float = 60.0) -> int:
    """SIGTERM (graceful: in-flight calls finish or roll back), SIGKILL after ``timeout``."""
    if server.proc.poll() is None:
        server.proc.send_signal(signal.SIGTERM)
        try:
            server.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            server.proc.wait()
    return int(server.proc.returncode)


@contextlib.contextmanager
def server_fleet(
    env: dict[str, str], count: int, log_dir: Path, ports: list[int] | None = None
) -> Iterator[list[ServerProcess]]:
    """``count`` `slowave-graph serve` processes started in parallel (on ``ports``, else free ones);
    stopped on exit."""
    log_dir.mkdir(parents=True, exist_ok=True)
    servers: list[ServerProcess] = []
    try:
        for i in range(count):
            port = ports[i] if ports else free_port()
            log = log_dir / f"server-{i}-{port}.log"
            with open(log, "wb") as handle:
                proc = subprocess.Popen(
                    serve_command("http", "--port", str(port)),
                    stdout=handle,
                    stderr=subprocess.STDOUT,
                    env=env,
                )
            servers.append(ServerProcess(proc, port, log))
        wait_healthy(servers)
        yield servers
    finally:
        for server in servers:
            stop_server(server)
