"""`slowave-graph bench conversations` as users run it: stdio conversations in a row on a managed
Neo4j of its own (a scratch data directory), here two short ones with a linger."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.servers import SERVER

pytestmark = pytest.mark.neo4j


def test_the_next_conversation_finds_the_lingering_neo4j(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env.update(SLOWAVE_NEO4J_HEAP="512m", SLOWAVE_NEO4J_PAGECACHE="128m")
    out = tmp_path / "out"
    args = ["bench", "conversations", "--conversations", "2", "--lifecycles", "1", "--linger", "60"]
    proc = subprocess.run(
        [*SERVER, *args, "--out", str(out)], env=env, capture_output=True, text=True, timeout=400
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads((out / "conversations.json").read_text())
    (run,) = result["runs"]
    first, second = run["conversations"]
    assert run["linger_s"] == 60 and run["left_running"] is True
    assert first["errors"] == {} and second["errors"] == {}
    assert set(first["p50_ms"]) == {"slowave_activate", "slowave_remember", "slowave_recall",
                                    "slowave_feedback", "slowave_commit"}  # fmt: skip
    # the first conversation started Neo4j before its server was ready; the second found it running
    assert second["ready_s"] < first["ready_s"]
    table = (out / "conversations.md").read_text()
    assert table.count("| 60 s |") == 2
