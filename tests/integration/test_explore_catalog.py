"""The analyst's catalog (cypher/explore.cypher) over a graph seeded through the real tools: every
query's rows are checked against what the lifecycle did — ids the tools returned, the feedback
that was sent, the times between the steps. Also: export → delete → import gives the same
answers, the same export checksum and the same retrieval results."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import Implementation

from slowave_graph.app import App
from slowave_graph.explore.catalog import ParamError, catalog_queries
from slowave_graph.explore.run import run_catalog_query
from slowave_graph.mcp.server import build_server
from slowave_graph.operator.export import export_graph
from slowave_graph.operator.importer import import_export, read_export
from tests.support.conformance import DEPLOY_PROCEDURE
from tests.support.mcp_helpers import activate, call, commit, ok, recall

pytestmark = pytest.mark.neo4j

CLIENT = Implementation(name="explore-test", version="1.2.3")
TASK_1 = "Prepare the shop release"
TASK_2 = "Deploy the shop API on kubernetes on Tuesday"
QUESTION_1 = "On which day do shop deploys run?"
QUESTION_2 = "Which day do deploys of the shop run?"
REASON = "moved to Tuesdays"


def num(event_id: str) -> int:
    return int(event_id.split("_", 1)[1])


@dataclass
class World:
    scope: str
    s1: str = ""
    s2: str = ""
    ctx1: str = ""
    rec1: str = ""
    rec2: str = ""
    ctx2: str = ""
    proc: str = ""
    batch: list[str] = field(default_factory=list)  # a, b, c remembered in one call
    d: str = ""
    source: dict[str, str] = field(default_factory=dict)  # memory → its remember event
    r1: list[str] = field(default_factory=list)  # what each retrieval showed, in rank order
    r2: list[str] = field(default_factory=list)
    m2: list[str] = field(default_factory=list)
    f1: dict[str, str] = field(default_factory=dict)  # memory → accepted event id
    f2: dict[str, str] = field(default_factory=dict)
    f3: dict[str, str] = field(default_factory=dict)
    proc_event: str = ""
    t_before: datetime = datetime.min
    t1: datetime = datetime.min

    @property
    def a(self) -> str:
        return self.batch[0]

    @property
    def b(self) -> str:
        return self.batch[1]

    @property
    def c(self) -> str:
        return self.batch[2]

    def feedback_1(self) -> dict[str, tuple[str, str | None]]:
        """rec1: a used (helped), the rest irrelevant."""
        return {m: ("used", "helped") if m == self.a else ("irrelevant", None) for m in self.r1}

    def feedback_2(self) -> dict[str, tuple[str, str | None]]:
        """rec2: a stale (superseded by d), d used, the rest not_used."""
        out: dict[str, tuple[str, str | None]] = {}
        for m in self.r2:
            out[m] = (
                ("stale", None) if m == self.a else ("used", "helped") if m == self.d else ("not_used", None)
            )
        return out


def accepted_by_entry(entries: list[str], event_ids: list[str]) -> dict[str, str]:
    """Ledger ids are handed out in entry order within a call (one counter block per call)."""
    return dict(zip(entries, sorted(event_ids, key=num), strict=True))


async def feedback(
    client: Client, retrieval_id: str, entries: list[dict[str, Any]], **extra: Any
) -> dict[str, Any]:
    args = {"retrieval_id": retrieval_id, "memory_feedback": entries, "coverage": "complete", **extra}
    return ok(await call(client, "slowave_feedback", args))


@pytest.fixture(scope="module")
async def world(app: App) -> AsyncIterator[World]:
    w = World(scope=f"explore:{uuid.uuid4().hex[:10]}")
    async with Client(build_server(app), client_info=CLIENT) as client:
        w.t_before = datetime.now(UTC)
        act1 = await activate(client, w.scope, TASK_1)
        w.s1, w.ctx1 = act1["session_id"], act1["retrieval_id"]
        assert act1["memories"] == []
        stored = ok(await call(client, "slowave_remember", {"scope": w.scope, "session_id": w.s1, "memories": [
            {"content": "Deploys of the shop run on Mondays", "type": "fact"},
            {"content": "The shop API runs on kubernetes", "type": "fact"},
            {"content": "The office plants are watered on Fridays", "type": "fact"}]}))  # fmt: skip
        w.batch = [r["data"]["memory_id"] for r in stored["results"]]
        w.source = {r["data"]["memory_id"]: r["data"]["source_event_id"] for r in stored["results"]}

        rec1 = await recall(client, w.scope, w.s1, QUESTION_1)
        w.rec1, w.r1 = rec1["retrieval_id"], [m["memory_id"] for m in rec1["memories"]]
        assert w.a in w.r1, rec1["memories"]
        done = await feedback(client, w.rec1, [
            {"memory_id": m, "assessment": a, **({"effect": e} if e else {})} for m, (a, e) in w.feedback_1().items()])  # fmt: skip
        w.f1 = accepted_by_entry(w.r1, done["accepted_event_ids"])

        d = ok(await call(client, "slowave_remember", {"scope": w.scope, "session_id": w.s1,
                                                        "content": "Deploys of the shop run on Tuesdays", "type": "fact"}))  # fmt: skip
        w.d, w.source[d["memory_id"]] = d["memory_id"], d["source_event_id"]
        w.t1 = datetime.now(UTC)

        rec2 = await recall(client, w.scope, w.s1, QUESTION_2)
        w.rec2, w.r2 = rec2["retrieval_id"], [m["memory_id"] for m in rec2["memories"]]
        assert {w.a, w.d} <= set(w.r2), rec2["memories"]
        rejected = await feedback(
            client, w.rec2, [{"memory_id": w.d, "assessment": "unassessable"}], coverage="partial"
        )
        assert [r["reason"] for r in rejected["rejected"]] == ["unassessable_requires_reason"]
        entries = []
        for m, (assessment, effect) in w.feedback_2().items():
            entry: dict[str, Any] = {"memory_id": m, "assessment": assessment}
            if assessment == "stale":
                entry.update(stale_reason="superseded", replacement_memory_id=w.d, reason=REASON)
            if effect:
                entry["effect"] = effect
            entries.append(entry)
        done = await feedback(client, w.rec2, entries)
        w.f2 = accepted_by_entry(w.r2, done["accepted_event_ids"])
        await feedback(client, w.ctx1, [])
        await commit(client, w.s1, final_goal="Release the shop", procedure=DEPLOY_PROCEDURE)
        w.proc = "proc_" + w.s1

        act2 = await activate(client, w.scope, TASK_2)
        w.s2, w.ctx2, w.m2 = (
            act2["session_id"],
            act2["retrieval_id"],
            [m["memory_id"] for m in act2["memories"]],
        )
        assert [p["procedure_id"] for p in act2["procedures"]] == [w.proc]
        assert len(w.m2) >= 2 and w.a not in w.m2, act2["memories"]
        done = await feedback(client, w.ctx2, [{"memory_id": m, "assessment": "used"} for m in w.m2],
                              procedure_feedback=[{"procedure_id": w.proc, "use": "used", "effect": "helped",
                                                   "contribution": "followed the steps"}])  # fmt: skip
        ordered = sorted(done["accepted_event_ids"], key=num)
        w.f3, w.proc_event = dict(zip(w.m2, ordered[:-1], strict=True)), ordered[-1]
        await commit(client, w.s2)
    yield w
    await app.db.run_write("delete_scope", scope=w.scope)


async def q(app: App, name: str, **params: Any) -> list[dict[str, Any]]:
    _, found = await run_catalog_query(app.db, name, params)
    return found


def project(found: list[dict[str, Any]], *columns: str) -> list[tuple[Any, ...]]:
    return [tuple(row[c] for c in columns) for row in found]


def iso(value: datetime) -> str:
    return value.isoformat()


async def test_memory_provenance(app: App, world: World) -> None:
    found = await q(app, "memory_provenance", memory_id=world.a)
    episode = [r for r in await q(app, "session_timeline", session_id=world.s1) if r["kind"] == "episode"]
    assert len(episode) == 1
    common = (world.a, world.scope, "stale", world.s1, TASK_1, "ended", "success", "explore-test", "1.2.3")
    assert project(found, "memory_id", "scope", "status", "session_id", "session_task", "session_status",
                   "session_outcome", "client_name", "client_version", "source_kind", "source_id", "origin",
                   "event_type") == [
        (*common, "event", world.source[world.a], True, "remember"),
        (*common, "episode", episode[0]["id"], False, None),
    ]  # fmt: skip
    assert found[0]["source_content"] == "Deploys of the shop run on Mondays"
    assert found[0]["recorded_at"] <= found[1]["recorded_at"]


async def test_memory_supersession_chain(app: App, world: World) -> None:
    expected = [
        (world.a, "stale", "superseded", world.d, REASON, world.f2[world.a]),
        (world.d, "active", None, None, None, None),
    ]
    for start in (world.a, world.d):
        found = await q(app, "memory_supersession_chain", memory_id=start)
        columns = ("memory_id", "status", "stale_reason", "superseded_by", "reason", "feedback_event_id")
        assert project(found, *columns) == expected
        assert found[0]["superseded_at"] == found[0]["retired_at"] is not None
    assert project(await q(app, "memory_supersession_chain", memory_id=world.b), "memory_id") == [(world.b,)]


async def test_beliefs_as_of(app: App, world: World) -> None:
    batch = sorted(world.batch)  # one remember call: the same created_at, then id order
    now = datetime.now(UTC)
    assert await q(app, "beliefs_as_of", scope=world.scope, as_of=iso(world.t_before)) == []
    at_t1 = await q(app, "beliefs_as_of", scope=world.scope, as_of=iso(world.t1))
    assert project(at_t1, "memory_id") == [(m,) for m in [*batch, world.d]]
    assert {r["memory_id"]: (r["status_now"], r["superseded_by"]) for r in at_t1}[world.a] == (
        "stale",
        world.d,
    )
    current = await q(app, "beliefs_as_of", scope=world.scope, as_of=iso(now))
    assert project(current, "memory_id") == [(m,) for m in [*batch, world.d] if m != world.a]
    topic = await q(app, "beliefs_as_of", scope=world.scope, as_of=iso(world.t1), topic="DEPLOYS")
    assert project(topic, "memory_id") == [(world.a,), (world.d,)]
    assert project(await q(app, "beliefs_as_of", scope=world.scope, as_of=iso(now), topic="deploys"),
                   "memory_id") == [(world.d,)]  # fmt: skip
    assert len(await q(app, "beliefs_as_of", scope=world.scope, as_of=iso(world.t1), limit=2)) == 2


async def test_memory_feedback_ledger(app: App, world: World) -> None:
    columns = ("event_id", "retrieval_id", "status", "assessment", "effect", "stale_reason",
               "replacement_memory_id", "reason", "effective", "client_name")  # fmt: skip
    found = await q(app, "memory_feedback_ledger", memory_id=world.a)
    assert project(found, *columns) == [
        (world.f1[world.a], world.rec1, "accepted", "used", "helped", None, None, None, True, "explore-test"),
        (
            world.f2[world.a],
            world.rec2,
            "accepted",
            "stale",
            None,
            "superseded",
            world.d,
            REASON,
            True,
            "explore-test",
        ),
    ]
    assert [r["query"] for r in found] == [QUESTION_1, QUESTION_2]
    ledger_d = await q(app, "memory_feedback_ledger", memory_id=world.d)
    rejected = await rejected_event(app, world)
    expected_d = [
        (rejected, world.rec2, "rejected", "unassessable_requires_reason", "unassessable", False),
        (world.f2[world.d], world.rec2, "accepted", None, "used", True),
    ]
    if world.d in world.m2:
        expected_d.append((world.f3[world.d], world.ctx2, "accepted", None, "used", True))
    assert (
        project(ledger_d, "event_id", "retrieval_id", "status", "rejection_reason", "assessment", "effective")
        == expected_d
    )


async def rejected_event(app: App, world: World) -> str:
    """The one rejected event (its id is not returned by the tool): recorded before call 2b's."""
    found = await q(app, "retrieval_feedback_ledger", retrieval_id=world.rec2)
    [event] = [r for r in found if r["status"] == "rejected"]
    assert event["seq"] < min(num(e) for e in world.f2.values())
    return str(event["event_id"])


