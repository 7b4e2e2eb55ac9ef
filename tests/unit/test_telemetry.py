"""Per-call timing: parts, overlap, percentiles, bounded samples."""

from __future__ import annotations

import asyncio
import gc
import time

from slowave_graph.telemetry import GcPauses, ToolMetrics, measure, tool_call


def test_parts_are_recorded_inside_a_call_only() -> None:
    metrics = ToolMetrics()
    with measure("neo4j"):  # outside any call: ignored
        time.sleep(0.001)
    with tool_call(metrics, "slowave_recall") as timer:
        with measure("embed"):
            time.sleep(0.01)
        with measure("neo4j"):
            time.sleep(0.02)
    assert 0.009 <= timer.parts["embed"] < 0.02
    assert 0.019 <= timer.parts["neo4j"] < 0.04
    assert timer.transactions == 1
    snap = metrics.snapshot()["slowave_recall"]
    assert snap["calls"] == 1
    assert snap["p50_ms"] >= 30
    assert snap["mean_python_ms"] >= 0


async def test_concurrent_blocks_of_one_part_count_as_wall_time() -> None:
    async def query() -> None:
        with measure("neo4j"):
            await asyncio.sleep(0.05)

    with tool_call(None, "slowave_activate") as timer:
        await asyncio.gather(query(), query(), query())
    assert timer.transactions == 3
    assert 0.045 <= timer.parts["neo4j"] < 0.1  # not 0.15: the three overlapped


def test_percentiles_and_reset() -> None:
    metrics = ToolMetrics(sample_size=50)
    for i in range(1, 201):
        with tool_call(None, "x") as timer:
            pass
        metrics.record("slowave_remember", timer, i / 1000)
    snap = metrics.snapshot()["slowave_remember"]
    assert snap["calls"] == 200
    assert snap["p50_ms"] <= snap["p95_ms"] <= snap["p99_ms"] <= 200
    metrics.reset()
    assert metrics.snapshot() == {}


def test_gc_pauses_are_counted_per_generation_while_installed() -> None:
    pauses = GcPauses()
    pauses.install()
    try:
        garbage = [[i] for i in range(1000)]
        del garbage
        gc.collect()
        gc.collect(0)
        snap = pauses.snapshot()["generations"]
        assert snap["2"]["collections"] >= 1 and snap["0"]["collections"] >= 1
        assert snap["2"]["max_ms"] >= 0 and snap["2"]["total_ms"] >= snap["2"]["max_ms"]
        pauses.reset()
        assert pauses.snapshot()["generations"] == {}
    finally:
        pauses.uninstall()
    gc.collect()
    assert pauses.snapshot()["generations"] == {}, "nothing is recorded once uninstalled"
