"""Where a tool call spends its time: embedding, Neo4j, and the rest (Python).

A ``CallTimer`` lives in a context variable for the duration of one tool call; the embedder and the
database add their wall time to it. ``ToolMetrics`` keeps a bounded sample per tool so the HTTP
server can report percentiles (``GET /metrics``) and the load benchmark can split latency by part.
Timing costs two ``perf_counter`` calls per measured block; nothing is recorded outside a call.
"""

from __future__ import annotations

import contextvars
import gc
import logging
import random
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

PARTS = ("embed", "neo4j")

log = logging.getLogger(__name__)


def now() -> float:
    """The clock every measurement reads (``time.perf_counter``); tests replace it with a fake one."""
    return time.perf_counter()


@dataclass
class CallTimer:
    """One call's wall time, split along its timeline. ``parts``: the time each part had a block
    open (overlapping blocks of one part — concurrent queries — count once); ``overlap``: the time
    both were open (activate's embedding runs beside its first reads); ``python``: the time neither
    was, the call's own code (validation, ranking, results) and its waits for the event loop. So
    embed + neo4j - overlap + python is the whole call."""

    started: float = field(default_factory=lambda: now())  # looked up per call: tests replace now
    tool: str = ""
    # what every log record of the call carries (logs.py), its Neo4j statements' included
    request_id: str = field(default_factory=lambda: "req_" + secrets.token_hex(5))
    parts: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PARTS, 0.0))
    overlap: float = 0.0
    python: float = 0.0
    transactions: int = 0
    statements: dict[str, float] = field(default_factory=dict)  # wall time per Neo4j statement name
    _depth: dict[str, int] = field(default_factory=dict)
    _since: float = field(init=False)

    def __post_init__(self) -> None:
        self._since = self.started

    def _advance(self) -> float:
        """Credit the time since the last transition to what was open during it."""
        at = now()
        elapsed, self._since = at - self._since, at
        open_parts = [part for part, depth in self._depth.items() if depth]
        for part in open_parts:
            self.parts[part] = self.parts.get(part, 0.0) + elapsed
        if not open_parts:
            self.python += elapsed
        elif len(open_parts) > 1:
            self.overlap += elapsed
        return at

    def enter(self, part: str) -> None:
        self._advance()
        self._depth[part] = self._depth.get(part, 0) + 1

    def exit(self, part: str) -> None:
        self._advance()
        self._depth[part] -= 1

    def finish(self) -> float:
        """The call's wall time, with its last stretch credited."""
        return self._advance() - self.started


_current: contextvars.ContextVar[CallTimer | None] = contextvars.ContextVar("slowave_call", default=None)


@contextmanager
def measure(part: str, statement: str | None = None) -> Iterator[None]:
    """Adds the block's wall time to the current call's ``part`` (no-op outside a call); a Neo4j
    block also to its ``statement`` (a named statement, or the transaction function's name)."""
    timer = _current.get()
    if timer is None:
        yield
        return
    timer.enter(part)
    started = now()
    try:
        yield
    finally:
        timer.exit(part)
        if part == "neo4j":
            timer.transactions += 1
            if statement is not None:
                elapsed = now() - started
                timer.statements[statement] = timer.statements.get(statement, 0.0) + elapsed
                log.debug("neo4j %s %.1f ms", statement, elapsed * 1000)


def current_call() -> CallTimer | None:
    """The tool call this code runs for, if any (its request id and tool name tag log records)."""
    return _current.get()


def call_started() -> float:
    """When the current tool call started (``time.perf_counter``), else now: the order in which
    ``graph.executor.OldestCallFirst`` serves work."""
    timer = _current.get()
    return timer.started if timer is not None else now()


def detached_call(started: float) -> contextvars.Context:
    """A context for work done on behalf of calls but outside any of them (a group commit):
    ordered as a call that started at ``started``, its timings recorded nowhere."""
    context = contextvars.Context()
    context.run(_current.set, CallTimer(started=started))
    return context


_in_flight = 0


def calls_in_flight() -> int:
    """Tool calls of this process that have started and not yet finished."""
    return _in_flight


@contextmanager
def tool_call(metrics: ToolMetrics | None, tool: str) -> Iterator[CallTimer]:
    global _in_flight
    timer = CallTimer(tool=tool)
    token = _current.set(timer)
    _in_flight += 1  # tool calls start and end on the event loop; other threads only read it
    try:
        yield timer
    finally:
        _in_flight -= 1
        total = timer.finish()
        _current.reset(token)
        if metrics is not None:
            metrics.record(tool, timer, total)


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
        # (total, embed, neo4j, overlap, python, transactions) per sampled call
        self._samples: dict[str, list[tuple[float, float, float, float, float, int]]] = {}
        self._random = random.Random(0)
        # tool -> statement -> [total seconds, runs], over the whole window (not sampled)
        self._statements: dict[str, dict[str, list[float]]] = {}

    def record(self, tool: str, timer: CallTimer, total: float) -> None:
        row = (
            total,
            timer.parts.get("embed", 0.0),
            timer.parts.get("neo4j", 0.0),
            timer.overlap,
            timer.python,
            timer.transactions,
        )
        with self._lock:
            seen = self._counts.get(tool, 0) + 1
            self._counts[tool] = seen
            per_statement = self._statements.setdefault(tool, {})
            for name, seconds in timer.statements.items():
                tally = per_statement.setdefault(name, [0.0, 0])
                tally[0] += seconds
                tally[1] += 1
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
            self._statements.clear()

    def snapshot(self) -> dict[str, Any]:
        """Milliseconds: p50/p95/p99 of the total, its mean split into embed / neo4j (each with
        the time both ran, ``overlap``, counted in both) / python (neither ran), and per Neo4j
        statement its mean wall time in the calls that ran it and their share (concurrent statements overlap,
        so these do not add up to ``mean_neo4j_ms``)."""
        with self._lock:
            samples = {tool: list(rows) for tool, rows in self._samples.items()}
            counts = dict(self._counts)
            statements = {tool: {k: list(v) for k, v in s.items()} for tool, s in self._statements.items()}
        out: dict[str, Any] = {}
        for tool, rows in sorted(samples.items()):
            totals = sorted(r[0] for r in rows)
            n = len(rows)
            means = [sum(r[i] for r in rows) / n for i in range(6)]
            out[tool] = {
                "calls": counts[tool],
                "p50_ms": round(_percentile(totals, 0.50) * 1000, 2),
                "p95_ms": round(_percentile(totals, 0.95) * 1000, 2),
                "p99_ms": round(_percentile(totals, 0.99) * 1000, 2),
                "mean_ms": round(means[0] * 1000, 2),
                "mean_embed_ms": round(means[1] * 1000, 2),
                "mean_neo4j_ms": round(means[2] * 1000, 2),
                "mean_overlap_ms": round(means[3] * 1000, 2),
                "mean_python_ms": round(means[4] * 1000, 2),
                "mean_transactions": round(means[5], 2),
                "statements": {
                    name: {
                        "mean_ms": round(total / runs * 1000, 2),
                        "share_of_calls": round(runs / counts[tool], 2),
                    }
                    for name, (total, runs) in sorted(
                        statements.get(tool, {}).items(), key=lambda item: -item[1][0]
                    )
                },
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