async def test_retrieval_feedback_ledger_and_summary(app: App, world: World) -> None:
    found = await q(app, "retrieval_feedback_ledger", retrieval_id=world.rec2)
    expected = [(await rejected_event(app, world), "memory", world.d, "rejected", "unassessable", False)]
    expected += [(world.f2[m], "memory", m, "accepted", a, True) for m, (a, _) in world.feedback_2().items()]
    assert (
        project(found, "event_id", "target_kind", "target_id", "status", "assessment", "effective")
        == expected
    )
    procedure = await q(app, "retrieval_feedback_ledger", retrieval_id=world.ctx2)
    assert project([r for r in procedure if r["target_kind"] == "procedure"],
                   "event_id", "target_id", "assessment", "effect", "contribution") == [
        (world.proc_event, world.proc, "used", "helped", "followed the steps")]  # fmt: skip

    [summary] = await q(app, "retrieval_summary", retrieval_id=world.rec2)
    assert summary | {"created_at": None} == {
        "retrieval_id": world.rec2, "kind": "recall", "query": QUESTION_2, "scope": world.scope,
        "session_id": world.s1, "session_task": TASK_1, "created_at": None,
        "policy_version": summary["policy_version"], "relevant_total": summary["relevant_total"],
        "catalog_truncated": summary["catalog_truncated"], "page_size": 5, "pages_served": 1,
        "exposed_memories": len(world.r2), "exposed_procedures": 0, "accepted_events": len(world.r2),
        "rejected_events": 1, "coverage_complete": True, "retrieval_quality": None, "missing": [],
    }  # fmt: skip
    assert summary["relevant_total"] >= len(world.r2)
    [empty] = await q(app, "retrieval_summary", retrieval_id=world.ctx1)
    assert (empty["kind"], empty["exposed_memories"], empty["coverage_complete"]) == ("activate", 0, True)


