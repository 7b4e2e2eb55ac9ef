"""The maintenance pass on a real Neo4j: near-duplicates and updates linked among memories stored
without that judgement (newest → older, once), co-use weights decayed from their base, stale learned
marks cleared, one pass at a time (the lease), every pass recorded with its counts.

Every pass here is limited to the test's own scope (``scope=``): a pass over the whole database
would work on other tests' memories, and tests keep to their own scopes."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from mcp import Client

from slowave_graph.app import App, open_app
from slowave_graph.embedding.embedder import Embedder
from slowave_graph.mcp.server import build_server
from slowave_graph.operator import maintenance
from slowave_graph.operator.bulk import import_memories
from slowave_graph.operator.maintenance import (
    LeaseHeld,
    LeaseLost,
    MaintenanceRun,
    judge_page,
    run_pass,
    seconds_until_due,
    take_lease,
)
from slowave_graph.services import Services
from slowave_graph.services.consolidation import SIMILAR_VERSION
from slowave_graph.services.context import utcnow
from slowave_graph.services.ranking import DEFAULT_POLICY, policy_for
from slowave_graph.workload.driver import complete_feedback
from tests.integration.test_concept_graph import LIMITS
from tests.support.cli import run_cli
from tests.support.mcp_helpers import activate, call, ok, recall, remember
from tests.support.neo4j import Neo4jTarget
from tests.support.servers import CLIENT_INFO

pytestmark = pytest.mark.neo4j

SHOP_DEPLOYS = "Deploys of the shop go out through Argo CD"
SHOP_INVOICES = "Shop invoices are archived to S3 every night"
SHOP_DEPLOYED = "The shop is deployed via ArgoCD"  # a duplicate of SHOP_DEPLOYS
DB_REGION = "The staging database runs in us-east-1"
DB_BACKUP = "The staging database is backed up nightly"
DB_MOVED = "The staging database moved to eu-west-2"  # an update of DB_REGION


def without_consolidation(app: App) -> App:
    """The app as a server with SLOWAVE_CONSOLIDATION=false runs it: memories stored unjudged."""
    services = Services.build(
        app.repo, app.embedder, policy_for(DEFAULT_POLICY.candidate_k), consolidate=False
    )
    return dataclasses.replace(app, services=services)


async def q(app: App, query: str, **params: Any) -> list[dict[str, Any]]:
    found = await app.db.driver.execute_query(query, params, database_=app.db.database)
    return [r.data() for r in found.records]


async def links(app: App, scope: str) -> set[tuple[str, str, str]]:
    rows = await q(
        app,
        "MATCH (a:Memory {scope: $scope})-[s:SIMILAR_TO]->(b:Memory) RETURN a.id AS a, b.id AS b, s.kind AS kind",
        scope=scope,
    )
    return {(r["a"], r["b"], r["kind"]) for r in rows}


async def marks(app: App, scope: str) -> dict[str, int | None]:
    rows = await q(
        app, "MATCH (m:Memory {scope: $scope}) RETURN m.id AS id, m.similar_version AS v", scope=scope
    )
    return {r["id"]: r["v"] for r in rows}


async def store(app: App, scope: str, contents: list[str]) -> list[str]:
    """Remember ``contents`` one call each through the tools of ``app``, in order."""
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Record the shop's facts"))["session_id"]
        return [(await remember(client, scope, session, content))["memory_id"] for content in contents]


async def a_pass(app: App, scope: str, **options: Any) -> MaintenanceRun:
    return await run_pass(app, actor="test", scope=scope, **options)


async def test_backfill_links_duplicates_and_updates_newest_to_older_once(app: App, scope: str) -> None:
    a, _, c, d, _, e = await store(
        without_consolidation(app),
        scope,
        [SHOP_DEPLOYS, SHOP_INVOICES, SHOP_DEPLOYED, DB_REGION, DB_BACKUP, DB_MOVED],
    )
    assert await links(app, scope) == set()
    assert set((await marks(app, scope)).values()) == {None}, "unjudged memories carry no mark"

    run = await a_pass(app, scope)
    linked = {(c, a, "duplicate"), (e, d, "update")}
    assert await links(app, scope) == linked, "newest → older, as remember links"
    counts = (run.status, run.memories_checked, run.linked_duplicates, run.linked_updates)
    assert counts == ("completed", 6, 1, 1)
    assert set((await marks(app, scope)).values()) == {SIMILAR_VERSION}
    # the links have remember's shape: kind, score (the cosine) and when
    [edge] = await q(
        app, "MATCH (:Memory {id: $c})-[s:SIMILAR_TO]->(:Memory {id: $a}) RETURN properties(s) AS p", c=c, a=a
    )
    assert set(edge["p"]) == {"kind", "score", "at"} and 0.5 < edge["p"]["score"] <= 1.0

    again = await a_pass(app, scope)
    assert (again.memories_checked, again.linked_duplicates, again.linked_updates) == (0, 0, 0)
    assert await links(app, scope) == linked


async def test_a_memory_judged_when_stored_is_not_judged_again(app: App, scope: str) -> None:
    """An older unmarked memory is compared with what came before it only: the newer one, judged
    at its own write, already linked the pair (one link, in its direction)."""
    [old] = await store(without_consolidation(app), scope, [SHOP_DEPLOYS])
    [new] = await store(app, scope, [SHOP_DEPLOYED])
    assert await links(app, scope) == {(new, old, "duplicate")}
    assert await marks(app, scope) == {old: None, new: SIMILAR_VERSION}

    run = await a_pass(app, scope)
    assert (run.memories_checked, run.linked_duplicates, run.linked_updates) == (1, 0, 0)
    assert await links(app, scope) == {(new, old, "duplicate")}
    assert await marks(app, scope) == {old: SIMILAR_VERSION, new: SIMILAR_VERSION}


async def test_bulk_import_marks_what_it_judges(app: App, scope: str) -> None:
    await import_memories(app, [{"scope": scope, "content": DB_REGION, "type": "fact"}])
    await import_memories(without_consolidation(app), [{"scope": scope, "content": DB_MOVED, "type": "fact"}])
    by_content = {
        r["content"]: r["v"]
        for r in await q(
            app,
            "MATCH (m:Memory {scope: $scope}) RETURN m.content AS content, m.similar_version AS v",
            scope=scope,
        )
    }
    assert by_content == {DB_REGION: SIMILAR_VERSION, DB_MOVED: None}
    run = await a_pass(app, scope)
    assert (run.memories_checked, run.linked_updates) == (1, 1)


async def retire(client: Client, scope: str, session: str, question: str, memory_id: str) -> None:
    shown = await recall(client, scope, session, question)
    assert memory_id in [m["memory_id"] for m in shown["memories"]], shown["memories"]
    entry = {"memory_id": memory_id, "assessment": "stale", "stale_reason": "outdated", "reason": "test"}
    done = ok(
        await call(
            client, "slowave_feedback", {"retrieval_id": shown["retrieval_id"], "memory_feedback": [entry]}
        )
    )
    assert done["applied"]["stale"] == [memory_id]


async def test_a_memory_retired_after_it_was_judged_gets_no_link(app: App, scope: str) -> None:
    off = without_consolidation(app)
    a, c, d, e = await store(off, scope, [SHOP_DEPLOYS, SHOP_DEPLOYED, DB_REGION, DB_MOVED])
    page = await app.db.run_read(
        "maintenance_unjudged_page", after="", limit=100, similar_version=SIMILAR_VERSION, scope=scope
    )
    items = await judge_page(app, page)
    judged = {(i["memory_id"], x["target_id"], x["kind"]) for i in items for x in i["links"]}
    assert judged == {(c, a, "duplicate"), (e, d, "update")}

    # between the judgement and its write: the target of one link and the source of the other retire
    async with Client(build_server(off), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Check the facts"))["session_id"]
        await retire(client, scope, session, "How is the shop deployed?", a)
        await retire(client, scope, session, "Which region is the staging database in?", e)
    [written] = await app.db.run_write(
        "maintenance_judged_page", items=items, similar_version=SIMILAR_VERSION, now=utcnow()
    )
    assert (written["judged"], written["duplicates"], written["updates"]) == (2, 0, 0)
    assert await links(app, scope) == set()
    assert await marks(app, scope) == {a: None, c: SIMILAR_VERSION, d: SIMILAR_VERSION, e: None}
    run = await a_pass(app, scope)  # retired memories are neither walked nor linked to
    assert (run.memories_checked, run.linked_duplicates, run.linked_updates) == (0, 0, 0)
    assert await links(app, scope) == set()


async def use_only(client: Client, shown: dict[str, Any], used: set[str]) -> None:
    """Feedback on everything a retrieval showed: ``used`` used, the rest not used — a lesson of
    another scope that travelled here (generalisation) is not validated by this test."""
    marks = complete_feedback(shown, lambda m: "used" if m["memory_id"] in used else "not_used")
    assert ok(await call(client, "slowave_feedback", marks))["coverage"] == "complete"


def tagged(scope: str, text: str) -> str:
    """A claim of this test only: text that gets used feedback differs from every other test's and
    run's, so it is never validated in several scopes and never travels into theirs."""
    return text.format(tag=scope.rsplit(":", 1)[-1])


