"""Every feedback rejection reason and every mutual-exclusion rule, table-driven, through the MCP
client; each rejected call is shown to have written nothing but its rejection event."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.mcp.server import build_server
from tests.support.conformance import DEPLOY_PROCEDURE, remember_many
from tests.support.mcp_helpers import activate, call, commit, error, ok, paths, settle

pytestmark = pytest.mark.neo4j

MISSING = "sch_999999999"


@dataclass(frozen=True)
class World:
    scope: str
    retrieval: str
    session: str
    a: str  # exposed
    b: str  # exposed
    hidden: str  # same scope, not exposed
    replacement: str  # active, same scope
    retired: str  # stale, same scope
    foreign: str  # another scope
    procedure: str  # exposed


@pytest.fixture(scope="module")
async def world(app: App) -> World:
    scope = f"rules:{uuid.uuid4().hex[:10]}"
    async with Client(build_server(app)) as client:
        setup = await activate(client, scope, "Set up")
        ids = await remember_many(client, scope, setup["session_id"], [
            "Ledger exports run at 01:00 UTC", "Ledger exports are gzip-compressed CSV",
            "The office plants are watered on Fridays", "Ledger exports land in the finance bucket",
            "Ledger exports used to be XML files"])  # fmt: skip
        await settle(client, setup)
        await commit(client, setup["session_id"], procedure={**DEPLOY_PROCEDURE, "summary": "Export the ledger"},
                     final_goal="Export the ledger to the finance bucket")  # fmt: skip
        other = await activate(client, scope + "-other", "Elsewhere")
        [foreign] = await remember_many(
            client, scope + "-other", other["session_id"], ["Ledger exports run hourly"]
        )
        # retire one memory through the tool itself
        probe = await activate(client, scope, "How are ledger exports formatted: XML files?")
        retired = ids[4]
        assert retired in [m["memory_id"] for m in probe["memories"]]
        ok(await call(client, "slowave_feedback", {"retrieval_id": probe["retrieval_id"], "memory_feedback": [
            {"memory_id": retired, "assessment": "stale", "stale_reason": "outdated", "reason": "now CSV"}]}))  # fmt: skip
        act = await activate(client, scope, "When do ledger exports run and what format are they?")
        shown = [m["memory_id"] for m in act["memories"]]
        assert {ids[0], ids[1]} <= set(shown) and ids[2] not in shown, act["memories"]
        assert [p["procedure_id"] for p in act["procedures"]] == ["proc_" + setup["session_id"]]
    return World(scope, act["retrieval_id"], act["session_id"], ids[0], ids[1], ids[2], ids[3], retired, foreign,
                 "proc_" + setup["session_id"])  # fmt: skip


async def ledger(app: App, world: World) -> dict[str, Any]:
    """What feedback can change: events by status, memory statuses, supersessions, salience, tallies."""
    found = await app.db.driver.execute_query(
        """
        MATCH (r:Retrieval {id: $retrieval})
        RETURN COUNT { (r)-[:ASSESSED {status: 'accepted'}]->() } AS accepted,
               COUNT { (r)-[:ASSESSED {status: 'rejected'}]->() } AS rejected,
               COLLECT { MATCH (m:Memory {scope: $scope}) RETURN [m.id, m.status, m.salience] } AS memories,
               COUNT { (:Memory {scope: $scope})-[:SUPERSEDES]->() } AS supersedes,
               COLLECT { MATCH (p:Procedure {scope: $scope})
                         RETURN [p.tally_used, p.tally_helped, p.tally_harmed] } AS tallies,
               r.complete_exposures AS complete
        """,
        retrieval=world.retrieval,
        scope=world.scope,
        database_=app.db.database,
    )
    return found.records[0].data()


def memory_cases(w: World) -> list[tuple[dict[str, Any], str, str | None]]:
    """(entry, expected reason, field) — reason "accepted" means no rejection."""
    stale = {"assessment": "stale", "reason": "changed"}
    return [
        ({"memory_id": w.hidden, "assessment": "used"}, "target_not_exposed", "target_id"),
        ({"memory_id": MISSING, "assessment": "used"}, "target_not_exposed", "target_id"),
        ({"memory_id": w.foreign, "assessment": "used"}, "target_not_exposed", "target_id"),
        ({"memory_id": w.a, "assessment": "useful"}, "invalid_memory_assessment", "assessment"),
        ({"memory_id": w.a, "assessment": "wrong"}, "invalid_memory_assessment", "assessment"),
        ({"memory_id": w.a, "assessment": "used", "relevance": "very"}, "invalid_relevance", "relevance"),
        ({"memory_id": w.a, "assessment": "used", "effect": "unknown"},
         "used_requires_helped_no_effect_or_harmed_effect", "effect"),
        ({"memory_id": w.a, "assessment": "used", "effect": "great"},
         "used_requires_helped_no_effect_or_harmed_effect", "effect"),
        ({"memory_id": w.a, "assessment": "not_used", "effect": "helped"},
         "neutral_requires_unknown_or_absent_effect", "effect"),
        ({"memory_id": w.a, "assessment": "irrelevant", "effect": "harmed"},
         "irrelevant_requires_unknown_or_absent_effect", "effect"),
        ({"memory_id": w.a, "assessment": "already_known", "effect": "helped"},
         "already_known_requires_unknown_or_absent_effect", "effect"),
        ({"memory_id": w.a, "assessment": "already_known", "replacement_memory_id": w.replacement},
         "already_known_requires_no_replacement", "replacement_memory_id"),
        ({"memory_id": w.a, **stale, "stale_reason": "outdated", "effect": "helped"},
         "stale_requires_unknown_or_absent_effect", "effect"),
        ({"memory_id": w.a, "assessment": "unassessable"}, "unassessable_requires_reason", "reason"),
        ({"memory_id": w.a, "assessment": "unassessable", "reason": "  "}, "unassessable_requires_reason", "reason"),
        ({"memory_id": w.a, "assessment": "stale", "stale_reason": "outdated"}, "stale_requires_reason", "reason"),
        ({"memory_id": w.a, **stale}, "stale_requires_valid_stale_reason", "stale_reason"),
        ({"memory_id": w.a, **stale, "stale_reason": "old"}, "stale_requires_valid_stale_reason", "stale_reason"),
        ({"memory_id": w.a, **stale, "stale_reason": "superseded"},
         "superseded_requires_replacement_memory_id", "replacement_memory_id"),
        ({"memory_id": w.a, **stale, "stale_reason": "superseded", "replacement_memory_id": MISSING},
         "replacement_not_found", "replacement_memory_id"),
        ({"memory_id": w.a, **stale, "stale_reason": "superseded", "replacement_memory_id": w.foreign},
         "replacement_scope_mismatch", "replacement_memory_id"),
        ({"memory_id": w.a, **stale, "stale_reason": "superseded", "replacement_memory_id": w.a},
         "replacement_matches_retired_memory", "replacement_memory_id"),
        ({"memory_id": w.a, **stale, "stale_reason": "superseded", "replacement_memory_id": "memory 7"},
         "invalid_replacement_memory_id", "replacement_memory_id"),
        ({"memory_id": w.a, **stale, "stale_reason": "superseded", "replacement_memory_id": w.retired},
         "replacement_not_current", "replacement_memory_id"),
        ({"memory_id": w.a, "assessment": "not_used", "stale_reason": "outdated"},
         "stale_reason_requires_stale_assessment", "stale_reason"),
        ({"memory_id": w.a, "assessment": "used", "replacement_memory_id": w.replacement},
         "replacement_requires_stale_assessment", "replacement_memory_id"),
        ({"memory_id": w.a, "assessment": "used"}, "accepted", None),
        ({"memory_id": w.a, "assessment": "used", "effect": "harmed", "relevance": "relevant"}, "accepted", None),
        ({"memory_id": w.a, "assessment": "not_used", "effect": "unknown"}, "accepted", None),
        ({"memory_id": w.a, "assessment": "irrelevant", "relevance": "irrelevant"}, "accepted", None),
        ({"memory_id": w.a, "assessment": "already_known"}, "accepted", None),
        ({"memory_id": w.a, "assessment": "unassessable", "reason": "lost the trace"}, "accepted", None),
    ]  # fmt: skip


def procedure_cases(w: World) -> list[tuple[dict[str, Any], str, str | None]]:
    p = w.procedure
    return [
        ({"procedure_id": "proc_nope", "use": "used", "contribution": "x"}, "target_not_exposed", "target_id"),
        ({"procedure_id": p, "use": "adopted"}, "invalid_procedure_use", "use"),
        ({"procedure_id": p, "use": "used", "effect": "great", "contribution": "x"}, "invalid_procedure_effect", "effect"),
        ({"procedure_id": p, "use": "used"}, "used_procedure_requires_contribution", "contribution"),
        ({"procedure_id": p, "use": "used", "contribution": " "}, "used_procedure_requires_contribution",
         "contribution"),
        ({"procedure_id": p, "use": "not_used", "effect": "helped"},
         "not_used_requires_unknown_effect_and_no_contribution", "effect"),
        ({"procedure_id": p, "use": "not_used", "contribution": "x"},
         "not_used_requires_unknown_effect_and_no_contribution", "contribution"),
        ({"procedure_id": p, "use": "unassessable"}, "unassessable_requires_reason", "reason"),
        ({"procedure_id": p, "use": "not_used", "effect": "unknown"}, "accepted", None),
        ({"procedure_id": p, "use": "unassessable", "reason": "did not get that far"}, "accepted", None),
        ({"procedure_id": p, "use": "used", "contribution": "followed steps 1-2"}, "accepted", None),
    ]  # fmt: skip


@pytest.mark.parametrize("kind", ["memory", "procedure"])
async def test_each_rule_on_its_own(app: App, world: World, kind: str) -> None:
    cases = memory_cases(world) if kind == "memory" else procedure_cases(world)
    key = "memory_feedback" if kind == "memory" else "procedure_feedback"
    target_key = "memory_id" if kind == "memory" else "procedure_id"
    in_scope = {world.a, world.b, world.hidden, world.replacement, world.retired, world.procedure}
    async with Client(build_server(app)) as client:
        for entry, reason, field in cases:
            before = await ledger(app, world)
            data = ok(await call(client, "slowave_feedback", {"retrieval_id": world.retrieval, key: [entry]}))
            after = await ledger(app, world)
            target = entry[target_key]
            if reason == "accepted":
                assert data["rejected"] == [] and len(data["accepted_event_ids"]) == 1, (entry, data)
                assert after["accepted"] == before["accepted"] + 1
                continue
            assert [(r["target_id"], r["reason"], r["field"]) for r in data["rejected"]] == [(target, reason, field)], (
                entry, data)  # fmt: skip
            assert data["accepted_event_ids"] == []
            # nothing written but the rejection event (kept only for existing targets of this scope)
            expected_rejected = before["rejected"] + (1 if target in in_scope else 0)
            assert after == {**before, "rejected": expected_rejected}, entry


async def test_valid_siblings_are_accepted_next_to_a_rejected_entry(app: App, world: World) -> None:
    async with Client(build_server(app)) as client:
        data = ok(await call(client, "slowave_feedback", {"retrieval_id": world.retrieval, "memory_feedback": [
            {"memory_id": world.a, "assessment": "useful"},
            {"memory_id": world.b, "assessment": "not_used"}]}))  # fmt: skip
    assert [r["reason"] for r in data["rejected"]] == ["invalid_memory_assessment"]
    assert len(data["accepted_event_ids"]) == 1 and data["applied"]["neutral"] == [world.b]


async def test_supersession_retires_and_links(app: App, world: World) -> None:
    async with Client(build_server(app)) as client:
        act = await activate(client, world.scope, "Where do ledger exports land?")
        shown = [m["memory_id"] for m in act["memories"]]
        assert world.replacement in shown
        fresh = ok(await call(client, "slowave_remember", {
            "scope": world.scope, "session_id": act["session_id"],
            "content": "Ledger exports land in the finance-archive bucket", "type": "fact"}))  # fmt: skip
        data = ok(await call(client, "slowave_feedback", {"retrieval_id": act["retrieval_id"], "memory_feedback": [
            {"memory_id": world.replacement, "assessment": "stale", "stale_reason": "superseded",
             "reason": "bucket renamed", "replacement_memory_id": fresh["memory_id"]}]}))  # fmt: skip
    assert data["applied"]["stale"] == [world.replacement]
    chain = await app.db.driver.execute_query(
        "MATCH (n:Memory {id: $new})-[s:SUPERSEDES]->(o:Memory {id: $old}) "
        "RETURN o.status AS status, o.active_key IS NULL AS keyless, s.reason AS reason, "
        "s.feedback_event_id = $event AS linked",
        new=fresh["memory_id"], old=world.replacement, event=data["accepted_event_ids"][0],
        database_=app.db.database,
    )  # fmt: skip
    assert chain.records[0].data() == {
        "status": "stale",
        "keyless": True,
        "reason": "bucket renamed",
        "linked": True,
    }


EXCLUSIVE_FEEDBACK = [
    ({"items": [{"retrieval_id": "ctx_x"}], "retrieval_id": "ctx_x"}, "retrieval_id"),
    ({"items": [{"retrieval_id": "ctx_x"}], "coverage": "complete"}, "coverage"),
    ({"items": [{"retrieval_id": "ctx_x"}], "memory_feedback": []}, "memory_feedback"),
    ({"items": [{"retrieval_id": "ctx_x"}], "procedure_feedback": []}, "procedure_feedback"),
    ({"items": [{"retrieval_id": "ctx_x"}], "retrieval_quality": "good"}, "retrieval_quality"),
    ({"items": [{"retrieval_id": "ctx_x"}], "missing": ["x"]}, "missing"),
    ({"memory_feedback": []}, "retrieval_id"),
    ({}, "retrieval_id"),
    ({"items": []}, "items"),
    ({"retrieval_id": "ctx_x", "coverage": "total"}, "coverage"),
    ({"retrieval_id": "ctx_x", "memory_feedback": [{"assessment": "used"}]}, "memory_feedback[0].memory_id"),
    ({"retrieval_id": "ctx_x", "memory_feedback": [{"memory_id": "a", "assessment": "used", "x": 1}]},
     "memory_feedback[0].x"),
    ({"items": [{"retrieval_id": "ctx_x", "coverage": "maybe"}]}, "items[0].coverage"),
]  # fmt: skip

EXCLUSIVE_RECALL = [
    ({"continue_from": "cur_x", "query": "q"}, "query"),
    ({"continue_from": "cur_x", "page_size": 5}, "page_size"),
    ({"continue_from": "cur_x", "task_context": {"a": 1}}, "task_context"),
    ({"continue_from": "cur_x", "semantic_context": "s"}, "semantic_context"),
    ({"continue_from": "cur_x", "evidence": "full"}, "evidence"),
    ({}, "query"),
    ({"query": "q", "evidence": "everything"}, "evidence"),
    ({"query": "q", "page_size": 0}, "page_size"),
]

EXCLUSIVE_REMEMBER = [
    ({"content": "c", "type": "fact", "memories": [{"content": "d", "type": "fact"}]}, "memories"),
    ({"occurred_at": "2026-01-01T00:00:00Z", "memories": [{"content": "d", "type": "fact"}]}, "memories"),
    ({"content": "c"}, "type"),
    ({"type": "fact"}, "content"),
]


@pytest.mark.parametrize(("arguments", "path"), EXCLUSIVE_FEEDBACK)
async def test_feedback_shape_rules(app: App, world: World, arguments: dict[str, Any], path: str) -> None:
    before = await ledger(app, world)
    async with Client(build_server(app)) as client:
        assert path in paths(error(await call(client, "slowave_feedback", arguments), "invalid_input"))
    assert await ledger(app, world) == before


@pytest.mark.parametrize(("arguments", "path"), EXCLUSIVE_RECALL)
async def test_recall_exclusions(app: App, world: World, arguments: dict[str, Any], path: str) -> None:
    before = await ledger(app, world)
    async with Client(build_server(app)) as client:
        envelope = await call(
            client, "slowave_recall", {"scope": world.scope, "session_id": world.session, **arguments}
        )
        assert paths(error(envelope, "invalid_input")) == {path}
    assert await ledger(app, world) == before


@pytest.mark.parametrize(("arguments", "path"), EXCLUSIVE_REMEMBER)
async def test_remember_exclusions(app: App, world: World, arguments: dict[str, Any], path: str) -> None:
    before = await ledger(app, world)
    async with Client(build_server(app)) as client:
        envelope = await call(client, "slowave_remember", {"scope": world.scope, "session_id": world.session,
                                                           **arguments})  # fmt: skip
        assert paths(error(envelope, "invalid_input")) == {path}
    assert await ledger(app, world) == before
