"""The concept layer and the walk over it, on a real Neo4j.

Concepts are written with their memories, weighted against hubs, kept per scope, and rebuilt by an
idempotent backfill; the walk stays in its scope and off retired memories; associated hits say why
they came, and irrelevant feedback closes the path for similar questions.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.graph.repository import WalkLimits
from slowave_graph.mcp.server import build_server
from slowave_graph.services import concept_upkeep as backfill
from slowave_graph.services.context import utcnow
from slowave_graph.services.ranking import DEFAULT_POLICY
from tests.support.mcp_helpers import activate, call, ok, recall, settle

pytestmark = [pytest.mark.neo4j, pytest.mark.lts]

POTTERY = [
    "Melanie took a pottery class on Saturday and made a blue bowl.",
    "Melanie says pottery is her therapy after a long week.",
    "Melanie's kids glazed mugs at the pottery studio.",
    "Melanie ran a 10k race to raise money for the shelter.",
]
LIMITS = WalkLimits(DEFAULT_POLICY.concept_fanout, DEFAULT_POLICY.walk_k, 50, DEFAULT_POLICY.hub_share, 500)


async def _store(app: App, scope: str, texts: list[str]) -> tuple[str, list[str]]:
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Keep notes"))["session_id"]
        ok(
            await call(
                client,
                "slowave_remember",
                {
                    "scope": scope,
                    "session_id": session,
                    "memories": [{"content": t, "type": "fact"} for t in texts],
                },
            )
        )
    found = await _q(app, "MATCH (m:Memory {scope: $scope}) RETURN m.id AS id, m.content AS c", scope=scope)
    by_text = {r["c"]: r["id"] for r in found}
    return session, [by_text[t] for t in texts]


async def _q(app: App, query: str, **params: Any) -> list[dict[str, Any]]:
    result = await app.db.driver.execute_query(query, params, database_=app.db.database)
    return [r.data() for r in result.records]


async def _layer(app: App, scope: str) -> dict[str, Any]:
    """The concept layer of a scope as a comparable value."""
    concepts = await _q(
        app,
        "MATCH (c:Concept {scope: $scope}) OPTIONAL MATCH (c)-[:IN_SCOPE]->(s:Scope) "
        "RETURN c.key AS key, c.name AS name, c.kind AS kind, c.df AS df, s.id AS home ORDER BY key",
        scope=scope,
    )
    mentions = await _q(
        app,
        "MATCH (m:Memory {scope: $scope})-[r:MENTIONS]->(c:Concept) "
        "RETURN m.id AS m, c.key AS c, r.weight AS w ORDER BY m, c",
        scope=scope,
    )
    [home] = await _q(app, "MATCH (s:Scope {id: $scope}) RETURN s.active_memories AS n", scope=scope)
    return {"concepts": concepts, "mentions": mentions, "active": home["n"]}


async def test_remember_writes_concepts_with_counts_in_the_same_transaction(app: App, scope: str) -> None:
    _, ids = await _store(app, scope, POTTERY)
    layer = await _layer(app, scope)
    by_key = {c["key"]: c for c in layer["concepts"]}
    assert by_key["potteri"]["df"] == 3 and by_key["potteri"]["home"] == scope
    assert by_key["melani"]["df"] == 4  # in every memory of the scope
    assert layer["active"] == 4
    assert {m["m"] for m in layer["mentions"] if m["c"] == "potteri"} == set(ids[:3])
    assert all(m["w"] > 0 for m in layer["mentions"])
    # every memory is marked with the extractor that linked it
    assert (
        await _q(app, "MATCH (m:Memory {scope: $s}) WHERE m.concepts_version IS NULL RETURN m", s=scope) == []
    )


async def test_the_walk_skips_hubs_stays_in_its_scope_and_off_retired_memories(app: App, scope: str) -> None:
    other = scope + "-twin"
    _, ids = await _store(
        app, scope, POTTERY + [f"Melanie noted item {i} of the shelter list." for i in range(60)]
    )
    _, twin = await _store(app, other, POTTERY)
    seeds = [{"id": ids[0], "weight": 1.0}]
    [vector] = await app.embedder.aembed_query(["pottery"])  # type: ignore[attr-defined]

    async def walked() -> dict[str, list[str]]:
        around = await app.repo.candidate_context(
            scope=scope, context_ids=[], pool_ids=[], associate_ids=[], seeds=seeds, embeddings=[vector],
            now=utcnow(),
            walk=LIMITS, min_strength=0.2, half_life_days=90.0,
        )  # fmt: skip
        return {r["id"]: [p["key"] for p in r["paths"]] for r in around.walked}

    reached = await walked()
    assert ids[1] in reached and ids[2] in reached and "potteri" in reached[ids[1]]
    assert not set(twin) & set(reached)  # the twin scope has the same concepts: never reached
    # "melanie" is in all 64 memories of the scope (a hub); the shelter memories share nothing else
    assert all("melani" not in paths for paths in reached.values())
    assert not set(ids[4:]) & set(reached)

    # a memory marked stale leaves the walk and the counts
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Check pottery notes"))["session_id"]
        shown = await recall(client, scope, session, "Where does Melanie do pottery?", page_size=10)
        target = next(m["memory_id"] for m in shown["memories"] if m["memory_id"] == ids[2])
        ok(await call(client, "slowave_feedback", {"retrieval_id": shown["retrieval_id"], "memory_feedback": [
            {"memory_id": target, "assessment": "stale", "stale_reason": "outdated", "reason": "studio closed"}]}))  # fmt: skip
    assert ids[2] not in await walked()
    [pottery] = await _q(app, "MATCH (c:Concept {scope: $s, key: 'potteri'}) RETURN c.df AS df", s=scope)
    assert pottery["df"] == 2


async def test_associated_hits_say_why_and_irrelevant_feedback_closes_the_path(app: App, scope: str) -> None:
    texts = [
        "The Atlas login service issues tokens that expire after 45 minutes.",
        "Atlas tokens are signed by the Keystone vault.",
        "The Keystone vault also stores the Atlas database password.",
        "Keystone vault rotates its signing keys every Sunday night.",
        "The cafeteria serves lasagna on Fridays.",
        # a scope of 65: a concept in 3 memories is specific (5 %), not a hub
        *(f"Locker {i} on the second floor is free again." for i in range(60)),
    ]
    _, ids = await _store(app, scope, texts)
    rotation, cafeteria = ids[3], ids[4]
    async with Client(build_server(app)) as client:
        act = await activate(client, scope, "Who signs the Atlas tokens?", page_size=10)
        shown = {m["memory_id"]: m for m in act["memories"]}
        # the rotation says nothing of Atlas tokens: it comes over the graph, saying how
        assert shown[rotation]["pathway"] == "associated"
        why = shown[rotation]["provenance"]["association"]
        assert why["via"] == "concept" and {"Keystone", "vault"} <= set(why["concepts"])
        assert shown[why["from_memory_id"]]["pathway"] == "direct"
        assert cafeteria not in shown
        marks = [{"memory_id": rotation, "assessment": "irrelevant"}]
        marks += [{"memory_id": m, "assessment": "not_used"} for m in shown if m != rotation]
        ok(await call(client, "slowave_feedback", {
            "retrieval_id": act["retrieval_id"], "memory_feedback": marks, "coverage": "complete"}))  # fmt: skip
        # a similar question: the path to the memory marked irrelevant is closed
        again = await activate(client, scope, "Who signs Atlas tokens?", page_size=10)
        assert rotation not in {m["memory_id"] for m in again["memories"]}
        await settle(client, again)
        # an unrelated question gets nothing, associated hits included
        off = await activate(client, scope, "What is the boiling point of liquid nitrogen?")
        assert off["memories"] == []


async def test_the_backfill_builds_what_writes_build_and_a_second_run_changes_nothing(
    app: App, scope: str
) -> None:
    await _store(app, scope, POTTERY)
    written = await _layer(app, scope)
    # a store from before the concept layer: no concepts, no marks, no counts
    await _q(
        app,
        "MATCH (c:Concept {scope: $s}) DETACH DELETE c WITH count(*) AS _ "
        "MATCH (m:Memory {scope: $s}) REMOVE m.concepts_version WITH count(*) AS _ "
        "MATCH (x:Scope {id: $s}) REMOVE x.active_memories",
        s=scope,
    )
    assert (await _layer(app, scope))["concepts"] == []
    first = await backfill.backfill(app.db)
    assert first.memories >= 4 and scope in first.scopes
    assert await _layer(app, scope) == written
    assert await backfill.up_to_date(app.db)
    second = await backfill.backfill(app.db)
    assert second.memories == 0 and await _layer(app, scope) == written


async def test_concepts_of_a_memory_for_the_dashboard(app: App, scope: str) -> None:
    _, ids = await _store(app, scope, POTTERY)
    rows = await app.db.run_read("concepts_of_memory", id=ids[0])
    assert {"potteri", "bowl"} <= {r["key"] for r in rows}
    assert all(r["df"] >= 1 for r in rows)