WEBHOOKS = "Payment webhooks of shop {tag} are retried three times with exponential backoff"
ROTA = "The on-call rota for incidents of shop {tag} is kept in the ops wiki"
QUESTION = "Payment webhooks of shop {tag} keep failing; who is on call for its incidents?"
GOAL = "Fix the webhook retries and page the on-call person"


async def co_used_pair(app: App, scope: str) -> tuple[str, str]:
    """Two memories assessed used together once: their ASSOCIATED edge (1 co-use, weight 0.5)."""
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Record"))["session_id"]
        x = (await remember(client, scope, session, tagged(scope, WEBHOOKS)))["memory_id"]
        y = (await remember(client, scope, session, tagged(scope, ROTA)))["memory_id"]
        both = await activate(client, scope, tagged(scope, QUESTION), initial_goal=GOAL)
        assert {m["memory_id"] for m in both["memories"]} >= {x, y}, both["memories"]
        await use_only(client, both, {x, y})
    return x, y


async def edge(app: App, x: str, y: str) -> dict[str, Any]:
    [found] = await q(
        app,
        "MATCH (:Memory {id: $x})-[e:ASSOCIATED]-(:Memory {id: $y}) "
        "RETURN e.weight AS weight, e.updated_at AS updated_at, size(e.retrievals) AS co_uses",
        x=x, y=y,
    )  # fmt: skip
    found["updated_at"] = found["updated_at"].to_native()
    return found


