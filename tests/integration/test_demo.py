"""The scripted demo: a full lifecycle, as its printed steps show, through a real MCP client."""

from __future__ import annotations

import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.mcp.server import build_server
from slowave_graph_lab.demo.lifecycle import run_demo

pytestmark = pytest.mark.neo4j


async def test_demo_runs_a_full_lifecycle(app: App, scope: str) -> None:
    lines: list[str] = []
    async with Client(build_server(app)) as client:
        second = await run_demo(client, scope, lines.append)
    text = "\n".join(lines)
    for tool in (
        "slowave_activate",
        "slowave_remember",
        "slowave_recall",
        "slowave_feedback",
        "slowave_commit",
    ):
        assert f"→ {tool}" in text
    assert "cold_start" in text
    contents = [m["content"] for m in second["memories"]]
    assert "Atlas authentication credentials expire after 45 minutes" in contents
    assert [p["procedure_id"] for p in second["procedures"]] and second["procedures"][0][
        "outcome"
    ] == "success"
