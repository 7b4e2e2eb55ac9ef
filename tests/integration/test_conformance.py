"""The conformance scenarios (tests/support/conformance.py) through the SDK's real client: in-process (one test per item), over stdio and over
streamable HTTP (server processes), plus the items that need restarts, two processes or a short
idle timeout."""

from __future__ import annotations

import asyncio
import traceback
import uuid
from typing import Any

import pytest
from mcp import Client

from slowave_graph.app import App, open_app
from slowave_graph.embedding.embedder import Embedder
from slowave_graph.mcp.server import build_server
from slowave_graph.neo4j_local.manager import free_port
from tests.support import fidelity  # noqa: F401  (registers the contract-fidelity scenarios)
from tests.support.conformance import SCENARIOS, seeded
from tests.support.mcp_helpers import activate, call, commit, error, recall, remember, settle
from tests.support.neo4j import Neo4jTarget
from tests.support.servers import CLIENT_INFO, http_server, stdio_params

pytestmark = [pytest.mark.neo4j, pytest.mark.lts]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
async def test_in_process(app: App, scope: str, name: str) -> None:
    async with Client(build_server(app), client_info=CLIENT_INFO) as client:
        await SCENARIOS[name](client, scope)


async def run_all(client: Client) -> list[str]:
    failures = []
    for name in sorted(SCENARIOS):
        try:
            await SCENARIOS[name](client, f"conf:{uuid.uuid4().hex[:12]}")
        except Exception:
            failures.append(f"{name}:\n{traceback.format_exc(limit=3)}")
    return failures


async def test_over_stdio(neo4j: Neo4jTarget) -> None:
    async with Client(stdio_params(neo4j.env()), client_info=CLIENT_INFO) as client:
        failures = await run_all(client)
    assert failures == [], "\n".join(failures)


async def test_over_http(http_url: str) -> None:
    async with Client(http_url, client_info=CLIENT_INFO) as client:
        failures = await run_all(client)
    assert failures == [], "\n".join(failures)


async def test_12_two_server_processes_share_one_memory(
    neo4j: Neo4jTarget, http_url: str, scope: str
) -> None:
    """Client A on server 1 stores; client B on server 2 finds it; overlapping sessions both commit."""
    port_b = free_port()
    with http_server(neo4j.env(), port_b):
        async with (
            Client(http_url, client_info=CLIENT_INFO) as a,
            Client(f"http://127.0.0.1:{port_b}/mcp", client_info=CLIENT_INFO) as b,
        ):
            act_a, act_b = await asyncio.gather(activate(a, scope, "Task A"), activate(b, scope, "Task B"))
            await remember(
                a, scope, act_a["session_id"], "The nightly export job writes to bucket exports-eu"
            )
            found = await recall(
                b, scope, act_b["session_id"], "Which bucket does the nightly export write to?"
            )
            assert [m["content"] for m in found["memories"]] == [
                "The nightly export job writes to bucket exports-eu"
            ]
            # a cursor minted by server 1 continues on server 2: no state lives in a server process
            await settle(b, found, "used")
            await settle(a, act_a)
            await settle(b, act_b)
            done = await asyncio.gather(commit(a, act_a["session_id"]), commit(b, act_b["session_id"]))
            assert [d["operation"] for d in done] == ["closed", "closed"]


async def test_cursors_and_continuity_work_across_processes(
    neo4j: Neo4jTarget, http_url: str, scope: str
) -> None:
    """Item 11 (continuity survives a restart) and frozen cursors served by another process."""
    from tests.support.conformance import AUDIT_NOTES, seeded

    async with Client(http_url, client_info=CLIENT_INFO) as client:
        await seeded(client, scope, AUDIT_NOTES[:12])
        first = await activate(client, scope, "Which Atlas sign-in audit rules throttle failed sign-ins?")
        assert first["more_available"] is True
    port = free_port()  # another server process: nothing carried over in memory
    with http_server(neo4j.env(), port):
        async with Client(f"http://127.0.0.1:{port}/mcp", client_info=CLIENT_INFO) as client:
            args = {
                "scope": scope,
                "session_id": first["session_id"],
                "continue_from": first["continue_from"],
            }
            nxt = await call(client, "slowave_recall", args)
            assert nxt["ok"] is True and nxt["data"]["retrieval_id"] == first["retrieval_id"]
            again = await activate(client, scope, "Continue the review", continuity_id=first["continuity_id"])
            assert again["continuity_state"] == "continued"


async def test_13_idle_timeout_closes_abandoned_sessions(
    neo4j: Neo4jTarget, embedder: Embedder, scope: str
) -> None:
    settings = neo4j.settings(session_idle_timeout=1.5)
    async with (
        open_app(settings, embedder=embedder) as quick,
        Client(build_server(quick), client_info=CLIENT_INFO) as client,
    ):
        await seeded(client, scope, ["The payments team owns the refund service"])
        abandoned = await activate(client, scope, "Who owns the refund service?")
        assert abandoned["memories"], "something is exposed and left without feedback"
        kept = await activate(client, scope, "Still working")
        for _ in range(6):  # keep one session alive with calls
            await asyncio.sleep(0.5)
            await remember(client, scope, kept["session_id"], f"Progress note {uuid.uuid4().hex[:6]}")
        # the reaper closed the abandoned one without any call naming it
        status = await session_status(quick, abandoned["session_id"])
        assert status == {"status": "ended", "outcome": "unknown", "end_reason": "idle_timeout"}
        args = {"scope": scope, "session_id": abandoned["session_id"], "content": "too late", "type": "fact"}
        late = await call(client, "slowave_remember", args)
        assert "session is already ended" in error(late, "invalid_input")["message"]
        # a commit of the reaped session updates its outcome without the feedback check (reference contract)
        done = await commit(client, abandoned["session_id"], "partial")
        assert (done["operation"], done["already_ended"], done["outcome"]) == ("updated", True, "partial")
        assert (await session_status(quick, kept["session_id"]))["status"] == "open"
        await settle(client, abandoned)  # feedback stays possible after a session ended
        updated = await commit(client, abandoned["session_id"], "partial")
        assert updated["operation"] == "updated"


async def session_status(app: App, session_id: str) -> dict[str, Any]:
    found = await app.db.driver.execute_query(
        "MATCH (s:Session {id: $id}) "
        "RETURN s.status AS status, s.outcome AS outcome, s.end_reason AS end_reason",
        id=session_id,
        database_=app.db.database,
    )
    return found.records[0].data()
