"""A person's corrections: suppress hides a memory from retrieval without deleting it, restore
brings it back, supersede stores the corrected text and retires the old one; each is recorded with
actor, time and reason, a refused action changes nothing, and the store passes its audit after
every step. Through the tools agents use, real embeddings, real Neo4j."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.mcp.server import build_server
from slowave_graph.operator import corrections
from slowave_graph.operator.audit import audit
from slowave_graph.operator.corrections import CorrectionRefused, UnknownMemory
from slowave_graph.operator.export import export_graph
from slowave_graph.operator.forget import forget
from tests.integration.test_forget import fingerprint
from tests.support.cli import run_cli
from tests.support.mcp_helpers import activate, remember, settle
from tests.support.servers import CLIENT_INFO

pytestmark = pytest.mark.neo4j

WRONG = "The billing service reads its API key from the BILLING_TOKEN environment variable"
OTHER = "Invoices of the billing service are archived to S3 every night"
QUESTION = "Where does the billing service read its API key from?"


async def q(app: App, statement: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = await app.db.driver.execute_query(statement, params, database_=app.db.database)
    return [r.data() for r in records]


async def shown(client: Client, scope: str, task: str = QUESTION) -> list[str]:
    """What an activate shows now (and settles its feedback, so nothing stays outstanding)."""
    result = await activate(client, scope, task)
    if result["memories"]:
        await settle(client, result)
    return [m["memory_id"] for m in result["memories"]]


async def clean(app: App, scope: str) -> None:
    report = await audit(app.db, [scope])
    assert report.ok, report.violations


async def records_of(app: App, memory_id: str) -> list[dict[str, Any]]:
    return await q(
        app,
        "MATCH (c:Correction)-[:CORRECTED]->(:Memory {id: $id}) "
        "RETURN c.action AS action, c.actor AS actor, c.reason AS reason, c.from_status AS from_status, "
        "c.to_status AS to_status, c.replacement_id AS replacement_id, c.at IS NOT NULL AS timed "
        "ORDER BY c.at",
        id=memory_id,
    )


async def test_suppress_hides_restore_brings_back_and_both_are_recorded(app: App, scope: str) -> None:
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Note the billing facts"))["session_id"]
        wrong = (await remember(client, scope, session, WRONG))["memory_id"]
        await remember(client, scope, session, OTHER)
        assert wrong in await shown(client, scope)

        done = await corrections.suppress(app.db, wrong, reason="leaks a secret's name", who="alice")
        assert (done.previous, done.status, done.actor) == ("active", "suppressed", "alice")
        assert wrong not in await shown(client, scope)
        await clean(app, scope)  # concept counts and the duplicate key follow the status

        # an agent remembering the same claim again reinforces the hidden memory: it stays hidden
        again = await remember(
            client, scope, (await activate(client, scope, "More notes"))["session_id"], WRONG
        )
        assert again["memory_id"] == wrong and again["disposition"] == "matched"
        assert wrong not in await shown(client, scope)

        back = await corrections.restore(app.db, wrong, reason="rotated; harmless now", who="bob")
        assert (back.previous, back.status) == ("suppressed", "active")
        assert wrong in await shown(client, scope)
        await clean(app, scope)

    assert await records_of(app, wrong) == [
        {"action": "suppress", "actor": "alice", "reason": "leaks a secret's name", "from_status": "active",
         "to_status": "suppressed", "replacement_id": None, "timed": True},
        {"action": "restore", "actor": "bob", "reason": "rotated; harmless now", "from_status": "suppressed",
         "to_status": "active", "replacement_id": None, "timed": True},
    ]  # fmt: skip


async def test_refused_corrections_change_nothing(app: App, scope: str) -> None:
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Note the billing facts"))["session_id"]
        memory = (await remember(client, scope, session, WRONG))["memory_id"]
    before = await fingerprint(app, scope)
    with pytest.raises(CorrectionRefused, match="reason is required"):
        await corrections.suppress(app.db, memory, reason="  ")
    with pytest.raises(CorrectionRefused, match="is active: only a memory that is suppressed"):
        await corrections.restore(app.db, memory)
    with pytest.raises(UnknownMemory, match="not in scope"):
        await corrections.suppress(app.db, memory, reason="x", scope="project:elsewhere")
    with pytest.raises(UnknownMemory, match="no memory"):
        await corrections.suppress(app.db, "sch_999999999", reason="x")
    with pytest.raises(CorrectionRefused, match="own text"):
        await corrections.supersede(app, memory, WRONG.lower() + ".")
    with pytest.raises(CorrectionRefused, match="not valid"):
        await corrections.supersede(app, memory, "x" * 8001)
    assert await fingerprint(app, scope) == before  # not even the correction's session stays

    await corrections.suppress(app.db, memory, reason="wrong")
    suppressed = await fingerprint(app, scope)
    with pytest.raises(CorrectionRefused, match="is suppressed: only a memory that is active or stale"):
        await corrections.suppress(app.db, memory, reason="again")
    with pytest.raises(CorrectionRefused, match="is suppressed: only a memory that is active can be"):
        await corrections.supersede(app, memory, "The billing service reads its key from Vault")
    assert await fingerprint(app, scope) == suppressed
    await clean(app, scope)


async def test_supersede_stores_the_correction_and_retires_the_old_memory(app: App, scope: str) -> None:
    right = "The billing service reads its API key from Vault at secret/billing"
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Note the billing facts"))["session_id"]
        wrong = (await remember(client, scope, session, WRONG))["memory_id"]
        await remember(client, scope, session, OTHER)

        done = await corrections.supersede(app, wrong, right, reason="moved to Vault in March", who="carol")
        new = done.replacement_id
        assert new is not None and new != wrong
        assert (done.previous, done.status) == ("active", "stale")
        seen = await shown(client, scope)
        assert new in seen and wrong not in seen
    [old] = await q(
        app,
        "MATCH (n:Memory {id: $new})-[s:SUPERSEDES]->(o:Memory {id: $old}) "
        "RETURN o.status AS status, o.stale_reason AS reason, s.actor AS actor, "
        "s.correction_id = $cid AS recorded, n.content AS content, n.type AS type, n.integration AS via",
        new=new, old=wrong, cid=done.correction_id,
    )  # fmt: skip
    assert old == {"status": "stale", "reason": "superseded", "actor": "carol", "recorded": True,
                   "content": right, "type": "fact", "via": "slowave-graph memory"}  # fmt: skip
    assert [r["action"] for r in await records_of(app, wrong)] == ["supersede"]
    await clean(app, scope)  # the correction's session ended, its event recorded, counts right

    # the history as a person reads it, on both memories
    for memory_id in (wrong, new):
        found = await corrections.show(app.db, memory_id)
        assert found is not None
        assert [(c["action"], c["actor"], c["replacement_id"]) for c in found["corrections"]] == [
            ("supersede", "carol", new)
        ]


async def test_corrections_travel_with_the_scope_and_go_with_the_memory(
    app: App, scope: str, tmp_path: Path
) -> None:
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Note the billing facts"))["session_id"]
        memory = (await remember(client, scope, session, WRONG))["memory_id"]
    await corrections.suppress(app.db, memory, reason="wrong")
    path = tmp_path / "export.jsonl"
    with path.open("w", encoding="utf-8") as out:
        await export_graph(app.db, out, [scope])
    kinds = [json.loads(x).get("node") or json.loads(x).get("rel") for x in path.read_text().splitlines()]
    assert "Correction" in kinds and "CORRECTED" in kinds

    await forget(app.db, memory=memory, who="test")
    assert await q(app, "MATCH (c:Correction {memory_id: $id}) RETURN c", id=memory) == []
    await clean(app, scope)


async def test_cli_shows_suppresses_restores_and_supersedes(
    app: App, scope: str, cli_env: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Note the billing facts"))["session_id"]
        memory = (await remember(client, scope, session, WRONG))["memory_id"]
    capsys.readouterr()
    assert await run_cli(["memory", "suppress", memory, "--reason", "wrong key", "--json", *cli_env]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "suppressed"
    assert await run_cli(["memory", "suppress", memory, "--reason", "again", *cli_env]) == 1
    assert "nothing changed" in capsys.readouterr().err
    assert await run_cli(["memory", "restore", memory, *cli_env]) == 0
    assert "suppressed → active" in capsys.readouterr().out
    assert await run_cli(["memory", "supersede", memory, "--text", "Billing reads its key from Vault",
                          "--scope", scope, *cli_env]) == 0  # fmt: skip
    assert "active → stale, replaced by sch_" in capsys.readouterr().out
    assert await run_cli(["memory", "show", memory, *cli_env]) == 0
    out = capsys.readouterr().out
    assert f"{memory}  stale" in out and "suppress" in out and "restore" in out and "supersede" in out
    assert await run_cli(["memory", "show", memory, "--scope", "project:other", *cli_env]) == 1
    await clean(app, scope)
