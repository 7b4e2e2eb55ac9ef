"""Every operator command leaves the store passing `slowave-graph audit`: a scope used through the
tools, then export and re-import, restore over it, a bulk import, people's corrections, forget,
the concept backfill and the maintenance pass, each followed by the audit of that scope (the
re-embedding of a whole store is audited in test_reembed.py, on a Neo4j of its own)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.mcp.server import build_server
from tests.support.cli import run_cli
from tests.support.conformance import DEPLOY_PROCEDURE
from tests.support.mcp_helpers import activate, commit, remember, settle

pytestmark = pytest.mark.neo4j


async def audited(scope: str, cli_env: list[str], capsys: pytest.CaptureFixture[str], after: str) -> None:
    capsys.readouterr()
    code = await run_cli(["audit", "--scope", scope, "--json", *cli_env])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["ok"], (after, report)


async def run(argv: list[str], cli_env: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert await run_cli([*argv, *cli_env]) == 0, argv
    return capsys.readouterr().out


async def test_the_store_passes_the_audit_after_every_operator_command(
    app: App, scope: str, cli_env: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with Client(build_server(app)) as client:
        started = await activate(client, scope, "Prepare the release notes")
        session = started["session_id"]
        kept = await remember(client, scope, session, "Release notes are written in the docs repository")
        await remember(client, scope, session, "The release train leaves every second Tuesday")
        update = await remember(client, scope, session, "The release train leaves every second Thursday")
        await settle(client, started)
        await commit(client, session, final_goal="Release notes drafted", procedure=DEPLOY_PROCEDURE)
    await audited(scope, cli_env, capsys, "the tools")

    exported = tmp_path / "scope.jsonl"
    await run(["export", "--scope", scope, "--out", str(exported)], cli_env, capsys)
    await run(["import", str(exported)], cli_env, capsys)
    await audited(scope, cli_env, capsys, "import of an export")
    await run(["restore", str(exported), "--replace"], cli_env, capsys)
    await audited(scope, cli_env, capsys, "restore --replace")

    notes = tmp_path / "notes.jsonl"
    lines = [{"content": f"Release checklist item {n}: sign the tag with the release key"} for n in range(5)]
    notes.write_text("".join(json.dumps(line) + "\n" for line in lines))
    await run(["import", str(notes), "--scope", scope, "--type", "instruction"], cli_env, capsys)
    await audited(scope, cli_env, capsys, "bulk import")

    memory = kept["memory_id"]
    await run(["memory", "suppress", memory, "--scope", scope, "--reason", "checking"], cli_env, capsys)
    await audited(scope, cli_env, capsys, "memory suppress")
    await run(["memory", "restore", memory, "--scope", scope, "--reason", "checked"], cli_env, capsys)
    corrected = "Release notes are written in the handbook repository"
    await run(["memory", "supersede", memory, "--scope", scope, "--text", corrected], cli_env, capsys)
    await audited(scope, cli_env, capsys, "memory restore and supersede")

    await run(["concepts", "backfill"], cli_env, capsys)
    await run(["maintain", "--once", "--scope", scope], cli_env, capsys)
    await audited(scope, cli_env, capsys, "concepts backfill and maintain")

    await run(["forget", "--memory", update["memory_id"], "--scope", scope, "--yes"], cli_env, capsys)
    await audited(scope, cli_env, capsys, "forget --memory")
