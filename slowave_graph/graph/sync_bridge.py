"""Running the service's statements on the sync driver, in a thread of the statement pool.

The service's transaction functions are async (``Work``: they await ``tx.run`` on the async
driver's transaction). On a pool thread the same function runs inside a sync driver's managed
transaction: ``SyncTransaction`` gives that transaction the awaitable face the function expects,
and the thread's own event loop drives the function to completion. ``Database`` says when a
statement takes this path and why.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from neo4j import AsyncManagedTransaction, ManagedTransaction, Record, Session
from neo4j.graph import Graph

from slowave_graph.graph.records import as_dicts, unlogged

T = TypeVar("T")
# A transaction function: the unit of work a read or write transaction runs (and may retry).
Work = Callable[[AsyncManagedTransaction], Awaitable[T]]

_threads = threading.local()


def write_in_thread(session: Session, work: Work[T]) -> T:
    """``work`` in a write transaction of this sync session (on a pool thread)."""
    loop = _thread_loop()

    def in_transaction(tx: ManagedTransaction) -> T:
        # SyncTransaction has the awaitable face of AsyncManagedTransaction that work expects
        return loop.run_until_complete(work(SyncTransaction(tx)))  # type: ignore[arg-type]

    return session.execute_write(in_transaction)


def statement_in_thread(session: Session, text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """One statement as an auto-commit transaction of this sync session, its records as dicts."""
    result = session.run(text, unlogged(params))
    records = list(result)
    return as_dicts(records, result.graph())


def _thread_loop() -> asyncio.AbstractEventLoop:
    """This pool thread's private event loop (created once per thread)."""
    loop: asyncio.AbstractEventLoop | None = getattr(_threads, "loop", None)
    if loop is None:
        loop = _threads.loop = asyncio.new_event_loop()
    return loop


class SyncTransaction:
    """A sync driver's managed transaction behind AsyncManagedTransaction's ``await tx.run(…)`` /
    ``async for record in result``: each statement runs to completion when awaited."""

    def __init__(self, tx: ManagedTransaction) -> None:
        self._tx = tx

    async def run(self, query: str, parameters: dict[str, Any] | None = None, **kwargs: Any) -> _Records:
        result = self._tx.run(query, parameters, **kwargs)  # rows() made them unlogged
        records = list(result)
        return _Records(records, result.graph())


class _Records:
    def __init__(self, records: list[Record], graph: Graph) -> None:
        self._records = records
        self._graph = graph

    async def __aiter__(self) -> AsyncIterator[Record]:
        for record in self._records:
            yield record

    async def graph(self) -> Graph:
        return self._graph
