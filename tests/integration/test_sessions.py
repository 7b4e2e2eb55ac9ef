"""Session details: task_context merging, procedure deduplication, reaping without double closing."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.graph.errors import SessionEnded
from slowave_graph.graph.repository import GraphRepository
from slowave_graph.mcp.server import build_server
from slowave_graph.services.context import LOCAL_PRINCIPAL, utcnow
from tests.support.conformance import DEPLOY_PROCEDURE
from tests.support.mcp_helpers import activate, call, commit, error, ok, recall, remember, settle

pytestmark = [pytest.mark.neo4j, pytest.mark.lts]


async def test_recall_merges_task_context_into_the_session(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        act = await activate(
            client, scope, "Fix the build", task_context={"repo": "shop", "ci": {"runner": "gha"}}
        )
        ok(await call(client, "slowave_recall", {
            "scope": scope, "session_id": act["session_id"], "query": "Why does the build fail?",
            "task_context": {"ci": {"step": "lint"}, "branch": "main"}}))  # fmt: skip
    found = await app.db.driver.execute_query(
        "MATCH (s:Session {id: $id}) RETURN s.task_context AS c",
        id=act["session_id"],
        database_=app.db.database,
    )
    assert json.loads(found.records[0]["c"]) == {
        "repo": "shop",
        "ci": {"runner": "gha", "step": "lint"},
        "branch": "main",
    }


async def test_deduplication_key_supersedes_the_older_procedure(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        ids = []
        for summary in ("Blue-green deploy, version one", "Blue-green deploy, version two"):
            act = await activate(client, scope, "Deploy the shop API")
            await settle(client, act)
            done = await commit(client, act["session_id"], final_goal="Deploy the shop API with blue-green",
                                procedure={**DEPLOY_PROCEDURE, "summary": summary, "deduplication_key": "shop-deploy"})  # fmt: skip
            ids.append(done["procedure_id"])
        shown = await activate(client, scope, "Deploy the shop API")
    assert [p["procedure_id"] for p in shown["procedures"]] == [ids[1]]
    chain = await app.db.driver.execute_query(
        "MATCH (n:Procedure {id: $new})-[:SUPERSEDES]->(o:Procedure {id: $old}) RETURN o.status AS status",
        new=ids[1], old=ids[0], database_=app.db.database,
    )  # fmt: skip
    assert chain.records[0]["status"] == "superseded"


async def test_two_reapers_close_each_idle_session_once(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        sessions = [(await activate(client, scope, f"Task {i}"))["session_id"] for i in range(12)]
    await asyncio.sleep(0.3)
    reaper_a = GraphRepository(app.db, idle_timeout=0.2)
    reaper_b = GraphRepository(app.db, idle_timeout=0.2)
    now = utcnow() + timedelta(seconds=1)
    closed_a, closed_b = await asyncio.gather(
        reaper_a.close_idle_sessions(now=now, closer="a"), reaper_b.close_idle_sessions(now=now, closer="b")
    )
    mine = set(sessions)
    assert not (set(closed_a) & set(closed_b)), "no session is closed twice"
    assert mine <= set(closed_a) | set(closed_b)
    found = await app.db.driver.execute_query(
        "UNWIND $ids AS id MATCH (s:Session {id: id}) RETURN s.status AS status, s.closed_by AS by",
        ids=sessions, database_=app.db.database,
    )  # fmt: skip
    assert {r["status"] for r in found.records} == {"ended"}
    assert {r["by"] for r in found.records} <= {"a", "b"}


async def test_recall_refuses_a_session_the_guard_refuses_and_writes_nothing(app: App, scope: str) -> None:
    """recall's first session check is a read; what it lets through is guarded again, under the
    lock, when the retrieval is stored; what it refuses gets the guard's own error."""
    async with Client(build_server(app)) as client:
        act = await activate(client, scope, "Fix the build")
        await remember(client, scope, act["session_id"], "The build fails on the lint step")
        ended = await activate(client, scope, "Finished work")
        await settle(client, ended)
        await commit(client, ended["session_id"])
        count = "MATCH (r:Retrieval) WHERE r.session_id IN $ids RETURN count(r) AS n"
        ids = [act["session_id"], ended["session_id"]]
        before = (await app.db.driver.execute_query(count, ids=ids, database_=app.db.database)).records
        cases = [
            (scope + "-other", act["session_id"], "session_id and scope do not match"),
            (scope, "sess_999999999", "unknown session_id"),
            (scope, ended["session_id"], "session is already ended"),
        ]
        for call_scope, session_id, message in cases:
            refused = await call(client, "slowave_recall", {
                "scope": call_scope, "session_id": session_id, "query": "Why does the build fail?"})  # fmt: skip
            assert message in error(refused, "invalid_input")["message"]
        after = (await app.db.driver.execute_query(count, ids=ids, database_=app.db.database)).records
        assert after[0]["n"] == before[0]["n"]

        seen = "MATCH (s:Session {id: $id}) RETURN s.last_seen_at AS t"
        first = (
            await app.db.driver.execute_query(seen, id=act["session_id"], database_=app.db.database)
        ).records
        found = await recall(client, scope, act["session_id"], "Why does the build fail?")
        assert found["memories"], "the open session's recall searched"
        then = (
            await app.db.driver.execute_query(seen, id=act["session_id"], database_=app.db.database)
        ).records
        assert then[0]["t"] > first[0]["t"], "the write re-guarded the session and refreshed its idle clock"

    await asyncio.sleep(0.3)
    strict = GraphRepository(app.db, idle_timeout=0.2)  # the same session, now idle past the timeout
    with pytest.raises(SessionEnded):
        await strict.session_for_recall(
            session_id=act["session_id"], scope=scope, now=utcnow(), principal=LOCAL_PRINCIPAL
        )


async def test_commit_forms_an_episode_headed_by_the_sessions_task(app: App, scope: str) -> None:
    """commit_session writes the episode's first line from the session it locks (a commit without
    a procedure reads nothing before its transaction); an unknown session is refused."""
    async with Client(build_server(app)) as client:
        act = await activate(client, scope, "Rotate the API keys")
        await settle(client, act)
        done = await commit(client, act["session_id"], "success", final_goal="Keys rotated")
        assert done["episodes_formed"] == 1
        unknown = await call(client, "slowave_commit", {
            "session_id": "sess_999999999", "final_goal": "x", "outcome": "success",
            "outcome_summary": "x", "verification": {"status": "unverified", "summary": "x", "evidence_refs": []},
        })  # fmt: skip
        assert "unknown session_id" in error(unknown, "invalid_input")["message"]
    found = await app.db.driver.execute_query(
        "MATCH (:Session {id: $id})-[:FORMED]->(ep:Episode) RETURN ep.content AS content",
        id=act["session_id"],
        database_=app.db.database,
    )
    lines = found.records[0]["content"].split("\n")
    assert lines[0] == "Task: Rotate the API keys" and lines[1] == "Final goal: Keys rotated"
    assert lines[2].startswith("Outcome: success")
