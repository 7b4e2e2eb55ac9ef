"""A memory that consolidates, through the tools: remember finds near-duplicates and updates of a
new claim and links them in the graph; retrieval shows a duplicate cluster once, an update pair
together (newest first) and nothing the agent just said; claims written from one template stay
apart. Real embeddings, real Neo4j."""

from __future__ import annotations

import dataclasses

import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.mcp.server import build_server
from slowave_graph.services import Services
from slowave_graph.services.ranking import policy_for
from tests.support.mcp_helpers import activate, call, ok, recall, remember, settle
from tests.support.servers import CLIENT_INFO

pytestmark = pytest.mark.neo4j


async def links(app: App, scope: str) -> set[tuple[str, str, str]]:
    found = await app.db.driver.execute_query(
        "MATCH (a:Memory {scope: $scope})-[s:SIMILAR_TO]->(b:Memory) RETURN a.id AS a, b.id AS b, s.kind AS kind",
        scope=scope,
        database_=app.db.database,
    )
    return {(r["a"], r["b"], r["kind"]) for r in found.records}


async def test_a_paraphrase_is_linked_as_duplicate_and_shown_once(app: App, scope: str) -> None:
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Note how the shop deploys"))["session_id"]
        first = await remember(client, scope, session, "Deploys of the shop go out through Argo CD")
        await remember(client, scope, session, "Shop invoices are archived to S3 every night")
        again = await remember(client, scope, session, "The shop is deployed via ArgoCD")
        assert "similar" not in first
        assert again["similar"] == [
            {"memory_id": first["memory_id"], "kind": "duplicate",
             "excerpt": "Deploys of the shop go out through Argo CD"}
        ]  # fmt: skip
        assert await links(app, scope) == {(again["memory_id"], first["memory_id"], "duplicate")}
        shown = await activate(client, scope, "How is the shop deployed?")
        deploys = [m for m in shown["memories"] if "rgo" in m["content"]]
        assert len(deploys) == 1, shown["memories"]
        other = ({first["memory_id"], again["memory_id"]} - {deploys[0]["memory_id"]}).pop()
        assert deploys[0]["provenance"]["also_stored_as"] == [other]
        # one feedback entry covers the cluster: commit needs nothing more
        await settle(client, shown)
        ok(await call(client, "slowave_commit", {"session_id": shown["session_id"], "final_goal": "g",
                                                 "outcome": "success", "outcome_summary": "s",
                                                 "verification": {"status": "verified", "summary": "s"}}))  # fmt: skip


async def test_an_update_is_shown_beside_what_it_updates_and_settled_in_one_feedback(
    app: App, scope: str
) -> None:
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Record the database facts"))["session_id"]
        old = await remember(client, scope, session, "The staging database runs in us-east-1")
        for filler in ("The staging database is backed up nightly", "Staging deploys need a green build"):
            await remember(client, scope, session, filler)
        new = await remember(client, scope, session, "The staging database moved to eu-west-2")
        assert [(s["memory_id"], s["kind"]) for s in new["similar"]] == [(old["memory_id"], "update")]
        shown = await recall(client, scope, session, "Which region is the staging database in?", page_size=10)
        ids = [m["memory_id"] for m in shown["memories"]]
        at = ids.index(new["memory_id"])
        assert ids[at + 1] == old["memory_id"], "the pair stands together, newest first"
        by_id = {m["memory_id"]: m for m in shown["memories"]}
        assert by_id[new["memory_id"]]["provenance"]["conflicts_with"] == [old["memory_id"]]
        assert by_id[old["memory_id"]]["provenance"]["conflicts_with"] == [new["memory_id"]]
        entries = [
            {"memory_id": old["memory_id"], "assessment": "stale", "stale_reason": "superseded",
             "reason": "moved", "replacement_memory_id": new["memory_id"]},
            {"memory_id": new["memory_id"], "assessment": "used", "effect": "helped"},
        ] + [{"memory_id": i, "assessment": "not_used"} for i in ids if i not in (old["memory_id"], new["memory_id"])]  # fmt: skip
        done = ok(await call(client, "slowave_feedback", {"retrieval_id": shown["retrieval_id"],
                                                          "memory_feedback": entries, "coverage": "complete"}))  # fmt: skip
        assert done["rejected"] == [] and done["applied"]["stale"] == [old["memory_id"]]
        after = await recall(client, scope, session, "Which region is the staging database in?", page_size=10)
        assert old["memory_id"] not in [m["memory_id"] for m in after["memories"]]


