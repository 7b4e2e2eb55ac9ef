"""The statement pool that serves the oldest tool call first."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from slowave_graph import telemetry
from slowave_graph.graph.executor import OldestCallFirst


def call_context(tool: str) -> contextvars.Context:
    """The context of a tool call that has started (and is still waiting on its statements)."""
    with telemetry.tool_call(None, tool):
        return contextvars.copy_context()


def test_the_oldest_call_runs_first_then_work_outside_calls() -> None:
    pool = OldestCallFirst(1)
    gate = threading.Event()
    order: list[str] = []
    pool.submit(gate.wait)  # holds the only worker while the others queue
    older, newer = call_context("activate"), call_context("recall")
    newer.run(pool.submit, order.append, "newer call")
    pool.submit(order.append, "outside a call")
    older.run(pool.submit, order.append, "older call")
    newer.run(pool.submit, order.append, "newer call, second statement")
    gate.set()
    pool.shutdown(wait=True)
    assert order == ["older call", "newer call", "newer call, second statement", "outside a call"]


def test_results_and_errors_reach_the_caller() -> None:
    pool = OldestCallFirst(2)

    async def run() -> int:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(pool, sum, [1, 2, 3])

    assert asyncio.run(run()) == 6
    with pytest.raises(ZeroDivisionError):
        pool.submit(lambda: 1 / 0).result(timeout=5)
    pool.shutdown()


def test_shutdown_cancels_what_waits_and_refuses_new_work() -> None:
    pool = OldestCallFirst(1)
    started, gate = threading.Event(), threading.Event()

    def hold() -> bool:
        started.set()
        return gate.wait()

    running = pool.submit(hold)
    assert started.wait(timeout=5)
    waiting = pool.submit(lambda: "never")
    pool.shutdown(wait=False, cancel_futures=True)
    assert waiting.cancelled()
    with pytest.raises(RuntimeError):
        pool.submit(lambda: "late")
    gate.set()
    assert running.result(timeout=5) is True
    pool.shutdown(wait=True)
