"""Per-call timing: parts, overlap, percentiles, bounded samples."""

from __future__ import annotations

import asyncio
import gc

import pytest

from slowave_graph import telemetry
from slowave_graph.telemetry import GcPauses, ToolMetrics, measure, tool_call


class Clock:
    """telemetry's clock, moved by hand: timings are exact and do not depend on the machine's load."""

    def __init__(self) -> None:
        self.at = 1000.0

    def __call__(self) -> float:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(telemetry, "now", fake)
    return fake


def test_parts_are_recorded_inside_a_call_only(clock: Clock) -> None:
    metrics = ToolMetrics()
    with measure("neo4j"):  # outside any call: ignored
        clock.advance(0.001)
    with tool_call(metrics, "slowave_recall") as timer:
        with measure("embed"):
            clock.advance(0.01)
        clock.advance(0.002)
        with measure("neo4j"):
            clock.advance(0.02)
    assert timer.parts["embed"] == pytest.approx(0.01) and timer.parts["neo4j"] == pytest.approx(0.02)
    assert timer.transactions == 1
    snap = metrics.snapshot()["slowave_recall"]
    assert snap["calls"] == 1 and snap["p50_ms"] == pytest.approx(32)
    # the call's Python time is what the two blocks did not cover
    assert snap["mean_python_ms"] == pytest.approx(2) and snap["mean_overlap_ms"] == 0


async def test_the_split_adds_up_to_the_call_when_parts_overlap(clock: Clock) -> None:
    """embed 0-40 ms, neo4j 20-50 ms in tasks of their own, then 15 ms of neither: overlap 20,
    python 15, and embed + neo4j - overlap + python is the call's wall time."""
    metrics = ToolMetrics()
    embed_done, query_done = asyncio.Event(), asyncio.Event()

    async def embed() -> None:
        with measure("embed"):
            await embed_done.wait()

    async def query() -> None:
        with measure("neo4j"):
            await query_done.wait()

    with tool_call(metrics, "slowave_activate") as timer:
        embedding = asyncio.create_task(embed())
        await asyncio.sleep(0)  # the embedding block opens at 0 ms
        clock.advance(0.02)
        reading = asyncio.create_task(query())
        await asyncio.sleep(0)  # the query opens at 20 ms
        clock.advance(0.02)
        embed_done.set()
        await embedding  # closes at 40 ms
        clock.advance(0.01)
        query_done.set()
        await reading  # closes at 50 ms
        clock.advance(0.015)
    total = timer.finish()
    assert total == pytest.approx(0.065)
    assert timer.parts["embed"] == pytest.approx(0.04) and timer.parts["neo4j"] == pytest.approx(0.03)
    assert timer.overlap == pytest.approx(0.02) and timer.python == pytest.approx(0.015)
    snap = metrics.snapshot()["slowave_activate"]
    parts = snap["mean_embed_ms"] + snap["mean_neo4j_ms"] - snap["mean_overlap_ms"] + snap["mean_python_ms"]
    assert parts == pytest.approx(snap["mean_ms"], abs=0.05)


async def test_concurrent_blocks_of_one_part_count_as_wall_time(clock: Clock) -> None:
    done = asyncio.Event()

    async def query() -> None:
        with measure("neo4j"):
            await done.wait()

    with tool_call(None, "slowave_activate") as timer:
        queries = [asyncio.create_task(query()) for _ in range(3)]
        await asyncio.sleep(0)  # all three open
        clock.advance(0.05)
        done.set()
        await asyncio.gather(*queries)
    assert timer.transactions == 3
    assert timer.parts["neo4j"] == pytest.approx(0.05)  # not 0.15: the three overlapped


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


async def test_neo4j_time_is_reported_per_statement(clock: Clock) -> None:
    metrics = ToolMetrics()
    for n in range(4):
        with tool_call(metrics, "slowave_activate"):
            with measure("neo4j", "vector_search"):  # the two searches run side by side
                with measure("neo4j", "fulltext_search"):
                    clock.advance(0.01)
                clock.advance(0.01)
            if n % 2 == 0:  # run twice in half the calls: the call's runs add up
                for _ in range(2):
                    with measure("neo4j", "activate_session"):
                        clock.advance(0.005)
    statements = metrics.snapshot()["slowave_activate"]["statements"]
    assert list(statements) == ["vector_search", "fulltext_search", "activate_session"]  # by total time
    assert statements["vector_search"]["mean_ms"] == pytest.approx(20)
    assert statements["activate_session"]["mean_ms"] == pytest.approx(10)
    assert statements["vector_search"]["share_of_calls"] == 1.0
    assert statements["activate_session"]["share_of_calls"] == 0.5
    metrics.reset()
    assert metrics.snapshot() == {}
