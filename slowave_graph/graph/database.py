"""The Neo4j connection: the drivers and their shared bookmarks, the server's capabilities, and
named statements and transaction functions run with bounded retries.

Every unit of work is a transaction function run by ``read`` or ``write``, or one named statement
(``run_read``, ``run_write`` …), given by name or by a typed handle (``graph.statements``). What is
retried and what the caller sees when the budget is spent is ``graph.retry``; how a statement runs
on a pool thread is ``graph.sync_bridge``; records become rows in ``graph.records``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, TypeVar, overload

import neo4j
from neo4j import AsyncDriver, AsyncGraphDatabase, AsyncManagedTransaction, Bookmarks, Driver, GraphDatabase

from slowave_graph.graph.cypher import catalog
from slowave_graph.graph.errors import DatabaseUnavailable
from slowave_graph.graph.executor import OldestCallFirst
from slowave_graph.graph.group_commit import GroupCommit
from slowave_graph.graph.records import rows
from slowave_graph.graph.retry import retried
from slowave_graph.graph.statements import Statement, statement_name
from slowave_graph.graph.sync_bridge import Work, statement_in_thread, write_in_thread

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")


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
    given: a concurrent read stage is faster there than on the async driver, whose per-message
    event-loop work competes with everything else the server does, and more so with several
    clients (docs/performance.md, "Design choices, with their measured effect"). The pool has
    ``statement_threads`` threads and serves the oldest tool call's statements first (``graph.executor``).
    """

    def __init__(
        self,
        driver: AsyncDriver,
        database: str,
        retry_seconds: float = 20.0,
        sync_driver: Driver | None = None,
        statement_threads: int = 4,
    ) -> None:
        self.driver = driver
        self.sync_driver = sync_driver
        self.database = database
        self.queries = catalog()  # the one catalog: typed handles read their text from it too
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
            # Retries are ours (graph.retry); one attempt per driver call.
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

    async def _run(self, access: str, work: Work[T], label: str | None = None) -> T:
        # timed under the statement's name, else the transaction function's (record_feedback)
        label = label or work.__qualname__.split(".<locals>")[0].rsplit(".", 1)[-1]

        async def attempt() -> T:
            if access == neo4j.WRITE_ACCESS and self.sync_driver is not None and self._readers:
                loop = asyncio.get_running_loop()
                return await loop.run_in_executor(self._readers, self._sync_write, work)
            async with self.driver.session(
                database=self.database, bookmark_manager=self._bookmarks
            ) as session:
                if access == neo4j.WRITE_ACCESS:
                    return await session.execute_write(work)
                return await session.execute_read(work)

        return await retried(attempt, self.retry_seconds, label)

    def _sync_write(self, work: Work[T]) -> T:
        """A write transaction on the sync driver (runs in a pool thread). The transaction function
        is the same async one the async driver runs (``graph.sync_bridge``)."""
        assert self.sync_driver is not None
        with self.sync_driver.session(
            database=self.database, bookmark_manager=self._sync_bookmarks
        ) as session:
            return write_in_thread(session, work)

    async def _autocommit(self, access: str, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """One statement as an auto-commit transaction: RUN and PULL in a single round trip.

        A managed transaction adds BEGIN/COMMIT exchanges, which cost several times the statement
        itself (docs/performance.md, "Design choices, with their measured effect"); a single Cypher
        statement is atomic on its own, so it needs none of that.
        """

        async def attempt() -> list[dict[str, Any]]:
            if self.sync_driver is not None and self._readers is not None:
                loop = asyncio.get_running_loop()
                return await loop.run_in_executor(self._readers, self._sync_statement, access, name, params)
            async with self.driver.session(
                database=self.database, bookmark_manager=self._bookmarks, default_access_mode=access
            ) as session:
                return await rows(session, self.q(name), **params)

        # a write whose connection broke may have committed before the break
        writes = access == neo4j.WRITE_ACCESS
        return await retried(attempt, self.retry_seconds, name, autocommit_write=writes)

    def _sync_statement(self, access: str, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """_autocommit on the sync driver (runs in a reader thread)."""
        assert self.sync_driver is not None
        with self.sync_driver.session(
            database=self.database, bookmark_manager=self._sync_bookmarks, default_access_mode=access
        ) as session:
            return statement_in_thread(session, self.q(name), params)

    async def read(self, work: Work[T]) -> T:
        return await self._run(neo4j.READ_ACCESS, work)

    async def write(self, work: Work[T]) -> T:
        return await self._run(neo4j.WRITE_ACCESS, work)

    def _statement(self, name: str, params: dict[str, Any]) -> Work[list[dict[str, Any]]]:
        async def work(tx: AsyncManagedTransaction) -> list[dict[str, Any]]:
            return await rows(tx, self.q(name), **params)

        return work

    # Each run_* takes a typed handle (graph.statements), whose rows it returns typed, or the
    # plain name of a catalog statement, whose rows are plain dicts.
    @overload
    async def run_write(self, statement: Statement[R], /, **params: Any) -> list[R]: ...
    @overload
    async def run_write(self, statement: str, /, **params: Any) -> list[dict[str, Any]]: ...
    async def run_write(self, statement: Statement[Any] | str, /, **params: Any) -> list[Any]:
        """One named statement in its own write transaction."""
        name = statement_name(statement)
        return await self._run(neo4j.WRITE_ACCESS, self._statement(name, params), name)

    @overload
    async def run_idempotent_write(self, statement: Statement[R], /, **params: Any) -> list[R]: ...
    @overload
    async def run_idempotent_write(self, statement: str, /, **params: Any) -> list[dict[str, Any]]: ...
    async def run_idempotent_write(self, statement: Statement[Any] | str, /, **params: Any) -> list[Any]:
        """One named write statement as an auto-commit transaction: one round trip instead of
        BEGIN, RUN and COMMIT. Only for statements that are idempotent, since a connection lost
        while the commit was in flight is retried like any other: the replay must find the first
        attempt's work and write nothing (activate_session is keyed on its retrieval id)."""
        return await self._autocommit(neo4j.WRITE_ACCESS, statement_name(statement), params)

    @overload
    async def run_grouped_write(
        self, statement: Statement[R], key: Hashable, /, **params: Any
    ) -> list[R]: ...
    @overload
    async def run_grouped_write(
        self, statement: str, key: Hashable, /, **params: Any
    ) -> list[dict[str, Any]]: ...
    async def run_grouped_write(
        self, statement: Statement[Any] | str, key: Hashable, /, **params: Any
    ) -> list[Any]:
        """``run_idempotent_write``, sharing its commit with concurrent calls of the same statement
        (``graph.group_commit``; ``key``: calls with the same key never share one). Only for
        statements whose writes serialise in Neo4j anyway and whose commit is the costly part."""
        name = statement_name(statement)
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

    @overload
    async def run_read(self, statement: Statement[R], /, **params: Any) -> list[R]: ...
    @overload
    async def run_read(self, statement: str, /, **params: Any) -> list[dict[str, Any]]: ...
    async def run_read(self, statement: Statement[Any] | str, /, **params: Any) -> list[Any]:
        """One named statement as a read (auto-commit: one round trip)."""
        return await self._autocommit(neo4j.READ_ACCESS, statement_name(statement), params)

    async def run_schema(self, name: str, **params: Any) -> None:
        """Schema statements run in auto-commit transactions (they cannot share one)."""

        async def attempt() -> None:
            async with self.driver.session(database=self.database) as session:
                result = await session.run(self.q(name), params)
                await result.consume()

        await retried(attempt, self.retry_seconds)
