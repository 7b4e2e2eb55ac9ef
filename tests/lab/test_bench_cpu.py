"""`bench load`'s CPU meter (per-process CPU per call, the machine's busy cores) and the warm-up
that runs until CPU per call stops falling."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from slowave_graph_lab.bench.cpu import CpuMeter, process_seconds
from slowave_graph_lab.bench.load import settled
from slowave_graph_lab.bench.load_report import cpu_per_call, warm_up


def spin(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_a_process_busy_for_300_ms_over_10_calls_costs_30_ms_a_call() -> None:
    meter = CpuMeter({"self": os.getpid(), "remote": None})
    spin(0.3)
    cost = meter.per_call(10)
    assert 29 <= cost["ms_per_call"]["self"] < 60, cost
    assert cost["ms_per_call"]["remote"] is None
    # one thread spinning keeps about one core busy; the whole machine can add, never exceed its cores
    assert 0.5 <= cost["busy_cores"] <= (os.cpu_count() or 1) + 0.05, cost
    assert cost["steal_cores"] >= 0


def test_a_process_that_ended_reads_as_unknown() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    assert process_seconds(child.pid) is not None
    child.kill()
    child.wait()
    assert process_seconds(child.pid) is None


def test_the_report_shows_each_process_or_a_dash() -> None:
    phase = {"cpu": {"ms_per_call": {"server": 12.345, "neo4j": None, "load_generator": 0.8}}}
    assert cpu_per_call(phase) == "12.3 / – / 0.8"
    assert cpu_per_call({}) == "– / – / –"  # a result written before the meter existed


def test_warm_up_goes_on_while_cpu_per_call_falls_and_stops_once_it_is_flat() -> None:
    # rounds measured after a Neo4j start (server + Neo4j ms per call, 40 lifecycles a round)
    falling = [136.7, 66.3, 54.7, 56.9, 49.7, 48.0, 41.0, 39.7, 45.5, 33.5, 35.8, 29.7]
    for n in range(1, len(falling) + 1):
        assert not settled(falling[:n]), falling[:n]  # a flat pair inside the tail is not the end
    flat = [31.2, 28.4, 30.1, 29.6, 30.4, 28.9]
    assert not settled([*falling, *flat[:3]])  # 29.9 against 33.0: still 9 % cheaper
    assert settled([*falling, *flat])  # the last three within 7 % of the three before
    assert not settled([30.0] * 5)  # two full windows are needed


def test_the_report_marks_a_warm_up_the_cap_stopped() -> None:
    assert (
        warm_up({"lifecycles": 600, "cpu_ms_per_call": [119.04, 28.1], "steady": True})
        == "600 (119.0 → 28.1)"
    )
    assert warm_up({"lifecycles": 1000, "cpu_ms_per_call": [50.0, 40.0], "steady": False}) == (
        "1000 (50.0 → 40.0, not settled)"
    )
    assert warm_up(None) == "–"