async def test_a_partner_the_search_missed_is_brought_in(app: App, scope: str) -> None:
    """Only the new value matches the question; the claim it updates comes along to be retired."""
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Record rate limits"))["session_id"]
        old = await remember(
            client, scope, session, "The public API gateway allows 100 requests per minute per key"
        )
        new = await remember(
            client, scope, session, "The public API gateway allows 600 requests per minute per key"
        )
        assert [s["kind"] for s in new.get("similar", [])] == ["update"], new
        shown = await recall(client, scope, session, "What is the per-key limit of the public API gateway?")
        ids = [m["memory_id"] for m in shown["memories"]]
        assert ids[:2] == [new["memory_id"], old["memory_id"]], shown["memories"]


async def test_forty_templated_facts_are_forty_memories_in_eight_pages(app: App, scope: str) -> None:
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Record the pipeline"))["session_id"]
        facts = [
            {"content": f"Stage {n} of the ingest pipeline publishes to queue q{n}", "type": "fact"}
            for n in range(40)
        ]
        stored = ok(
            await call(client, "slowave_remember", {"scope": scope, "session_id": session, "memories": facts})
        )
        assert all("similar" not in r["data"] for r in stored["results"])
        assert await links(app, scope) == set()
        page = await recall(client, scope, session, "Which queue does each ingest pipeline stage publish to?")
        seen = [m["memory_id"] for m in page["memories"]]
        pages = 1
        while page.get("continue_from"):
            arguments = {"scope": scope, "session_id": session, "continue_from": page["continue_from"]}
            page = ok(await call(client, "slowave_recall", arguments))
            seen += [m["memory_id"] for m in page["memories"]]
            pages += 1
        assert (len(seen), len(set(seen)), pages) == (40, 40, 8)


async def test_what_the_task_already_says_is_not_shown(app: App, scope: str) -> None:
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Record"))["session_id"]
        said = await remember(client, scope, session, "Release notes are written in the CHANGELOG file")
        other = await remember(client, scope, session, "Release tags follow semver with a leading v")
        shown = await activate(
            client, scope, "Prepare the release. Release notes are written in the CHANGELOG file, as always."
        )
        ids = [m["memory_id"] for m in shown["memories"]]
        assert said["memory_id"] not in ids and other["memory_id"] in ids


async def test_a_batch_links_its_own_claims_and_consolidation_can_be_off(app: App, scope: str) -> None:
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Record"))["session_id"]
        batch = [{"content": "Nightly builds are triggered at 02:00 UTC", "type": "fact"},
                 {"content": "Every night at 2 AM UTC the nightly build is triggered", "type": "fact"}]  # fmt: skip
        done = ok(
            await call(client, "slowave_remember", {"scope": scope, "session_id": session, "memories": batch})
        )
        first, second = (r["data"] for r in done["results"])
        assert second["similar"] == [{"memory_id": first["memory_id"], "kind": "duplicate",
                                      "excerpt": "Nightly builds are triggered at 02:00 UTC"}]  # fmt: skip
    off = dataclasses.replace(
        app, services=Services.build(app.repo, app.embedder, policy_for(50, "full"), consolidate=False)
    )
    async with Client(build_server(off), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Record"))["session_id"]
        plain = await remember(client, scope, session, "The nightly build starts at 2 AM UTC every night")
        assert "similar" not in plain
        shown = await activate(client, scope, "When does the nightly build run?")
        assert {first["memory_id"], second["memory_id"]} <= {m["memory_id"] for m in shown["memories"]}
    assert len(await links(app, scope)) == 1


async def test_later_pages_keep_what_folding_noted(app: App, scope: str) -> None:
    """The notes are frozen with the catalog: a page served by continue_from, and its replay, name
    the same duplicates and conflicts as the first page would have."""
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        session = (await activate(client, scope, "Record the database facts"))["session_id"]
        old = await remember(client, scope, session, "The staging database runs in us-east-1")
        new = await remember(client, scope, session, "The staging database moved to eu-west-2")
        shown = await recall(client, scope, session, "Which region is the staging database in?", page_size=1)
        assert [m["memory_id"] for m in shown["memories"]] == [new["memory_id"]]
        arguments = {"scope": scope, "session_id": session, "continue_from": shown["continue_from"]}
        second = ok(await call(client, "slowave_recall", arguments))
        assert [m["memory_id"] for m in second["memories"]] == [old["memory_id"]]
        assert second["memories"][0]["provenance"]["conflicts_with"] == [new["memory_id"]]
        assert ok(await call(client, "slowave_recall", arguments))["memories"] == second["memories"]
