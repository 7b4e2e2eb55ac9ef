"""Server processes for tests: stdio parameters and a streamable-HTTP server context."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
from mcp import StdioServerParameters
from mcp.types import Implementation

SERVER = [sys.executable, "-m", "slowave_graph"]
CLIENT_INFO = Implementation(name="transport-test", version="9.9")


def stdio_params(env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "slowave_graph", "serve", "--transport", "stdio"], env=env
    )


@contextmanager
def http_server(env: dict[str, str], port: int, timeout: float = 240.0) -> Iterator[subprocess.Popen[bytes]]:
    log_path = Path(env.get("SLOWAVE_TEST_LOG", os.devnull))
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [*SERVER, "serve", "--transport", "http", "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        deadline = time.monotonic() + timeout
        while True:
            assert proc.poll() is None, f"server exited with {proc.returncode}"
            try:
                if httpx2.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            assert time.monotonic() < deadline, "server did not become healthy"
            time.sleep(0.5)
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
