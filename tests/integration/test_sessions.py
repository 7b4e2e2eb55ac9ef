"""Session details: task_context merging, procedure deduplication, reaping without double closing."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.graph.repository import GraphRepository
from slowave_graph.mcp.server import build_server
from slowave_graph.services.context import utcnow
from tests.conformance import DEPLOY_PROCEDURE
from tests.mcp_helpers import activate, call, commit, ok, settle

pytestmark = pytest.mark.neo4j


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
