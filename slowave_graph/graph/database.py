"""The Neo4j connection: driver, managed transactions with bounded retries, server capabilities.

Every unit of work is a transaction function run by ``read`` or ``write``. Transient failures
(deadlocks, leader switches, a restarting server) are retried with jittered exponential back-off by
tenacity; when the budget is spent the caller gets ``DatabaseUnavailable`` and nothing was
half-written, because a transaction either commits whole or not at all.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any, TypeVar

import neo4j
from neo4j import (
    AsyncDriver,
    AsyncGraphDatabase,
    AsyncManagedTransaction,
    AsyncSession,
    Bookmarks,
    Driver,
    GraphDatabase,
    ManagedTransaction,
    Record,
)
from neo4j.exceptions import ConnectionAcquisitionTimeoutError, DriverError, IncompleteCommit, Neo4jError
from neo4j.graph import Graph
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_delay,
    wait_random_exponential,
)

from slowave_graph.graph.cypher import CypherCatalog, catalog
from slowave_graph.graph.executor import OldestCallFirst
from slowave_graph.graph.group_commit import GroupCommit
from slowave_graph.telemetry import measure

log = logging.getLogger(__name__)

T = TypeVar("T")
Work = Callable[[AsyncManagedTransaction], Awaitable[T]]


class DatabaseUnavailable(RuntimeError):
    """Neo4j could not be reached (or kept failing transiently) within the retry budget.

    ``outcome_unknown``: the connection broke while a commit was in flight, so the transaction may
    or may not have been applied (it was applied whole or not at all, never in part).
    """

    def __init__(self, message: str, *, outcome_unknown: bool = False) -> None:
        super().__init__(message)
        self.outcome_unknown = outcome_unknown


def is_retryable(exc: BaseException) -> bool:
    """Deadlocks, transient errors and lost connections — what a retry can fix.

    A commit whose connection broke mid-way (IncompleteCommit) is not retried: it may have been
    applied, and replaying a write would duplicate it. An exhausted connection pool is transient
    overload, worth another attempt after the back-off.
    """
    if isinstance(exc, IncompleteCommit):
        return False
    if isinstance(exc, ConnectionAcquisitionTimeoutError):
        return True
    if isinstance(exc, Neo4jError | DriverError):
        return bool(exc.is_retryable())
    return isinstance(exc, ConnectionError | OSError)


def is_unavailable(exc: BaseException) -> bool:
    """Failures the caller sees as ``DatabaseUnavailable``: retries spent, or commit outcome unknown."""
    return is_retryable(exc) or isinstance(exc, IncompleteCommit)


@dataclass(frozen=True)
class ServerInfo:
    version: str
    edition: str
    vector_filter_in_index: bool

    @property
    def major_minor(self) -> tuple[int, int]:
        parts = self.version.split(".")
        try:
            return int(parts[0]), int(parts[1])
        except (IndexError, ValueError):
            return (0, 0)

    @property
    def supports_search_clause(self) -> bool:
        """Cypher 25 SEARCH for vector indexes with in-index filters (Neo4j 2026.01+)."""
        return self.major_minor >= (2026, 1)


class _SharedBookmarks:
    """Causal consistency across the two drivers: each one's bookmark manager also supplies the
    other's latest bookmarks, so a read after a write sees that write whichever driver ran it
    (on a cluster, where reads may go to another member; a single server is trivially causal)."""

    def __init__(self) -> None:
        self.from_async = Bookmarks()
        self.from_sync = Bookmarks()

    def set_async(self, bookmarks: Bookmarks) -> None:
        self.from_async = bookmarks

    def set_sync(self, bookmarks: Bookmarks) -> None:
        self.from_sync = bookmarks


class Database:
    """The drivers plus the query catalog and a retry policy.

    Transactions (writes, multi-statement reads) run on the async driver. Single-statement reads —
    most of what activate and recall send — run on a sync driver in a thread pool when one is
    given: measured on 2 cores, a concurrent read stage took ~30 % less time with one client and
    half the time with eight than on the async driver, whose per-message event-loop work competes
    with everything else the server does (docs/performance.md). The pool has ``statement_threads``
    threads and serves the oldest tool call's statements first (``graph.executor``).
    """

    def __init__(
        self,
        driver: AsyncDriver,
        database: str,
        queries: CypherCatalog | None = None,
        retry_seconds: float = 20.0,
        sync_driver: Driver | None = None,
        statement_threads: int = 4,
    ) -> None:
        self.driver = driver
        self.sync_driver = sync_driver
        self.database = database
        self.queries = queries or catalog()
        self.retry_seconds = retry_seconds
        shared = _SharedBookmarks()
        self._bookmarks = AsyncGraphDatabase.bookmark_manager(
            bookmarks_supplier=lambda: shared.from_sync, bookmarks_consumer=shared.set_async
        )
        self._sync_bookmarks = GraphDatabase.bookmark_manager(
            bookmarks_supplier=lambda: shared.from_async, bookmarks_consumer=shared.set_sync
        )
        self._readers = (
            OldestCallFirst(statement_threads, thread_name_prefix="neo4j-statement")
            if sync_driver is not None
            else None
        )
        self.server: ServerInfo | None = None
        self.close_wait_seconds = 10.0
        self.groups: dict[str, GroupCommit[dict[str, Any], list[dict[str, Any]]]] = {}

    @classmethod
    def connect(
        cls,
        uri: str,
        user: str,
        password: str,
        database: str = "neo4j",
        statement_threads: int = 4,
        **driver_config: Any,
    ) -> Database:
        config: dict[str, Any] = {
            "max_connection_pool_size": 50,
            "connection_acquisition_timeout": 10.0,
            "connection_timeout": 5.0,
            # Retries are ours (tenacity, below); one attempt per driver call.
            "max_transaction_retry_time": 0.0,
            "user_agent": "slowave-graph",
            "notifications_min_severity": "OFF",
        }
        config.update(driver_config)
        driver = AsyncGraphDatabase.driver(uri, auth=(user, password), **config)
        sync_driver = GraphDatabase.driver(uri, auth=(user, password), **config)
        return cls(driver, database, sync_driver=sync_driver, statement_threads=statement_threads)

    async def close(self) -> None:
        if self._readers is not None:
            # A statement may still run on a reader thread (the thread of a cancelled call or
            # background task runs on): closing the sync driver under it broke its connection's
            # buffers (BufferError). Let it finish first, within a bound for a database that hangs.
            waiting = asyncio.to_thread(self._readers.shutdown, wait=True, cancel_futures=True)
            try:
                await asyncio.wait_for(waiting, timeout=self.close_wait_seconds)
            except TimeoutError:
                log.warning("closing the Neo4j drivers with statements still running")
        await self.driver.close()
        if self.sync_driver is not None:
            await asyncio.to_thread(self.sync_driver.close)

    def q(self, name: str) -> str:
        return self.queries[name]

    def _retrying(self) -> AsyncRetrying:
        return AsyncRetrying(
            retry=retry_if_exception(is_retryable),
            stop=stop_after_delay(self.retry_seconds),
            # full jitter: 0-50 ms, 0-100 ms, … up to 0-2 s, so contending writers (deadlocks)
            # spread out quickly while a restarting server is polled at most every 2 s
            wait=wait_random_exponential(multiplier=0.05, max=2.0),
            reraise=True,
        )

    async def _run(self, access: str, work: Work[T], label: str | None = None) -> T:
        # timed under the statement's name, else the transaction function's (record_feedback)
        label = label or work.__qualname__.split(".<locals>")[0].rsplit(".", 1)[-1]
        try:
            async for attempt in self._retrying():
                with attempt, measure("neo4j", label):
                    if access == neo4j.WRITE_ACCESS and self.sync_driver is not None and self._readers:
                        loop = asyncio.get_running_loop()
                        return await loop.run_in_executor(self._readers, self._sync_write, work)
                    async with self.driver.session(
                        database=self.database, bookmark_manager=self._bookmarks
                    ) as session:
                        if access == neo4j.WRITE_ACCESS:
                            return await session.execute_write(work)
                        return await session.execute_read(work)
        except Exception as exc:
            if is_unavailable(exc):
                raise _unavailable(exc) from exc
            raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _sync_write(self, work: Work[T]) -> T:
        """A write transaction on the sync driver (runs in a pool thread). The transaction function
        is the same async one the async driver runs: its statements complete synchronously here,
        so it is driven to completion on this thread's own event loop."""
        assert self.sync_driver is not None
        loop = _thread_loop()

        def in_transaction(tx: ManagedTransaction) -> T:
            # SyncTransaction has the awaitable face of AsyncManagedTransaction that work expects
            return loop.run_until_complete(work(SyncTransaction(tx)))  # type: ignore[arg-type]

        with self.sync_driver.session(
            database=self.database, bookmark_manager=self._sync_bookmarks
        ) as session:
            return session.execute_write(in_transaction)

    async def _autocommit(self, access: str, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """One statement as an auto-commit transaction: RUN and PULL in a single round trip.

        A managed transaction adds BEGIN/COMMIT exchanges and costs 3-4x the latency of one
        statement; a single Cypher statement is atomic on its own, so it needs none of that.
        """
        try:
            async for attempt in self._retrying():
                with attempt, measure("neo4j", name):
                    if self.sync_driver is not None and self._readers is not None:
                        loop = asyncio.get_running_loop()
                        return await loop.run_in_executor(
                            self._readers, self._sync_statement, access, name, params
                        )
                    async with self.driver.session(
                        database=self.database, bookmark_manager=self._bookmarks, default_access_mode=access
                    ) as session:
                        return await rows(session, self.q(name), **params)
        except Exception as exc:
            if is_unavailable(exc):
                # a write whose connection broke may have committed before the break
                lost = access == neo4j.WRITE_ACCESS and not isinstance(exc, Neo4jError)
                raise _unavailable(exc, outcome_unknown=lost) from exc
            raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _sync_statement(self, access: str, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """_autocommit on the sync driver (runs in a reader thread)."""
        assert self.sync_driver is not None
        with self.sync_driver.session(
            database=self.database, bookmark_manager=self._sync_bookmarks, default_access_mode=access
        ) as session:
            result = session.run(self.q(name), unlogged(params))
            records = list(result)
            return as_dicts(records, result.graph())

    async def read(self, work: Work[T]) -> T:
        return await self._run(neo4j.READ_ACCESS, work)

    async def write(self, work: Work[T]) -> T:
        return await self._run(neo4j.WRITE_ACCESS, work)

    def _statement(self, name: str, params: dict[str, Any]) -> Work[list[dict[str, Any]]]:
        async def work(tx: AsyncManagedTransaction) -> list[dict[str, Any]]:
            return await rows(tx, self.q(name), **params)

        return work

    async def run_write(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """One named statement in its own write transaction."""
        return await self._run(neo4j.WRITE_ACCESS, self._statement(name, params), name)

    async def run_idempotent_write(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """One named write statement as an auto-commit transaction: one round trip instead of
        BEGIN, RUN and COMMIT. Only for statements that are idempotent, since a connection lost
        while the commit was in flight is retried like any other: the replay must find the first
        attempt's work and write nothing (activate_session is keyed on its retrieval id)."""
        return await self._autocommit(neo4j.WRITE_ACCESS, name, params)

    async def run_grouped_write(self, name: str, key: Hashable, **params: Any) -> list[dict[str, Any]]:
        """``run_idempotent_write``, sharing its commit with concurrent calls of the same statement
        (``graph.group_commit``; ``key``: calls with the same key never share one). Only for
        statements whose writes serialise in Neo4j anyway and whose commit is the costly part."""
        group = self.groups.get(name)
        if group is None:
            group = self.groups[name] = GroupCommit(
                alone=lambda one: self._autocommit(neo4j.WRITE_ACCESS, name, one),
                together=lambda many: self._run(neo4j.WRITE_ACCESS, self._statements(name, many), name),
                is_final=lambda exc: isinstance(exc, DatabaseUnavailable),
                label=name,
            )
        return await group.run(key, params)

    def _statements(self, name: str, many: list[dict[str, Any]]) -> Work[list[list[dict[str, Any]]]]:
        async def work(tx: AsyncManagedTransaction) -> list[list[dict[str, Any]]]:
            return [await rows(tx, self.q(name), **params) for params in many]

        return work

    async def run_read(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """One named statement as a read (auto-commit: one round trip)."""
        return await self._autocommit(neo4j.READ_ACCESS, name, params)

    async def run_schema(self, name: str, **params: Any) -> None:
        """Schema statements run in auto-commit transactions (they cannot share one)."""
        try:
            async for attempt in self._retrying():
                with attempt:
                    async with self.driver.session(database=self.database) as session:
                        result = await session.run(self.q(name), params)
                        await result.consume()
        except Exception as exc:
            if is_unavailable(exc):
                raise _unavailable(exc) from exc
            raise


class UnloggedList(list[Any]):
    """A list parameter with a short repr. The driver (neo4j 6.1) formats every RUN's parameters
    for its debug log before the log level is checked (``" ".join(map(repr, fields))``): for a
    statement carrying three 384-d query vectors that is ~1-2 ms of CPU, on every statement."""

    def __repr__(self) -> str:
        return f"<list of {len(self)}>"


def unlogged(params: dict[str, Any]) -> dict[str, Any]:
    """Top-level list parameters wrapped in UnloggedList, unless the driver's debug log is on."""
    if _driver_log.isEnabledFor(logging.DEBUG):
        return params
    return {k: UnloggedList(v) if type(v) is list else v for k, v in params.items()}


_driver_log = logging.getLogger("neo4j")
_threads = threading.local()


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


def _unavailable(exc: Exception, *, outcome_unknown: bool = False) -> DatabaseUnavailable:
    """What a caller sees once retries for transient trouble are spent."""
    log.warning("Neo4j unavailable after retries: %s", exc)
    return DatabaseUnavailable(str(exc), outcome_unknown=outcome_unknown or isinstance(exc, IncompleteCommit))


async def rows(
    tx: AsyncManagedTransaction | AsyncSession, statement: str, /, **params: Any
) -> list[dict[str, Any]]:
    """All records of one statement, inside a transaction function or auto-commit in a session, as dicts."""
    result = await tx.run(statement, unlogged(params))
    records = [record async for record in result]
    return as_dicts(records, await result.graph())


def as_dicts(records: list[Record], graph: Graph) -> list[dict[str, Any]]:
    """A result's records as dicts, the same as ``Record.data()``. data() runs every value through
    the driver's generic exporter (ABC instance checks, new containers): 57 µs for a search row of
    11 columns, 8.5 ms for the 150 rows of one vector search, and it was the largest share of the
    server's CPU under load. So records are zipped instead, unless the result held a node or a
    relationship (``graph``: the ones the driver built while decoding it; a path's are among them),
    which only data() turns into dicts. Telling the two apart by walking each row took 0.26 ms for
    a search's 150 hits (1.3 ms with an isinstance per value: 10 % of the server's GIL time with
    eight clients)."""
    if graph.nodes or graph.relationships:
        return [record.data() for record in records]
    return [dict(zip(record.keys(), record.values(), strict=True)) for record in records]
