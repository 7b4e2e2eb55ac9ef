"""Server processes for tests: stdio parameters and a streamable-HTTP server context."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mcp import StdioServerParameters
from mcp.types import Implementation

from slowave_graph.bench.servers import server_fleet

SERVER = [sys.executable, "-m", "slowave_graph"]
CLIENT_INFO = Implementation(name="transport-test", version="9.9")


def stdio_params(env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "slowave_graph", "serve", "--transport", "stdio"], env=env
    )


@contextmanager
def http_server(env: dict[str, str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    """`slowave-graph serve --transport http` on ``port``, healthy before it is yielded, stopped
    (SIGTERM) afterwards; its log goes to a temporary directory and is shown if it fails to start."""
    logs = Path(tempfile.mkdtemp(prefix="slowave-test-server-"))
    with server_fleet(env, 1, logs, ports=[port]) as (server,):
        yield server.proc
