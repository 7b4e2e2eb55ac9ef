"""One seeded demo scope per test run, shared by the demo-seed and notebook tests (seeding runs
14 agent tasks through the services: seconds worth sharing). Tests only read it."""

from __future__ import annotations

import uuid
from typing import Any

from slowave_graph.app import App
from slowave_graph_lab.demo.seed import ensure_demo

DEMO_TASKS = 14  # every event, two tasks misled before the refund root cause and one helped after
_seeded: dict[str, Any] = {}


async def shared_demo(app: App) -> dict[str, Any]:
    """{"scope", "result", "lines"} of the run's demo scope, seeded on first use."""
    if not _seeded:
        scope = f"test:demo{uuid.uuid4().hex[:10]}"
        lines: list[str] = []
        result = await ensure_demo(app, scope, tasks=DEMO_TASKS, seed=42, say=lines.append)
        _seeded.update(scope=scope, result=result, lines=lines)
    return _seeded
