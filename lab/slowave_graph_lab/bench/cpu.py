"""What a benchmark phase cost in CPU: each process's milliseconds per call, and the machine's
busy cores.

Client, server and Neo4j share the cores in `bench load`, so the CPU a call costs is what both the
one-client latency (a call waits for the cores it keeps busy) and the many-client throughput
(cores ÷ CPU per call) are made of. Busy cores below the machine's count mean a phase left cores
idle: latency could still be cut by overlapping work, not only by removing it. Steal is time the
hypervisor gave to other guests, reported apart because it slows every figure.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import psutil


def process_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of a live process (its threads, not its children); None if gone."""
    if pid is None:
        return None
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return None
    return float(times.user + times.system)


def machine_seconds() -> tuple[float, float]:
    """(busy, stolen) CPU seconds of the whole machine, all cores summed."""
    times = psutil.cpu_times()
    idle = times.idle + getattr(times, "iowait", 0.0)
    steal = getattr(times, "steal", 0.0)
    # guest time is already counted in user on Linux
    total = sum(getattr(times, name) for name in times._fields if name not in ("guest", "guest_nice"))
    return total - idle - steal, steal


@dataclass
class CpuMeter:
    """Started with the processes to watch (name → pid); ``per_call`` reads the difference."""

    pids: dict[str, int | None]
    _start: dict[str, float | None] = field(init=False)
    _machine: tuple[float, float] = field(init=False)
    _wall: float = field(init=False)

    def __post_init__(self) -> None:
        self._start = {name: process_seconds(pid) for name, pid in self.pids.items()}
        self._machine = machine_seconds()
        self._wall = time.perf_counter()

    def per_call(self, calls: int) -> dict[str, Any]:
        wall = time.perf_counter() - self._wall
        busy, steal = machine_seconds()
        ms: dict[str, float | None] = {}
        for name, pid in self.pids.items():
            start, end = self._start[name], process_seconds(pid)
            ms[name] = (
                round(1000 * (end - start) / calls, 2)
                if start is not None and end is not None and calls
                else None
            )
        return {
            "ms_per_call": ms,
            "busy_cores": round((busy - self._machine[0]) / wall, 2) if wall > 0 else None,
            "steal_cores": round((steal - self._machine[1]) / wall, 3) if wall > 0 else None,
        }