async def test_retrieval_exposures(app: App, world: World) -> None:
    found = await q(app, "retrieval_exposures", retrieval_id=world.rec2)
    fb = world.feedback_2()
    assert project(found, "page", "rank", "kind", "target_id", "assessment", "effect", "event_id",
                   "ledger_events", "status_now", "pathway") == [
        (1, rank, "memory", m, fb[m][0], fb[m][1], world.f2[m], 2 if m == world.d else 1,
         "stale" if m == world.a else "active", "direct")
        for rank, m in enumerate(world.r2, start=1)
    ]  # fmt: skip
    found = await q(app, "retrieval_exposures", retrieval_id=world.ctx2)
    memories = [r for r in found if r["kind"] == "memory"]
    assert [r["target_id"] for r in memories] == world.m2
    assert {r["assessment"] for r in memories} == {"used"}
    assert project([r for r in found if r["kind"] == "procedure"], "rank", "target_id", "text", "assessment",
                   "effect") == [(1, world.proc, "Release the shop", "used", "helped")]  # fmt: skip


async def test_associations(app: App, world: World) -> None:
    centre = world.m2[0]
    found = await q(app, "memory_associations", memory_id=centre)
    assert project(found, "memory_id", "weight", "co_uses", "source") == [
        (m, 0.5, 1, "co_use") for m in sorted(world.m2[1:])
    ]
    assert await q(app, "memory_associations", memory_id=centre, min_weight=0.6) == []
    edges = await q(app, "memory_neighbourhood", memory_id=centre)
    pairs = sorted((x, y) for x in world.m2 for y in world.m2 if x < y)
    assert project(edges, "source_id", "target_id", "weight", "co_uses") == [(x, y, 0.5, 1) for x, y in pairs]


