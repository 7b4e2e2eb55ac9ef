"""The retry policy: which failures a retry can fix, how long and how often they are retried, and
what the caller sees when the budget is spent.

Transient failures (deadlocks, leader switches, a restarting server, an exhausted connection pool)
are retried with jittered exponential back-off by tenacity; when the budget is spent the caller
gets ``DatabaseUnavailable`` and nothing was half-written, because a transaction either commits
whole or not at all.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TypeVar

from neo4j.exceptions import ConnectionAcquisitionTimeoutError, DriverError, IncompleteCommit, Neo4jError
from tenacity import AsyncRetrying, retry_if_exception, stop_after_delay, wait_random_exponential

from slowave_graph.graph.errors import DatabaseUnavailable
from slowave_graph.telemetry import measure

log = logging.getLogger(__name__)

T = TypeVar("T")


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


def retrying(seconds: float) -> AsyncRetrying:
    """Attempts of one unit of work, for up to ``seconds``."""
    return AsyncRetrying(
        retry=retry_if_exception(is_retryable),
        stop=stop_after_delay(seconds),
        # full jitter: 0-50 ms, 0-100 ms, … up to 0-2 s, so contending writers (deadlocks)
        # spread out quickly while a restarting server is polled at most every 2 s
        wait=wait_random_exponential(multiplier=0.05, max=2.0),
        reraise=True,
    )


async def retried(
    attempt: Callable[[], Awaitable[T]],
    seconds: float,
    label: str | None = None,
    *,
    autocommit_write: bool = False,
) -> T:
    """``attempt()`` until it succeeds or fails for good, each try timed as Neo4j time under
    ``label`` (untimed without one). What is still unavailable when ``seconds`` are spent is raised
    as ``DatabaseUnavailable``. ``autocommit_write``: the attempt is an auto-commit write, which a
    broken connection (not the server refusing it) may have interrupted after it committed."""
    try:
        async for trying in retrying(seconds):
            timed: AbstractContextManager[None] = measure("neo4j", label) if label else nullcontext()
            with trying, timed:
                return await attempt()
    except Exception as exc:
        if is_unavailable(exc):
            lost = autocommit_write and not isinstance(exc, Neo4jError)
            raise _unavailable(exc, outcome_unknown=lost) from exc
        raise
    raise AssertionError("unreachable")  # pragma: no cover


def _unavailable(exc: Exception, *, outcome_unknown: bool = False) -> DatabaseUnavailable:
    """What a caller sees once retries for transient trouble are spent."""
    log.warning("Neo4j unavailable after retries: %s", exc)
    return DatabaseUnavailable(str(exc), outcome_unknown=outcome_unknown or isinstance(exc, IncompleteCommit))