async def ranking_strength(app: App, scope: str, x: str, y: str, now: datetime, half_life: float) -> float:
    [vector] = await app.embedder.aembed(["payment webhooks"])
    around = await app.repo.candidate_context(
        scope=scope, context_ids=[], pool_ids=[x], associate_ids=[x], seeds=[], embeddings=[vector], now=now,
        walk=LIMITS, min_strength=0.0, half_life_days=half_life,
    )  # fmt: skip
    [associated] = [a for a in around.associations if a["id"] == y]
    return float(associated["links"][0]["strength"])


async def test_co_use_decays_from_its_base_idempotently_and_ranking_uses_the_same(
    app: App, scope: str
) -> None:
    x, y = await co_used_pair(app, scope)
    fresh = await edge(app, x, y)
    assert (fresh["weight"], fresh["co_uses"]) == (0.5, 1)
    later = fresh["updated_at"] + timedelta(days=90)

    first = await a_pass(app, scope, now=later, half_life_days=90.0)
    assert (await edge(app, x, y))["weight"] == pytest.approx(0.25)
    assert first.associations_decayed == 1
    second = await a_pass(app, scope, now=later, half_life_days=90.0)
    assert (await edge(app, x, y))["weight"] == pytest.approx(0.25), "the same time: the same weight"
    assert second.associations_decayed == 0
    # from the base, never from the stored weight: twice the age is a quarter, not a sixteenth
    await a_pass(app, scope, now=fresh["updated_at"] + timedelta(days=180), half_life_days=90.0)
    stored = (await edge(app, x, y))["weight"]
    assert stored == pytest.approx(0.125)
    # retrieval weighs the pair with exactly what the pass stored, not decayed once more
    at = fresh["updated_at"] + timedelta(days=180)
    assert await ranking_strength(app, scope, x, y, at, 90.0) == pytest.approx(stored)
    # half-life 0: no decay
    await a_pass(app, scope, now=at, half_life_days=0.0)
    assert (await edge(app, x, y))["weight"] == pytest.approx(0.5)

    # a fresh co-use: feedback sets the new base as before, dated now
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        again = await activate(client, scope, tagged(scope, QUESTION), initial_goal=GOAL)
        await use_only(client, again, {x, y})
    renewed = await edge(app, x, y)
    assert (renewed["weight"], renewed["co_uses"]) == (0.75, 2)
    assert renewed["updated_at"] > fresh["updated_at"]


