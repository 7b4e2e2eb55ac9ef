"""The batch that moves what feedback taught into the experience vector index: it runs by itself
after feedback, several at once (server processes) move each mark once without failing, and a
marked retrieval counts as experience before and after it is moved."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.graph.repository import GraphRepository
from slowave_graph.mcp.server import build_server
from slowave_graph.services import Services
from slowave_graph.services.experience_index import ExperienceIndexer
from tests.support.mcp_helpers import activate, mark_helped, remember

pytestmark = [pytest.mark.neo4j, pytest.mark.lts]


async def state(app: App, scope: str) -> list[tuple[Any, Any]]:
    """(copy made, marked) of each learned retrieval of the scope."""
    found = await app.db.driver.execute_query(
        "MATCH (r:Retrieval {scope: $scope, learned: true}) "
        "RETURN r.experience_embedding = r.query_embedding AS copied, r.experience_pending AS pending",
        scope=scope,
        database_=app.db.database,
    )
    return sorted(((r["copied"], r["pending"]) for r in found.records), key=str)


async def learn(app: App, scope: str, questions: list[str]) -> list[str]:
    """One retrieval per question, each taught by a used+helped assessment; their ids."""
    ids = []
    async with Client(build_server(app)) as client:
        session = (await activate(client, scope, "Record"))["session_id"]
        for n, question in enumerate(questions):
            await remember(client, scope, session, f"Answer {n}: {question} is handled by team {n}")
        for question in questions:
            shown = await activate(client, scope, question)
            assert await mark_helped(client, shown)
            ids.append(shown["retrieval_id"])
    return ids


def own_app(app: App, indexer_delay: float) -> tuple[App, asyncio.Task[None]]:
    """The test app's database with a repository and indexer of its own, as a second server
    process would have; its indexer runs until the task is cancelled."""
    repo = GraphRepository(app.db, idle_timeout=3600)
    indexer = ExperienceIndexer(repo, delay=indexer_delay, sweep=3600)
    mine = App(app.settings, app.db, app.embedder, repo, Services.build(repo, app.embedder), indexer)
    return mine, asyncio.create_task(indexer.run())


async def test_feedback_is_moved_into_the_index_soon_after(app: App, scope: str) -> None:
    mine, running = own_app(app, indexer_delay=0.05)
    try:
        await learn(mine, scope, ["Who runs payroll?", "Who owns the ledger?"])
        for _ in range(100):
            if await state(app, scope) == [(True, None)] * 2:
                break
            await asyncio.sleep(0.1)
        assert await state(app, scope) == [(True, None)] * 2
    finally:
        running.cancel()


async def test_concurrent_batches_move_each_mark_once_and_lose_none(app: App, scope: str) -> None:
    """Two processes' indexers flushing the same marks at once (and this process's held off):
    no deadlock or error surfaces, every mark is moved, and the lessons are found throughout."""
    questions = [f"Which team handles request type {n}?" for n in range(12)]
    mine, running = own_app(app, indexer_delay=3600)  # a second process; its runs wait for a sweep
    running.cancel()
    async with app.experience.paused():
        await learn(mine, scope, questions)
        assert await state(app, scope) == [(None, True)] * len(questions)
        [cue] = await app.embedder.aembed([questions[3]])
        before = await app.repo.experience(
            scope=scope, embeddings=[cue], min_similarity=0.9, irrelevant_at=0.9, k=5
        )
        assert before, "a marked retrieval already counts as experience"
        first, second = ExperienceIndexer(app.repo, batch=5), ExperienceIndexer(mine.repo, batch=5)
        moved = await asyncio.gather(first.flush(), second.flush())
        assert sum(moved) >= len(questions)
        assert await state(app, scope) == [(True, None)] * len(questions)
        after = await app.repo.experience(
            scope=scope, embeddings=[cue], min_similarity=0.9, irrelevant_at=0.9, k=5
        )
        assert after == before
