"""Contract fidelity with the reference Slowave contract: the point that needs two clients of one server (17). The others
are scenarios (tests/support/fidelity.py) that run with the conformance suite, in-process, over stdio and
over streamable HTTP (test_conformance.py); 16b (committing a session the idle reaper closed) is
part of its item 13."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.types import Implementation

from slowave_graph.app import App
from slowave_graph.mcp.server import build_server
from tests.support.mcp_helpers import activate, call, error

pytestmark = [pytest.mark.neo4j, pytest.mark.lts]


async def test_17_continuity_belongs_to_the_client_that_started_it(app: App, scope: str) -> None:
    """Point 17: another client cannot continue a continuity line; its own client can."""
    info_a = Implementation(name="fidelity-client-a", version="1.0")
    info_b = Implementation(name="fidelity-client-b", version="1.0")
    async with (
        Client(build_server(app), client_info=info_a) as a,
        Client(build_server(app), client_info=info_b) as b,
    ):
        started = await activate(a, scope, "Start the migration")
        args = {
            "task": "Continue the migration",
            "initial_goal": "Continue the migration",
            "scope": scope,
            "continuity_id": started["continuity_id"],
        }
        err = error(await call(b, "slowave_activate", args), "invalid_input")
        assert "continuity_id belongs to a different client" in err["message"], err
        again = await activate(a, scope, "Continue the migration", continuity_id=started["continuity_id"])
        assert again["continuity_state"] == "continued"
        assert again["continuity_id"] == started["continuity_id"]
