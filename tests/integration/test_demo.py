"""The scripted demo: a full lifecycle, as its printed steps show, through a real MCP client."""

from __future__ import annotations

import json
import secrets

import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.mcp.server import build_server
from slowave_graph.operator.audit import audit
from slowave_graph_lab.demo.lifecycle import run_demo
from tests.support.cli import run_cli

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


async def test_demo_scopes_are_cleaned_up_and_nothing_else(
    app: App, scope: str, http_url: str, cli_env: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """`demo --cleanup` forgets its own scope; `demo cleanup` lists the demo scopes left behind and,
    with --yes, forgets them and no other scope."""
    cleaned = f"demo:{secrets.token_hex(4)}"
    assert await run_cli(["demo", "run", "--url", http_url, "--scope", cleaned, "--cleanup", *cli_env]) == 0
    assert f"forgot {cleaned}" in capsys.readouterr().out
    assert not await app.db.run_read("forget_scope_count", scope=cleaned)

    left = f"demo:{secrets.token_hex(4)}"
    async with Client(build_server(app)) as client:
        await run_demo(client, left, lambda _: None)
        await run_demo(client, scope, lambda _: None)  # the same lifecycle in a scope of another kind
    assert await run_cli(["demo", "cleanup", "--json", *cli_env]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert left in listed["demo_scopes"] and scope not in listed["demo_scopes"] and listed["forgotten"] == []
    assert await app.db.run_read("forget_scope_count", scope=left)  # a dry run changed nothing

    assert await run_cli(["demo", "cleanup", "--yes", "--json", *cli_env]) == 0
    assert left in json.loads(capsys.readouterr().out)["forgotten"]
    assert not await app.db.run_read("forget_scope_count", scope=left)
    assert await app.db.run_read("forget_scope_count", scope=scope)
    report = await audit(app.db, scopes=[scope])
    assert report.ok, report
