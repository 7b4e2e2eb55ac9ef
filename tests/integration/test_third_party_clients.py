"""The server driven by MCP clients nobody on this project wrote, pinned in tests/clients and
installed by scripts/node-clients: the official TypeScript SDK (every published schema compiled by
Ajv in strict mode, every call checked against them, a whole task's lifecycle) and the MCP
Inspector's CLI, over streamable HTTP and stdio, as the README shows them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.mcp_helpers import TOOL_NAMES
from tests.support.neo4j import Neo4jTarget

pytestmark = pytest.mark.neo4j

ROOT = Path(__file__).resolve().parents[2]
SERVER = Path(sys.executable).parent / "slowave-graph"  # the console script, as a user's client spawns it


@pytest.fixture(scope="module")
def clients() -> Path:
    """The directory holding the pinned clients (installed once per lock file)."""
    done = subprocess.run([ROOT / "scripts" / "node-clients"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.strip())


def node(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["node", *args], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-4000:])
    return done


def target(transport: str, http_url: str) -> list[str]:
    return [http_url] if transport == "http" else [str(SERVER), "stdio"]


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_the_typescript_sdk_runs_a_task_with_strict_schemas(
    clients: Path, neo4j: Neo4jTarget, http_url: str, scope: str, transport: str
) -> None:
    where = ["--url", http_url] if transport == "http" else ["--", str(SERVER), "stdio"]
    done = node([str(clients / "sdk_lifecycle.mjs"), "--scope", scope, *where], env=neo4j.env())
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(report["tools"]) == TOOL_NAMES  # and all ten schemas compiled in strict mode
    *lifecycle, refused = report["calls"]
    assert [c["tool"] for c in lifecycle] == [
        "slowave_activate", "slowave_remember", "slowave_feedback", "slowave_recall", "slowave_feedback",
        "slowave_commit",
    ]  # fmt: skip
    assert all(c["ok"] and c["schema_valid"] for c in lifecycle)
    assert refused == {"tool": "slowave_remember", "ok": False, "schema_valid": False}
    assert report["recalled"][0].startswith("The orders service retries payment webhooks")
    assert report["commit"]["operation"] == "closed" and report["commit"]["procedure_id"]
    assert report["too_long"] == "should have at most 8000 characters, not 8001"


def inspector(clients: Path, where: list[str], env: dict[str, str], tool: str, **args: Any) -> dict[str, Any]:
    """One tools/call through `mcp-inspector-cli --cli` (a process and a connection per call, as a
    user types it); the envelope it printed."""
    cli = clients / "node_modules" / "@modelcontextprotocol" / "inspector-cli" / "build" / "cli.js"
    pairs = [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in args.items()]
    done = node(
        [str(cli), "--cli", *where, "--method", "tools/call", "--tool-name", tool, "--tool-arg", *pairs], env
    )
    envelope: dict[str, Any] = json.loads(done.stdout)["structuredContent"]
    assert envelope["ok"], envelope
    return dict(envelope["data"])


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_the_mcp_inspector_cli_commits_with_verification_and_procedure(
    clients: Path, neo4j: Neo4jTarget, http_url: str, scope: str, transport: str
) -> None:
    env, where = neo4j.env(), target(transport, http_url)
    listed = json.loads(node([str(clients / "node_modules/@modelcontextprotocol/inspector-cli/build/cli.js"),
                              "--cli", *where, "--method", "tools/list"], env).stdout)  # fmt: skip
    assert {t["name"] for t in listed["tools"]} == TOOL_NAMES
    started = inspector(clients, where, env, "slowave_activate", scope=scope, task="Ship the release",
                        initial_goal="Release without surprises")  # fmt: skip
    inspector(clients, where, env, "slowave_remember", scope=scope, session_id=started["session_id"],
              content="Releases are tagged from the main branch after the smoke tests pass", type="decision")  # fmt: skip
    inspector(
        clients, where, env, "slowave_feedback", retrieval_id=started["retrieval_id"], coverage="complete"
    )
    committed = inspector(
        clients, where, env, "slowave_commit",
        session_id=started["session_id"], final_goal="Release shipped", outcome="success",
        outcome_summary="Tagged and shipped the release",
        verification={"status": "verified", "summary": "Smoke tests passed", "evidence_refs": ["ci/smoke"]},
        procedure={"summary": "Ship a release", "steps": [{"summary": "Tag main after the smoke tests"}],
                   "caveats": ["Never tag a red build"]},
    )  # fmt: skip
    assert committed["operation"] == "closed" and committed["verification_status"] == "verified"
    assert committed["procedure_id"]
