"""Moving what feedback taught into the experience vector index, in batches.

The first feedback that teaches something about a retrieval marks it ``experience_pending``
(``write_feedback``); ``experience_search`` compares marked retrievals exactly, so the lesson counts
from the next question on. This background job copies their query vectors into the indexed property
a batch per transaction: a vector index commits every write transaction as a Lucene segment of its
own, and a copy written by each feedback call cost Neo4j CPU on every call (docs/performance.md,
"Design choices, with their measured effect", "Lessons reach the experience index"). Safe with
several server processes: the statement takes its locks in id order and makes each copy once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from slowave_graph.graph.repository import GraphRepository

log = logging.getLogger(__name__)

# How long marks wait after a feedback call, so that those of concurrent calls go together; how
# often the indexer looks for marks that other processes left (one index read per look).
DELAY_SECONDS = 1.0
SWEEP_SECONDS = 60.0
BATCH = 500


class ExperienceIndexer:
    def __init__(
        self,
        repo: GraphRepository,
        delay: float = DELAY_SECONDS,
        sweep: float = SWEEP_SECONDS,
        batch: int = BATCH,
    ) -> None:
        self.repo = repo
        self.delay = delay
        self.sweep = sweep
        self.batch = batch
        self._flushing = asyncio.Lock()

    async def flush(self) -> int:
        """Move every marked retrieval now; returns how many were taken off the list."""
        moved = 0
        async with self._flushing:
            while True:
                taken = await self.repo.index_pending_experience(limit=self.batch)
                moved += taken
                if taken < self.batch:
                    return moved

    @contextlib.asynccontextmanager
    async def paused(self) -> AsyncIterator[None]:
        """No batch runs in this process inside the block (tests look at marked retrievals)."""
        async with self._flushing:
            yield

    async def run(self) -> None:
        """Flush at start (marks an earlier process left), then ``delay`` seconds after each
        feedback call that marked something, and every ``sweep`` seconds regardless."""
        due = self.repo.experience_due
        while True:
            try:
                await self.flush()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the database may be restarting; the marks wait for the next round
                log.warning("experience indexer: %s", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(due.wait(), self.sweep)
            due.clear()
            await asyncio.sleep(self.delay)
