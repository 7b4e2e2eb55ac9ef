"""Requests shaped like an agent's, through the tools: a question that asks two things in one
sentence, a task with a list, questions passed as task_context values — each part is answered as
it is when asked alone, and the answer opens with each part's best. Real embeddings, real Neo4j."""

from __future__ import annotations

import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.mcp.server import build_server
from tests.support.mcp_helpers import activate, recall, remember, settle

pytestmark = pytest.mark.neo4j

RATE_LIMITS = "Rate limits are enforced by the API gateway, per API key, with a token bucket"
EXEMPT = "The /health and /metrics endpoints must be exempt from rate limiting so probes never fail"
OTHERS = [
    "The billing service stores invoices in PostgreSQL 15",
    "Deploy windows are Tuesdays 10:00 to 12:00 UTC",
    "The user prefers concise answers without emojis",
    "Search results are cached in Redis for five minutes",
    "The mobile app is written in Kotlin and Swift",
]
FIRST = "Where are rate limits enforced"
SECOND = "which endpoints must be exempt?"


async def stored(client: Client, scope: str) -> dict[str, str]:
    session = (await activate(client, scope, "Write down how the API is run"))["session_id"]
    ids = {}
    for content in [RATE_LIMITS, EXEMPT, *OTHERS]:
        ids[content] = str((await remember(client, scope, session, content))["memory_id"])
    return ids


def shown(result: dict[str, object]) -> list[str]:
    return [str(m["content"]) for m in result["memories"]]  # type: ignore[index, union-attr]


async def test_one_sentence_that_asks_two_things_answers_both(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        await stored(client, scope)
        session = (await activate(client, scope, "Review the API gateway configuration"))["session_id"]
        alone = []
        for part in (FIRST + "?", SECOND):
            result = await recall(client, scope, session, part, page_size=5)
            alone.append(shown(result))
            await settle(client, result)
        assert RATE_LIMITS in alone[0] and EXEMPT in alone[1], alone
        both = await recall(client, scope, session, f"{FIRST} and {SECOND}", page_size=5)
        # each part's best first, in the order asked
        assert shown(both)[:2] == [RATE_LIMITS, EXEMPT], shown(both)
        assert both["catalog_truncated"] is False
        await settle(client, both)


async def test_a_task_with_a_list_and_task_context_questions_are_each_answered(app: App, scope: str) -> None:
    async with Client(build_server(app)) as client:
        await stored(client, scope)
        listed = await activate(
            client,
            scope,
            "Harden the API before launch:\n- where are rate limits enforced?\n- which endpoints must be exempt?",
        )
        assert {RATE_LIMITS, EXEMPT} <= set(shown(listed)[:3]), shown(listed)
        asked = await activate(
            client,
            scope,
            "Prepare the launch checklist",
            task_context={
                "open_questions": [FIRST + "?", "Which endpoints must be exempt from rate limiting?"]
            },
        )
        assert {RATE_LIMITS, EXEMPT} <= set(shown(asked)), shown(asked)
