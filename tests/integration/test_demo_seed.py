"""`slowave-graph demo seed`: simulated agents through the real services leave a real learning graph."""

from __future__ import annotations

from typing import Any

import pytest

from slowave_graph.app import App
from slowave_graph.cli import main
from slowave_graph.contract.activate import ActivateRequest
from slowave_graph.contract.remember import RememberRequest
from slowave_graph_lab.demo.data import CLAIMS, EVENTS, ONBOARDING
from slowave_graph_lab.demo.seed import DEMO_CLIENT, DemoScopeInUse, census, ensure_demo, summary
from tests.support.demo_helpers import DEMO_TASKS, shared_demo
from tests.support.neo4j import Neo4jTarget

pytestmark = pytest.mark.neo4j


@pytest.fixture(scope="module")
async def seeded(app: App) -> dict[str, Any]:
    return await shared_demo(app)


async def test_seeding_leaves_ledger_salience_associations_procedures_and_supersessions(
    app: App, seeded: dict[str, Any]
) -> None:
    scope, result = seeded["scope"], seeded["result"]
    graph = result["graph"]
    assert result["status"] == "seeded" and len(seeded["lines"]) == 1 + DEMO_TASKS
    assert graph["sessions"] == graph["episodes"] == DEMO_TASKS
    assert graph["accepted"] == graph["assessments"] > 100  # an honest agent: nothing rejected
    assert graph["supersessions"] == graph["stale"] == 4
    assert graph["failed"] >= 1 and graph["succeeded"] >= 10
    assert graph["procedure_helped"] >= 1 and graph["procedure_harmed"] >= 1
    assert graph["associations"] >= 10

    memories = {m["content"]: m for m in await app.db.run_read("nb_memories", scope=scope)}
    assert set(memories) <= {c.content for c in CLAIMS.values()}
    misleading = memories[CLAIMS["pay_restart"].content]
    assert misleading["status"] == "stale" and misleading["harmed"] >= 1 and misleading["salience"] < 0.2
    assert max(m["salience"] for m in memories.values()) > 0.8
    chains = {
        (r["old_content"], r["new_content"]) for r in await app.db.run_read("nb_supersessions", scope=scope)
    }
    assert (CLAIMS["pay_restart"].content, CLAIMS["pay_dlq"].content) in chains
    assert (CLAIMS["db_pg14"].content, CLAIMS["db_pg16"].content) in chains

    edges = await app.db.run_read("nb_association_edges", scope=scope)
    ids = {m["id"] for m in memories.values()}
    for e in edges:  # co-use edges stay inside the scope and follow weight = 1 - 0.5^k
        assert {e["source"], e["target"]} <= ids and e["origin"] == "co_use"
        assert e["weight"] == pytest.approx(1 - 0.5 ** e["co_uses"])
    ledger = await app.db.run_read("nb_feedback_ledger", scope=scope)
    assert {e["assessment"] for e in ledger} >= {"used", "not_used", "irrelevant", "already_known", "stale"}
    assert {e["stale_reason"] for e in ledger if e["assessment"] == "stale"} == {"superseded"}


def test_seed_command_finds_the_demo_in_place(
    seeded: dict[str, Any],
    neo4j: Neo4jTarget,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("NEO4J_USER", neo4j.user)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j.password)
    assert main(["demo", "seed", "--scope", seeded["scope"], "--neo4j-uri", neo4j.uri]) == 0
    out = capsys.readouterr().out
    assert "already holds the demo; nothing done" in out and f"{DEMO_TASKS} sessions" in out


async def test_seeding_again_changes_nothing_and_force_seeds_afresh(app: App, scope: str) -> None:
    activation = await app.services.activation.activate(
        ActivateRequest(task="Note one thing", initial_goal="Note it", scope=scope), DEMO_CLIENT
    )
    await app.services.remember.remember(
        RememberRequest(
            scope=scope, session_id=activation.session_id, content=CLAIMS["fe_stack"].content, type="fact"
        ),
        DEMO_CLIENT,
    )
    before = await summary(app.db, scope)
    again = await ensure_demo(app, scope, tasks=10, say=lambda _: None)
    assert again["status"] == "present" and again["graph"] == before == await summary(app.db, scope)

    fresh = await ensure_demo(app, scope, tasks=10, force=True, say=lambda _: None)
    assert fresh["status"] == "seeded"
    assert fresh["graph"]["sessions"] == 10  # the earlier session went with the old contents
    # ten tasks are the onboarding and the events: exactly the claims they learn, each once
    learned = {k for t in (*ONBOARDING, *EVENTS) for k in (*t.remembers, *t.retires.values())}
    assert fresh["graph"]["memories"] == len(learned)


async def test_a_scope_with_other_memories_is_never_touched(app: App, scope: str) -> None:
    activation = await app.services.activation.activate(
        ActivateRequest(task="Real work", initial_goal="Keep notes", scope=scope), DEMO_CLIENT
    )
    await app.services.remember.remember(
        RememberRequest(
            scope=scope, session_id=activation.session_id, content="Our staging host is st-3", type="fact"
        ),
        DEMO_CLIENT,
    )
    before = await census(app.db, scope)
    for force in (False, True):
        with pytest.raises(DemoScopeInUse, match="not the demo's"):
            await ensure_demo(app, scope, tasks=10, force=force, say=lambda _: None)
    assert await census(app.db, scope) == before