async def test_learned_marks_without_a_lesson_are_cleared(app: App, scope: str) -> None:
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Record"))["session_id"]
        claim = tagged(scope, "The build cache of shop {tag} lives in the ci-cache bucket")
        cache = (await remember(client, scope, session, claim))["memory_id"]
        taught = await activate(
            client, scope, tagged(scope, "Where is the build cache of shop {tag} stored?")
        )
        assert cache in [m["memory_id"] for m in taught["memories"]]
        await use_only(client, taught, {cache})
        neutral = await activate(
            client, scope, tagged(scope, "Which bucket holds the CI build cache of shop {tag}?")
        )
        await use_only(client, neutral, set())
    learned = "MATCH (r:Retrieval {id: $id}) RETURN r.learned AS learned, r.experience_embedding IS NOT NULL AS indexed"
    assert (await q(app, learned, id=neutral["retrieval_id"]))[0]["learned"] is False
    # what an older version left: every retrieval with feedback learned, and in the experience index
    await q(
        app,
        "MATCH (r:Retrieval {id: $id}) SET r.learned = true "
        "WITH r CALL db.create.setNodeVectorProperty(r, 'experience_embedding', r.query_embedding)",
        id=neutral["retrieval_id"],
    )
    await app.experience.flush()

    run = await a_pass(app, scope)
    assert run.learned_cleared == 1
    assert await q(app, learned, id=neutral["retrieval_id"]) == [{"learned": False, "indexed": False}]
    assert (await q(app, learned, id=taught["retrieval_id"]))[0]["learned"] is True, "a lesson stays learned"
    assert (await a_pass(app, scope)).learned_cleared == 0


async def test_the_lease_lets_one_pass_run_at_a_time(app: App, scope: str) -> None:
    other = await take_lease(app.db, "test:another-server", seconds=60)
    try:
        with pytest.raises(LeaseHeld) as held:
            await a_pass(app, scope)
        assert held.value.holder == "test:another-server"
        assert await q(app, "MATCH (r:MaintenanceRun {only_scope: $s}) RETURN r.id", s=scope) == []
    finally:
        await other.release()
    assert (await a_pass(app, scope)).status == "completed"

    # takers at the same moment: exactly one gets it, however the race goes
    for round_ in range(5):
        taken = await asyncio.gather(
            *(take_lease(app.db, f"test:racer-{round_}-{i}", seconds=60) for i in range(3)),
            return_exceptions=True,
        )
        won = [t for t in taken if isinstance(t, maintenance.Lease)]
        assert len(won) == 1 and sum(isinstance(t, LeaseHeld) for t in taken) == 2, taken
        await won[0].release()

    # a holder that died: its lease expires and the next pass takes it; the dead one cannot renew
    dead = await take_lease(app.db, "test:died-mid-pass", seconds=0.0)
    alive = await take_lease(app.db, "test:next-pass", seconds=60)
    with pytest.raises(LeaseLost):
        await dead.keep()
    await alive.release()