async def test_procedures_by_outcome(app: App, world: World) -> None:
    found = await q(app, "procedures_by_outcome", scope=world.scope)
    assert project(found, "procedure_id", "goal", "status", "outcome", "used", "helped", "harmed", "net_helped",
                   "times_exposed", "learned_in_session", "superseded_by") == [
        (world.proc, "Release the shop", "active", "success", 1, 1, 0, 1, 1, world.s1, None)]  # fmt: skip
    assert found[0]["last_used_at"] is not None
    assert await q(app, "procedures_by_outcome", scope=world.scope, outcome="failure") == []


async def test_scope_overview_and_sessions(app: App, world: World) -> None:
    [overview] = await q(app, "scope_overview", scope=world.scope)
    n = len(world.m2)
    assert {k: v for k, v in overview.items() if k not in ("created_at", "last_activity")} == {
        "scope": world.scope, "kind": "explore", "active_memories": 3, "stale_memories": 1,
        "supersessions": 1, "associations": n * (n - 1) // 2, "active_procedures": 1,
        "superseded_procedures": 0, "sessions": 2, "open_sessions": 0, "retrievals": 4,
        "accepted_feedback": len(world.r1) + len(world.r2) + n + 1, "rejected_feedback": 1, "events": 4,
        "episodes": 2, "concepts": overview["concepts"],
    }  # fmt: skip
    assert overview["concepts"] > 5  # what its memories are about
    sessions = await q(app, "scope_sessions", scope=world.scope)
    assert project(sessions, "session_id", "task", "status", "outcome", "remembered", "retrievals",
                   "formed_episode", "learned_procedure", "client_name") == [
        (world.s2, TASK_2, "ended", "success", 0, 1, True, False, "explore-test"),
        (world.s1, TASK_1, "ended", "success", 4, 3, True, True, "explore-test"),
    ]  # fmt: skip
    assert await q(app, "scope_overview", scope=world.scope + "-none") == []


