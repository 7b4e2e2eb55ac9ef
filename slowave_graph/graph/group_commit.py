"""Group commit: concurrent writes of one statement share a transaction.

A remember of a new memory costs Neo4j most of its CPU in the commit:
Lucene writes a one-document segment into each index the memory enters (docs/performance.md, "A
new memory's write"). Two memories in one commit cost about what one does. And remember's writes
run one at a time in Neo4j anyway: each takes the id counters' write locks until it commits. So
while one write is in flight the next ones wait here rather than on those locks, and then go
together: one transaction, one statement per call, one commit. A lone write runs as it would
without this (its own auto-commit statement), so one client sees no change.

Each call's statement stays its own (its session guard, its idempotency key), so a group is only
a shared commit: every call in it is written whole or not at all, with the others. A group that
fails for a reason a retry cannot fix (one call's bad data) is not allowed to sink the rest: each
of its calls is then written alone and gets its own result or error. A call whose caller has gone
(cancelled) before its group starts is dropped, as a statement still queued for the pool would be.
Calls with the same key (a session) never share a group and keep their order, so a session's
writes commit in the order they were made.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from slowave_graph import telemetry

P = TypeVar("P")
R = TypeVar("R")


@dataclass
class _Pending(Generic[P, R]):
    key: Hashable
    params: P
    started: float  # the call's start: the group runs as its oldest call for the statement pool
    done: asyncio.Future[R] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class GroupCommit(Generic[P, R]):
    """Runs ``alone(params)`` when nothing is in flight, else queues the call; each time the
    writer is free, the calls queued (up to ``max_group``, one per key) run as
    ``together([params, …])``, which returns one result per call in order.

    ``is_final(exc)``: a group's failure every call would share (the database is unavailable), so
    its calls are not retried one by one. ``label``: the statement's name in the calls' timings."""

    def __init__(
        self,
        alone: Callable[[P], Awaitable[R]],
        together: Callable[[list[P]], Awaitable[list[R]]],
        is_final: Callable[[BaseException], bool],
        label: str,
        max_group: int = 16,
    ) -> None:
        self._label = label
        self._alone = alone
        self._together = together
        self._is_final = is_final
        self._max_group = max_group
        self._queue: deque[_Pending[P, R]] = deque()
        self._busy = False
        self._writing: asyncio.Task[None] | None = None
        self.alone = 0  # since start (GET /metrics): writes committed alone,
        self.groups = 0  # commits shared by more than one call,
        self.grouped_calls = 0  # and the calls they carried

    async def run(self, key: Hashable, params: P) -> R:
        if not self._busy and not self._queue:
            self._busy = True
            self.alone += 1
            try:
                return await self._alone(params)
            finally:
                self._busy = False
                self._next()
        pending: _Pending[P, R] = _Pending(key, params, telemetry.call_started())
        self._queue.append(pending)
        if not self._busy:  # the queue was not empty: its group is about to start
            self._next()
        with telemetry.measure("neo4j", self._label):  # the call waits for its write
            return await pending.done

    def stats(self) -> dict[str, int]:
        return {"alone": self.alone, "groups": self.groups, "grouped_calls": self.grouped_calls}

    def _next(self) -> None:
        """Start the next group from the queue (one per key, oldest first), if any."""
        group: list[_Pending[P, R]] = []
        keys: set[Hashable] = set()
        waiting: deque[_Pending[P, R]] = deque()
        while self._queue and len(group) < self._max_group:
            pending = self._queue.popleft()
            if pending.done.cancelled():
                continue
            if pending.key in keys:
                waiting.append(pending)
            else:
                keys.add(pending.key)
                group.append(pending)
        self._queue.extendleft(reversed(waiting))
        if not group:
            return
        self._busy = True
        oldest = min(pending.started for pending in group)
        # held here: the loop keeps only a weak reference to a task
        self._writing = asyncio.create_task(self._commit(group), context=telemetry.detached_call(oldest))
        self._writing.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._busy = False
        self._writing = None
        self._next()

    async def _commit(self, group: list[_Pending[P, R]]) -> None:
        try:
            await self._write(group)
        except BaseException:  # cancelled (shutdown): nobody may wait forever
            for pending in group:
                pending.done.cancel()
            raise

    async def _write(self, group: list[_Pending[P, R]]) -> None:
        if len(group) == 1:
            self.alone += 1
            await self._settle(group[0], self._alone(group[0].params))
            return
        try:
            results = await self._together([pending.params for pending in group])
        except Exception as exc:
            if self._is_final(exc):
                for pending in group:
                    if not pending.done.done():
                        pending.done.set_exception(exc)
                return
            for pending in group:  # isolate the call that failed: each alone
                self.alone += 1
                await self._settle(pending, self._alone(pending.params))
            return
        self.groups += 1
        self.grouped_calls += len(group)
        for pending, result in zip(group, results, strict=True):
            if not pending.done.done():
                pending.done.set_result(result)

    @staticmethod
    async def _settle(pending: _Pending[P, R], work: Awaitable[R]) -> None:
        try:
            result = await work
        except Exception as exc:
            if not pending.done.done():
                pending.done.set_exception(exc)
        else:
            if not pending.done.done():
                pending.done.set_result(result)
