"""Learning is a function of the ledger: salience from effective assessments, idempotent
resubmission, retraction, harmed outweighing helped, and co-use associations that surface as the
associated pathway."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.mcp.server import build_server
from tests.support.conformance import seeded
from tests.support.mcp_helpers import activate, call, commit, ok, recall, settle

pytestmark = pytest.mark.neo4j


async def salience(app: App, memory_id: str) -> float:
    found = await app.db.driver.execute_query(
        "MATCH (m:Memory {id: $id}) RETURN m.salience AS s", id=memory_id, database_=app.db.database
    )
    return float(found.records[0]["s"])


async def assess(
    client: Client, retrieval: str, memory_id: str, assessment: str, **extra: Any
) -> dict[str, Any]:
    entry = {"memory_id": memory_id, "assessment": assessment, **extra}
    return ok(await call(client, "slowave_feedback", {"retrieval_id": retrieval, "memory_feedback": [entry]}))


async def test_used_helped_raises_resubmission_changes_nothing_not_used_retracts(
    app: App, scope: str
) -> None:
    async with Client(build_server(app)) as client:
        [mid] = await seeded(client, scope, ["The build cache lives in the ci-cache bucket"])
        act = await activate(client, scope, "Where is the build cache stored?")
        assert [m["memory_id"] for m in act["memories"]] == [mid]
        assert await salience(app, mid) == 0.5

        first = await assess(client, act["retrieval_id"], mid, "used")
        raised = await salience(app, mid)
        assert raised > 0.5
        assert first["applied"]["strengthened"] == [mid]
        assert first["applied"]["salience_changes"] == [
            {"target_id": mid, "before": 0.5, "after": round(raised, 6)}
        ]

        repeat = await assess(client, act["retrieval_id"], mid, "used")
        assert await salience(app, mid) == raised, "the same feedback again changes nothing"
        assert repeat["applied"]["unchanged"] == [mid] and len(repeat["accepted_event_ids"]) == 1

        retract = await assess(client, act["retrieval_id"], mid, "not_used")
        assert await salience(app, mid) == 0.5, "a later not_used retracts the earlier used"
        assert retract["applied"]["neutral"] == [mid]
    ledger = await app.db.driver.execute_query(
        "MATCH (:Retrieval {id: $r})-[a:ASSESSED]->(:Memory {id: $m}) "
        "RETURN a.assessment AS assessment, a.refines AS refines, a.event_id AS event ORDER BY a.seq",
        r=act["retrieval_id"], m=mid, database_=app.db.database,
    )  # fmt: skip
    events = [r.data() for r in ledger.records]
    assert [e["assessment"] for e in events] == ["used", "used", "not_used"], "append-only: all three kept"
    assert events[0]["refines"] is None and events[1]["refines"] == events[0]["event"]
    assert events[2]["refines"] == events[1]["event"]


async def test_one_harmed_outweighs_one_helped(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        [mid] = await seeded(client, scope, ["Restart the worker pool after changing queue settings"])
        one = await activate(client, scope, "What to do after changing queue settings?")
        two = await activate(client, scope, "Changed queue settings, what next?")
        await assess(client, one["retrieval_id"], mid, "used", effect="helped")
        data = await assess(client, two["retrieval_id"], mid, "used", effect="harmed")
        assert data["applied"]["weakened"] == [mid]
    assert await salience(app, mid) < 0.5


async def test_neutral_assessments_do_not_move_salience(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        [mid] = await seeded(client, scope, ["Feature flags are managed in flagd"])
        act = await activate(client, scope, "Where are feature flags managed?")
        for assessment, extra in (("irrelevant", {}), ("already_known", {}), ("unassessable", {"reason": "lost"}),
                                  ("used", {"effect": "no_effect"})):  # fmt: skip
            await assess(client, act["retrieval_id"], mid, assessment, **extra)
            assert await salience(app, mid) == 0.5, assessment


async def test_co_use_learns_an_association_that_surfaces_as_associated(app: App, scope: str) -> None:
    webhook = "Payment webhooks are retried three times with exponential backoff"
    rota = "The on-call rota for incidents is kept in the ops wiki"
    async with Client(build_server(app)) as client:
        x, y = await seeded(client, scope, [webhook, rota])
        question = "How many times are payment webhooks retried?"
        before = await activate(client, scope, question)
        assert [(m["memory_id"], m["pathway"]) for m in before["memories"]] == [(x, "direct")]
        await settle(client, before)
        await commit(client, before["session_id"])

        both = await activate(client, scope, "Payment webhooks keep failing; who is on call for incidents?",
                              initial_goal="Fix the webhook retries and page the on-call person")  # fmt: skip
        assert {m["memory_id"] for m in both["memories"]} == {x, y}
        await settle(client, both, "used")
        await commit(client, both["session_id"])

        after = await activate(client, scope, question)
        assert [(m["memory_id"], m["pathway"]) for m in after["memories"]] == [
            (x, "direct"),
            (y, "associated"),
        ]
        assert after["relevant_total"] == 2

        # retracting the co-use removes the association's support
        ok(await call(client, "slowave_feedback", {"retrieval_id": both["retrieval_id"], "memory_feedback": [
            {"memory_id": y, "assessment": "not_used"}]}))  # fmt: skip
        again = await activate(client, scope, question)
        assert [m["memory_id"] for m in again["memories"]] == [x]
    edge = await app.db.driver.execute_query(
        "MATCH (:Memory {id: $x})-[e:ASSOCIATED]-(:Memory {id: $y}) RETURN e.weight AS w, e.retrievals AS r",
        x=x, y=y, database_=app.db.database,
    )  # fmt: skip
    assert edge.records[0].data() == {"w": 0.0, "r": []}


async def test_feedback_becomes_experience_for_similar_questions(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        [refunds, _] = await seeded(client, scope, ["Refunds are processed nightly by the kestrel job",
                                                        "The kestrel job also rotates the audit logs"])  # fmt: skip
        act = await activate(client, scope, "Which job processes refunds?")
        assert refunds in [m["memory_id"] for m in act["memories"]]
        marks = [{"memory_id": m["memory_id"], "assessment": "used" if m["memory_id"] == refunds else "irrelevant"}
                 for m in act["memories"]]  # fmt: skip
        ok(
            await call(
                client, "slowave_feedback", {"retrieval_id": act["retrieval_id"], "memory_feedback": marks}
            )
        )
    repo = app.repo
    vectors = await app.embedder.aembed(["Which job processes refunds?", "What is the capital of Peru?"])
    same = await repo.experience(
        scope=scope, embeddings=vectors[:1], min_similarity=0.75, irrelevant_at=0.9, k=5
    )
    used = [r for r in same if r["id"] == refunds]
    assert used and used[0]["assessment"] == "used" and used[0]["similarity"] > 0.99
    assert (
        await repo.experience(
            scope=scope, embeddings=vectors[1:], min_similarity=0.75, irrelevant_at=0.9, k=5
        )
        == []
    )
    elsewhere = await repo.experience(
        scope=scope + "-x", embeddings=vectors[:1], min_similarity=0.75, irrelevant_at=0.9, k=5
    )
    assert elsewhere == [], "experience never crosses scopes"


async def test_activate_orders_by_what_feedback_taught_about_the_same_question(app: App, scope: str) -> None:
    """Experience reaches activate: the scope now has a learned retrieval, so the lookup runs
    (scope_state.has_learned) and the memory that helped overtakes the one judged irrelevant."""
    async with Client(build_server(app)) as client:
        await seeded(client, scope, ["Staging deploys run from the blue pipeline on weekdays",
                                     "Staging deploys run from the green pipeline on weekends"])  # fmt: skip
        question = "Which pipeline runs staging deploys?"
        first = await activate(client, scope, question)
        order = [m["memory_id"] for m in first["memories"]]
        assert len(order) == 2, first["memories"]
        top, second = order
        assert (await app.repo.scope_state(scope, scope)).has_learned is False
        marks = [{"memory_id": top, "assessment": "irrelevant"},
                 {"memory_id": second, "assessment": "used", "effect": "helped"}]  # fmt: skip
        ok(
            await call(
                client, "slowave_feedback", {"retrieval_id": first["retrieval_id"], "memory_feedback": marks}
            )
        )
        assert (await app.repo.scope_state(scope, scope)).has_learned is True
        again = await activate(client, scope, question)
        assert again["memories"][0]["memory_id"] == second, again["memories"]


async def test_recall_orders_by_what_feedback_taught_about_the_same_question(app: App, scope: str) -> None:
    """Experience reaches recall too: its session read tells it the scope has a learned retrieval
    (session_for_read's has_learned), so the lookup runs and the memory that helped comes first."""
    async with Client(build_server(app)) as client:
        await seeded(client, scope, ["Staging deploys run from the blue pipeline on weekdays",
                                     "Staging deploys run from the green pipeline on weekends"])  # fmt: skip
        question = "Which pipeline runs staging deploys?"
        session = (await activate(client, scope, "Ship the release"))["session_id"]
        first = await recall(client, scope, session, question)
        order = [m["memory_id"] for m in first["memories"]]
        assert len(order) == 2, first["memories"]
        top, second = order
        marks = [{"memory_id": top, "assessment": "irrelevant"},
                 {"memory_id": second, "assessment": "used", "effect": "helped"}]  # fmt: skip
        ok(
            await call(
                client, "slowave_feedback", {"retrieval_id": first["retrieval_id"], "memory_feedback": marks}
            )
        )
        again = await recall(client, scope, session, question)
        assert again["memories"][0]["memory_id"] == second, again["memories"]