async def test_session_timeline(app: App, world: World) -> None:
    found = await q(app, "session_timeline", session_id=world.s1)
    events = [world.source[m] for m in world.batch]
    assert project(found, "kind", "id")[:-1] == [
        ("retrieval", world.ctx1), *(("event", e) for e in sorted(events)), ("retrieval", world.rec1),
        ("event", world.source[world.d]), ("retrieval", world.rec2),
    ]  # fmt: skip
    assert found[-1]["kind"] == "episode" and found[-1]["detail"] == "success"
    assert [r["at"] for r in found] == sorted(r["at"] for r in found)


async def test_memory_usage_queries(app: App, world: World) -> None:
    [stale] = await q(app, "stale_memories", scope=world.scope)
    assert stale | {"retired_at": None} == {
        "memory_id": world.a, "content": "Deploys of the shop run on Mondays", "stale_reason": "superseded",
        "retired_at": None, "superseded_by": world.d, "replacement": "Deploys of the shop run on Tuesdays",
        "reason": REASON, "event_id": world.f2[world.a], "retrieval_id": world.rec2,
    }  # fmt: skip

    used = {world.a, world.d, *world.m2}
    exposed = {m: sum(m in r for r in (world.r1, world.r2, world.m2)) for m in [*world.batch, world.d]}
    never = [m for m in [*sorted(world.batch), world.d] if m not in used]
    never.sort(key=lambda m: -exposed[m])  # stable: created_at, then id, within equal exposure
    found = await q(app, "never_used_memories", scope=world.scope)
    assert project(found, "memory_id", "times_exposed") == [(m, exposed[m]) for m in never]

    uses = {m: int(m == world.a) + int(m == world.d) + int(m in world.m2) for m in [*world.batch, world.d]}
    most = sorted((m for m in uses if uses[m] > 0), key=lambda m: (-uses[m], -uses[m], m))
    found = await q(app, "most_used_memories", scope=world.scope)
    assert project(found, "memory_id", "used", "helped", "harmed", "times_exposed") == [
        (m, uses[m], uses[m], 0, exposed[m]) for m in most
    ]
    assert all(r["last_used_at"] is not None for r in found)


async def test_concept_queries(app: App, world: World) -> None:
    about = await q(app, "memory_concepts", memory_id=world.a)  # "Deploys of the shop run on Mondays"
    assert {r["key"] for r in about} >= {"deploi", "shop"}
    # the most specific first; a concept only this (retired) memory mentions weighs nothing
    weights = [r["walk_weight"] for r in about if r["df"] > 0]
    assert weights == sorted(weights, reverse=True)
    assert all(r["walk_weight"] is None for r in about if r["df"] == 0)
    shop = await q(app, "concept_memories", scope=world.scope, concept="Shop", include_stale=True)
    assert world.a in {r["memory_id"] for r in shop} and world.d in {r["memory_id"] for r in shop}
    current = await q(app, "concept_memories", scope=world.scope, concept="shop")
    assert world.a not in {r["memory_id"] for r in current}  # retired: only with include_stale
    hubs = await q(app, "scope_concepts", scope=world.scope)
    assert [r["df"] for r in hubs] == sorted((r["df"] for r in hubs), reverse=True)
    shared = await q(app, "memories_linked_by_concepts", memory_id=world.a, other_id=world.d)
    assert {"deploi", "shop"} <= {r["key"] for r in shared}


