"""Where a tool call spends its time: embedding, Neo4j, and the rest (Python).

A ``CallTimer`` lives in a context variable for the duration of one tool call; the embedder and the
database add their wall time to it. ``ToolMetrics`` keeps a bounded sample per tool so the HTTP
server can report percentiles (``GET /metrics``) and the load benchmark can split latency by part.
Timing costs two ``perf_counter`` calls per measured block; nothing is recorded outside a call.
"""

from __future__ import annotations

import contextvars
import gc
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

PARTS = ("embed", "neo4j")


@dataclass
class CallTimer:
    """Wall time per part: overlapping blocks of one part (concurrent queries) count once."""

    started: float = field(default_factory=time.perf_counter)
    parts: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PARTS, 0.0))
    transactions: int = 0
    _open: dict[str, tuple[int, float]] = field(default_factory=dict)

    def enter(self, part: str) -> None:
        depth, since = self._open.get(part, (0, 0.0))
        self._open[part] = (depth + 1, time.perf_counter() if depth == 0 else since)

    def exit(self, part: str) -> None:
        depth, since = self._open[part]
        if depth == 1:
            del self._open[part]
            self.parts[part] = self.parts.get(part, 0.0) + time.perf_counter() - since
        else:
            self._open[part] = (depth - 1, since)


_current: contextvars.ContextVar[CallTimer | None] = contextvars.ContextVar("slowave_call", default=None)


@contextmanager
def measure(part: str) -> Iterator[None]:
    """Adds the block's wall time to the current call's ``part`` (no-op outside a call)."""
    timer = _current.get()
    if timer is None:
        yield
        return
    timer.enter(part)
    try:
        yield
    finally:
        timer.exit(part)
        if part == "neo4j":
            timer.transactions += 1


_in_flight = 0


def calls_in_flight() -> int:
    """Tool calls of this process that have started and not yet finished."""
    return _in_flight


@contextmanager
def tool_call(metrics: ToolMetrics | None, tool: str) -> Iterator[CallTimer]:
    global _in_flight
    timer = CallTimer()
    token = _current.set(timer)
    _in_flight += 1  # tool calls start and end on the event loop; other threads only read it
    try:
        yield timer
    finally:
        _in_flight -= 1
        _current.reset(token)
        if metrics is not None:
            metrics.record(tool, timer, time.perf_counter() - timer.started)


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]


class ToolMetrics:
    """Per-tool call counts and a reservoir sample (bounded memory) of timings, thread-safe."""

    def __init__(self, sample_size: int = 4096) -> None:
        self.sample_size = sample_size
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self._samples: dict[str, list[tuple[float, float, float, int]]] = {}
        self._random = random.Random(0)

    def record(self, tool: str, timer: CallTimer, total: float) -> None:
        row = (total, timer.parts.get("embed", 0.0), timer.parts.get("neo4j", 0.0), timer.transactions)
        with self._lock:
            seen = self._counts.get(tool, 0) + 1
            self._counts[tool] = seen
            sample = self._samples.setdefault(tool, [])
            if len(sample) < self.sample_size:
                sample.append(row)
            else:
                slot = self._random.randrange(seen)
                if slot < self.sample_size:
                    sample[slot] = row

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()
            self._samples.clear()

    def snapshot(self) -> dict[str, Any]:
        """Milliseconds: p50/p95/p99 of the total, and the mean split into embed / neo4j / python."""
        with self._lock:
            samples = {tool: list(rows) for tool, rows in self._samples.items()}
            counts = dict(self._counts)
        out: dict[str, Any] = {}
        for tool, rows in sorted(samples.items()):
            totals = sorted(r[0] for r in rows)
            n = len(rows)
            mean_total = sum(r[0] for r in rows) / n
            mean_embed = sum(r[1] for r in rows) / n
            mean_neo4j = sum(r[2] for r in rows) / n
            out[tool] = {
                "calls": counts[tool],
                "p50_ms": round(_percentile(totals, 0.50) * 1000, 2),
                "p95_ms": round(_percentile(totals, 0.95) * 1000, 2),
                "p99_ms": round(_percentile(totals, 0.99) * 1000, 2),
                "mean_ms": round(mean_total * 1000, 2),
                "mean_embed_ms": round(mean_embed * 1000, 2),
                "mean_neo4j_ms": round(mean_neo4j * 1000, 2),
                "mean_python_ms": round(max(0.0, mean_total - mean_embed - mean_neo4j) * 1000, 2),
                "mean_transactions": round(sum(r[3] for r in rows) / n, 2),
            }
        return out


class GcPauses:
    """The garbage collector's pauses per generation (count, total and longest), through
    ``gc.callbacks``. A full (gen-2) collection stops every Python thread of the server for its
    duration, so its pauses show in call latencies; ``/metrics`` reports them beside the tools.
    One per process (``GC_PAUSES``), installed by ``serve``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started = 0.0
        self._pauses: dict[int, list[float]] = {}  # generation -> [count, total s, max s]
        self.installed = False

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        pause = time.perf_counter() - self._started
        with self._lock:
            row = self._pauses.setdefault(int(info["generation"]), [0, 0.0, 0.0])
            row[0] += 1
            row[1] += pause
            row[2] = max(row[2], pause)

    def install(self) -> None:
        if not self.installed:
            gc.callbacks.append(self._callback)
            self.installed = True

    def uninstall(self) -> None:
        if self.installed:
            gc.callbacks.remove(self._callback)
            self.installed = False

    def reset(self) -> None:
        with self._lock:
            self._pauses.clear()

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            rows = {gen: list(row) for gen, row in sorted(self._pauses.items())}
        return {
            "frozen_objects": gc.get_freeze_count(),
            "generations": {
                str(gen): {
                    "collections": int(count),
                    "total_ms": round(total * 1000, 2),
                    "max_ms": round(longest * 1000, 2),
                }
                for gen, (count, total, longest) in rows.items()
            },
        }


GC_PAUSES = GcPauses()
