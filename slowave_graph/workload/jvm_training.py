"""The workload the managed Neo4j's JVM is trained on when its AOT cache is recorded.

`slowave-graph neo4j fetch` (and the test suite, before its first Neo4j) calls
``ManagedNeo4j.train_aot_cache`` with ``trainer(settings)``: the service's own schema, a small benchmark-like
store (a few large scopes and many small ones, through the bulk import path) and full tool-call
lifecycles over the MCP SDK's in-memory client, so that the statements agents send load their
classes during training. Everything runs on a throwaway store; nothing touches the user's data.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable

from pydantic import SecretStr

from slowave_graph.config import Settings
from slowave_graph.neo4j_local.manager import RunningState

TRAINING_MEMORIES = 500
# Per run. What later starts gain is the class loading and linking of start-up and of the first
# statements; longer training did not shorten the JIT's warm-up (docs/performance.md).
TRAINING_LIFECYCLES = 10
TRAINING_SEED = 5


def trainer(settings: Settings) -> Callable[[RunningState, str], None]:
    """The ``workload`` for ``train_aot_cache``: ``settings`` give the embedding model."""

    def run(state: RunningState, password: str) -> None:
        on_trainer = settings.model_copy(
            update={"neo4j_uri": state.uri, "neo4j_user": "neo4j", "neo4j_password": SecretStr(password)}
        )
        asyncio.run(_lifecycles(on_trainer))

    return run


async def _lifecycles(settings: Settings) -> None:
    from mcp import Client

    from slowave_graph.app import open_app
    from slowave_graph.mcp.server import build_server
    from slowave_graph.workload import fill, lifecycle, synthetic

    async with open_app(settings) as app:
        await fill.fill(app, TRAINING_MEMORIES, TRAINING_SEED, "training", progress=False, vectors="derived")
        plans = synthetic.scope_plan(TRAINING_MEMORIES, "training")
        rng = random.Random(TRAINING_SEED)
        recorder = lifecycle.Recorder()
        # the training's tool calls are not the user's: no per-call log lines from them
        calls = logging.getLogger("slowave_graph.mcp.adapter")
        level = calls.level
        calls.setLevel(logging.WARNING)
        try:
            async with Client(build_server(app)) as client:
                for _ in range(TRAINING_LIFECYCLES):
                    await lifecycle.lifecycle(client, recorder, rng, lifecycle.pick_scope(plans, rng))
        finally:
            calls.setLevel(level)
        if recorder.errors:
            raise RuntimeError(f"the training lifecycles failed: {dict(recorder.errors)}")