async def test_runner_checks_names_and_parameters(app: App, world: World) -> None:
    with pytest.raises(ParamError, match="not a catalog query"):
        await run_catalog_query(app.db, "delete_scope", {"scope": world.scope})
    with pytest.raises(ParamError, match="needs --param memory_id"):
        await run_catalog_query(app.db, "memory_provenance", {})
    with pytest.raises(ParamError, match="takes no parameter bogus"):
        await run_catalog_query(app.db, "memory_provenance", {"memory_id": world.a, "bogus": 1})
    # the scope still exists: nothing ran
    assert len(await q(app, "scope_overview", scope=world.scope)) == 1


def catalog_calls(world: World) -> dict[str, dict[str, Any]]:
    """One call per catalog query (the stats ones are database-wide and excluded)."""
    by_memory = {"memory_id": world.d}
    return {
        "memory_provenance": {"memory_id": world.a},
        "memory_supersession_chain": by_memory,
        "beliefs_as_of": {"scope": world.scope, "as_of": iso(world.t1)},
        "memory_feedback_ledger": by_memory,
        "retrieval_feedback_ledger": {"retrieval_id": world.rec2},
        "retrieval_summary": {"retrieval_id": world.rec2},
        "retrieval_exposures": {"retrieval_id": world.ctx2},
        "memory_associations": {"memory_id": world.m2[0]},
        "memory_concepts": {"memory_id": world.a},
        "concept_memories": {"scope": world.scope, "concept": "shop"},
        "scope_concepts": {"scope": world.scope},
        "memories_linked_by_concepts": {"memory_id": world.a, "other_id": world.d},
        "memory_neighbourhood": {"memory_id": world.m2[0]},
        "procedures_by_outcome": {"scope": world.scope},
        "scope_overview": {"scope": world.scope},
        "scope_sessions": {"scope": world.scope},
        "session_timeline": {"session_id": world.s1},
        "stale_memories": {"scope": world.scope},
        "never_used_memories": {"scope": world.scope},
        "most_used_memories": {"scope": world.scope},
    }


async def test_every_catalog_query_is_exercised(world: World) -> None:
    explore = [q.name for q in catalog_queries().values() if q.file == "explore"]
    assert sorted(catalog_calls(world)) == sorted(explore)


async def probe(app: App, scope: str) -> list[tuple[list[str], list[str], int]]:
    """Fixed questions through the activate service (no feedback: nothing learned from them)."""
    from slowave_graph.contract.activate import ActivateRequest
    from slowave_graph.services.context import ClientInfo

    out = []
    for question in (QUESTION_2, TASK_2, "Where does the shop API run?"):
        found = await app.services.activation.activate(
            ActivateRequest(scope=scope, task=question, initial_goal=question), ClientInfo("probe", "1")
        )
        out.append(([m.memory_id for m in found.memories], [p.procedure_id for p in found.procedures],
                    found.relevant_total))  # fmt: skip
    return out


async def test_export_delete_import_round_trip(app: App, world: World, tmp_path: Path) -> None:
    before = {name: await q(app, name, **params) for name, params in catalog_calls(world).items()}
    first = tmp_path / "scope.jsonl"
    with first.open("w", encoding="utf-8") as out:
        exported = await export_graph(app.db, out, [world.scope])
    answers = await probe(app, world.scope)  # after the export: its sessions are not in the file

    await app.db.run_write("delete_scope", scope=world.scope)
    assert await q(app, "scope_overview", scope=world.scope) == []
    assert await q(app, "memory_provenance", memory_id=world.a) == []

    restored = await import_export(app.db, read_export(first), batch_size=7)  # several batches
    assert restored["nodes"] == sum(exported["nodes"].values())
    assert restored["relationships"] == sum(exported["relationships"].values())
    await import_export(app.db, read_export(first))  # again: MERGE on ids (ASSESSED on event ids)
    second = tmp_path / "again.jsonl"
    with second.open("w", encoding="utf-8") as out:
        again = await export_graph(app.db, out, [world.scope])
    assert (again["nodes"], again["relationships"], again["checksum"]) == (
        exported["nodes"], exported["relationships"], exported["checksum"])  # fmt: skip

    after = {name: await q(app, name, **params) for name, params in catalog_calls(world).items()}
    assert after == before
    assert await probe(app, world.scope) == answers