async def test_a_pass_is_recorded_with_its_counts_also_when_it_fails(
    app: App, scope: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store(without_consolidation(app), scope, [SHOP_DEPLOYS, SHOP_DEPLOYED])
    run = await a_pass(app, scope)
    [record] = [r for r in await maintenance.latest_runs(app.db, limit=50) if r["id"] == run.id]
    assert record["status"] == "completed" and record["only_scope"] == scope and record["actor"] == "test"
    assert (record["memories_checked"], record["linked_duplicates"], record["linked_updates"]) == (2, 1, 0)
    assert (record["associations_decayed"], record["learned_cleared"]) == (0, 0)
    assert record["host"] == run.host and record["version"] == run.version
    assert record["finished_at"].to_native() >= record["started_at"].to_native()
    assert await q(app, "MATCH (r:MaintenanceRun {id: $id}) RETURN COUNT { (r)--() } AS n", id=run.id) == [
        {"n": 0}
    ]

    async def broken(*_: Any, **__: Any) -> int:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(maintenance, "clear_stale_learned", broken)
    with pytest.raises(RuntimeError):
        await a_pass(app, scope)
    [failed] = [r for r in await maintenance.latest_runs(app.db, limit=50) if r["only_scope"] == scope][:1]
    assert failed["status"] == "failed" and failed["error"] == "RuntimeError: the database went away"
    monkeypatch.undo()
    assert (await a_pass(app, scope)).status == "completed", "the failed pass released its lease"


async def test_a_pass_is_due_an_interval_after_the_last_completed_one(app: App) -> None:
    """Servers time their passes by the records: a pass over the whole database completed just now
    (recorded as run_pass records one) makes the next one due an interval later."""
    now = utcnow()
    params = {"host": "test", "actor": "test", "version": "test", "scope": None, "half_life_days": 90.0}
    run_id = f"mnt_test_{now.timestamp()}"
    await app.db.run_write("maintenance_run_start", run_id=run_id, now=now, **params)
    try:
        await app.db.run_write(
            "maintenance_run_finish", run_id=run_id, now=now, status="completed", error=None, memories_checked=0,
            linked_duplicates=0, linked_updates=0, associations_decayed=0, learned_cleared=0, lessons_judged=0,
            lessons_travelling=0,
        )  # fmt: skip
        assert await seconds_until_due(app.db, 3600.0, now=now) == pytest.approx(3600.0, abs=0.01)
        assert await seconds_until_due(app.db, 3600.0, now=now + timedelta(hours=2)) == 0.0
    finally:
        await q(app, "MATCH (r:MaintenanceRun {id: $id}) DELETE r", id=run_id)


async def test_cli(app: App, scope: str, cli_env: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    a, c = await store(without_consolidation(app), scope, [SHOP_DEPLOYS, SHOP_DEPLOYED])
    code = await run_cli(["maintain", "--once", "--scope", scope, "--json", *cli_env])
    out, err = capsys.readouterr()
    assert code == 0, err
    done = json.loads(out)
    assert done["status"] == "completed" and done["scope"] == scope
    assert (done["memories_checked"], done["linked_duplicates"]) == (2, 1)
    assert await links(app, scope) == {(c, a, "duplicate")}

    other = await take_lease(app.db, "test:a-server", seconds=60)
    try:
        code = await run_cli(["maintain", "--once", "--scope", scope, *cli_env])
        out, err = capsys.readouterr()
        assert code == 75 and "another maintenance pass is running (test:a-server" in err
    finally:
        await other.release()
    assert await run_cli(["maintain", *cli_env]) == 2
    assert "--once" in capsys.readouterr().err


async def test_the_app_runs_the_background_tasks_it_is_handed_until_it_closes(
    neo4j: Neo4jTarget, embedder: Embedder
) -> None:
    """How serve keeps the maintenance pass (commands/serve.py): a task started with the app, on
    the app, and cancelled when the app closes."""
    seen: list[App] = []
    cancelled = asyncio.Event()

    async def task(app: App) -> None:
        seen.append(app)
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async with open_app(neo4j.settings(), embedder=embedder, background=[task]) as app:
        for _ in range(100):
            if seen:
                break
            await asyncio.sleep(0.05)
        assert seen == [app] and not cancelled.is_set()
    assert cancelled.is_set()
