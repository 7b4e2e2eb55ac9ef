"""`bench load`'s CPU meter: per-process CPU per call and the machine's busy cores."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from slowave_graph.bench.cpu import CpuMeter, process_seconds
from slowave_graph.bench.load_report import cpu_per_call


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
