"""A synthetic store, filled through the bulk import path: what the managed Neo4j's JVM is trained
on (workload/jvm_training.py) and what `bench load` measures at growing sizes (slowave-graph-lab).
"""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from slowave_graph.app import App
from slowave_graph.workload import synthetic

if TYPE_CHECKING:
    from slowave_graph.operator.bulk import BulkRecord


async def scope_sizes(app: App, scopes: list[str]) -> dict[str, int]:
    rows = await app.db.run_read("scope_memory_counts", scopes=scopes)
    return {r["scope"]: int(r["memories"]) for r in rows}


FILL_VECTORS = ("exact", "derived")


class _LogProgress:
    """Progress as a log line every ``every`` memories (a fill running under nohup has no tty)."""

    def __init__(self, total: int, every: int = 50_000) -> None:
        self.total, self.every, self.done, self.next = total, every, 0, every
        self.started = time.perf_counter()

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.done >= self.next or self.done == self.total:
            seconds = time.perf_counter() - self.started
            print(
                f"fill: {self.done:,}/{self.total:,} memories, {self.done / seconds:.0f}/s",
                file=sys.stderr,
                flush=True,
            )
            self.next += self.every

    def close(self) -> None:
        return None


async def _derived_records(
    derived: Any, todo: list[tuple[synthetic.ScopePlan, int]], seed: int, chunk: int = 500
) -> AsyncIterator[BulkRecord]:
    from slowave_graph.operator.bulk import BulkRecord

    pending: list[synthetic.SyntheticMemory] = []

    async def flush() -> list[BulkRecord]:
        vectors = await derived.vectors(pending)
        return [
            BulkRecord(scope=m.scope, content=m.content, type=m.type, embedding=v)
            for m, v in zip(pending, vectors, strict=True)
        ]

    for plan, start in todo:
        for memory in synthetic.synthetic_memories(plan, seed, start):
            pending.append(memory)
            if len(pending) >= chunk:
                for record in await flush():
                    yield record
                pending = []
    if pending:
        for record in await flush():
            yield record


async def fill(
    app: App, total: int, seed: int, prefix: str, progress: bool = True, vectors: str = "exact"
) -> dict[str, Any]:
    """Tops the benchmark scopes up to ``total`` memories (idempotent: counts what is there).

    ``vectors``: "exact" embeds every text (what a real import does); "derived" gives each memory
    a vector derived from cached sentence embeddings (``workload.derived``: fast enough for 1M)."""
    from slowave_graph.operator.bulk import BulkResult, import_memories
    from slowave_graph.operator.progress import Progress, bar
    from slowave_graph.workload.derived import SIGMA, DerivedVectors, expected_cosine

    if vectors not in FILL_VECTORS:
        raise ValueError(f"fill vectors must be one of {', '.join(FILL_VECTORS)}")
    plans = synthetic.scope_plan(total, prefix)
    have = await scope_sizes(app, [p.scope for p in plans])
    todo = [(p, have.get(p.scope, 0)) for p in plans if have.get(p.scope, 0) < p.size]
    count = sum(p.size - start for p, start in todo)
    derived = DerivedVectors(app.embedder, seed)
    started = time.perf_counter()
    written: BulkResult | None = None
    if count:
        records: Any = (
            [rec for p, start in todo for rec in synthetic.memories(p, seed, start=start)]
            if vectors == "exact"
            else _derived_records(derived, todo, seed)
        )
        tty = progress and sys.stderr.isatty()
        with bar(count, f"fill {total:,}", unit="memories", enabled=tty) as shown:
            meter: Progress = shown if tty else _LogProgress(count)
            written = await import_memories(app, records, progress=meter)
    seconds = time.perf_counter() - started
    return {
        "total": total,
        "added": count,
        "seconds": round(seconds, 2),
        "per_second": round(count / seconds, 1) if count and seconds > 0 else None,
        # the import's write transactions alone (the fill's rate also waits for its vectors)
        "written_per_second": round(written.write_rate, 1) if written else None,
        "vectors": vectors,
        **(
            {
                "sigma": SIGMA,
                "expected_cosine_to_base": round(expected_cosine(app.embedder.dimension), 4),
                "sentences_embedded": derived.embedded,
            }
            if vectors == "derived"
            else {}
        ),
        "scopes": len(plans),
        "largest_scope": max(p.size for p in plans),
        "smallest_scope": min(p.size for p in plans),
    }
