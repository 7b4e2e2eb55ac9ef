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
    # nothing else ran in the call: its Python time is what the two blocks did not cover
    assert 0 <= snap["mean_python_ms"] < 5
    assert snap["mean_overlap_ms"] == 0


async def test_the_split_adds_up_to_the_call_when_parts_overlap() -> None:
    """embed 0-40 ms, neo4j 20-50 ms, then 15 ms of neither: overlap 20, python 15, and
    embed + neo4j - overlap + python is the call's wall time."""
    metrics = ToolMetrics()

    async def embed() -> None:
        with measure("embed"):
            await asyncio.sleep(0.04)

    async def query() -> None:
        await asyncio.sleep(0.02)
        with measure("neo4j"):
            await asyncio.sleep(0.03)

    with tool_call(metrics, "slowave_activate") as timer:
        await asyncio.gather(embed(), query())
        time.sleep(0.015)
    total = timer.finish()
    embed_s, neo4j_s = timer.parts["embed"], timer.parts["neo4j"]
    assert 0.038 <= embed_s < 0.06 and 0.028 <= neo4j_s < 0.05
    assert 0.008 <= timer.overlap < 0.03
    assert 0.014 <= timer.python < 0.04
    assert abs(embed_s + neo4j_s - timer.overlap + timer.python - total) < 1e-6
    snap = metrics.snapshot()["slowave_activate"]
    parts = snap["mean_embed_ms"] + snap["mean_neo4j_ms"] - snap["mean_overlap_ms"] + snap["mean_python_ms"]
    assert abs(parts - snap["mean_ms"]) < 0.05


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


async def test_neo4j_time_is_reported_per_statement() -> None:
    metrics = ToolMetrics()

    async def statement(name: str, seconds: float) -> None:
        with measure("neo4j", name):
            await asyncio.sleep(seconds)

    for n in range(4):
        with tool_call(metrics, "slowave_activate"):
            await asyncio.gather(statement("vector_search", 0.02), statement("fulltext_search", 0.01))
            if n % 2 == 0:  # run twice in half the calls: the call's runs add up
                await statement("activate_session", 0.005)
                await statement("activate_session", 0.005)
    statements = metrics.snapshot()["slowave_activate"]["statements"]
    assert list(statements) == ["vector_search", "fulltext_search", "activate_session"]  # by total time
    assert 18 <= statements["vector_search"]["mean_ms"] < 35
    assert 9 <= statements["activate_session"]["mean_ms"] < 20
    assert statements["vector_search"]["share_of_calls"] == 1.0
    assert statements["activate_session"]["share_of_calls"] == 0.5
    metrics.reset()
    assert metrics.snapshot() == {}
