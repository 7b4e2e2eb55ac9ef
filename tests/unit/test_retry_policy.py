"""The database retry policy: what is retried, for how long, with which back-off — and what the
caller sees when the budget is spent or a commit's outcome is unknown. (A stand-in session object
replaces the driver here; the real outage is tests/integration/test_reliability.py.)"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any

import pytest
from neo4j.exceptions import (
    ConnectionAcquisitionTimeoutError,
    IncompleteCommit,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)
from tenacity import RetryCallState

from slowave_graph.contract.common import ErrorCode
from slowave_graph.errors import unavailable
from slowave_graph.graph.database import Database
from slowave_graph.graph.errors import DatabaseUnavailable
from slowave_graph.graph.retry import is_retryable, is_unavailable, retrying

DEADLOCK = Neo4jError._hydrate_neo4j(
    code="Neo.TransientError.Transaction.DeadlockDetected", message="deadlock"
)
SYNTAX = Neo4jError._hydrate_neo4j(code="Neo.ClientError.Statement.SyntaxError", message="bad")


@pytest.mark.parametrize(
    ("error", "retried", "unavailable_after"),
    [
        (DEADLOCK, True, True),
        (ServiceUnavailable("down"), True, True),
        (SessionExpired("gone"), True, True),
        (ConnectionAcquisitionTimeoutError("pool exhausted"), True, True),
        (ConnectionResetError("reset"), True, True),
        (IncompleteCommit("lost during commit"), False, True),  # may have been applied: not replayed
        (SYNTAX, False, False),
        (ValueError("a bug"), False, False),
    ],
)
def test_what_is_retried(error: BaseException, retried: bool, unavailable_after: bool) -> None:
    assert is_retryable(error) is retried
    assert is_unavailable(error) is unavailable_after


def test_back_off_is_jittered_exponential_and_bounded() -> None:
    wait = retrying(20.0).wait
    assert wait is not None
    for attempt in range(1, 40):
        state = RetryCallState(retry_object=retrying(20.0), fn=None, args=(), kwargs={})
        state.attempt_number = attempt
        samples = [wait(state) for _ in range(50)]
        assert all(0 <= s <= min(2.0, 0.05 * 2**attempt) for s in samples), (attempt, max(samples))
    assert retrying(20.0).stop is not None


class FakeSession:
    """Runs the transaction function; ``outcomes`` decides each attempt (an exception or a value)."""

    def __init__(self, outcomes: list[Any]) -> None:
        self.outcomes = outcomes

    async def __aenter__(self) -> FakeSession:
        return self

    async def __aexit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        return None

    async def execute_write(self, work: Callable[[Any], Any]) -> Any:
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


class FakeDriver:
    def __init__(self, outcomes: list[Any]) -> None:
        self.outcomes = outcomes
        self.sessions = 0

    def session(self, **_: Any) -> FakeSession:
        self.sessions += 1
        return FakeSession(self.outcomes)


async def noop(tx: Any) -> Any:
    return None


async def test_transient_failures_are_retried_until_success() -> None:
    driver = FakeDriver([DEADLOCK, ServiceUnavailable("restarting"), "written"])
    db = Database(driver, "neo4j", retry_seconds=5.0)  # type: ignore[arg-type]
    assert await db.write(noop) == "written"
    assert driver.sessions == 3


async def test_a_spent_budget_is_database_unavailable() -> None:
    driver = FakeDriver([ServiceUnavailable("down")] * 1000)
    db = Database(driver, "neo4j", retry_seconds=0.3)  # type: ignore[arg-type]
    with pytest.raises(DatabaseUnavailable) as caught:
        await db.write(noop)
    assert caught.value.outcome_unknown is False and driver.sessions > 1
    body = unavailable(str(caught.value)).body()
    assert (
        body.code == ErrorCode.unavailable
        and body.retryable is True
        and "nothing was written" in body.message
    )


async def test_a_commit_with_unknown_outcome_is_not_replayed() -> None:
    driver = FakeDriver([IncompleteCommit("connection lost during COMMIT"), "would duplicate"])
    db = Database(driver, "neo4j", retry_seconds=5.0)  # type: ignore[arg-type]
    with pytest.raises(DatabaseUnavailable) as caught:
        await db.write(noop)
    assert caught.value.outcome_unknown is True and driver.sessions == 1
    body = unavailable(str(caught.value), outcome_unknown=True).body().model_dump(exclude_none=True)
    assert body["code"] == "unavailable" and body["retryable"] is True and body["outcome_unknown"] is True
    assert "completely or not at all" in body["message"]


async def test_programming_errors_surface_unchanged() -> None:
    driver = FakeDriver([SYNTAX])
    db = Database(driver, "neo4j", retry_seconds=5.0)  # type: ignore[arg-type]
    with pytest.raises(Neo4jError):
        await db.write(noop)
    assert driver.sessions == 1


def test_start_up_waits_longer_after_authentication_failures() -> None:
    """While the managed launcher has not set the password yet, Neo4j rejects and then rate-limits
    the user: those failures back off longer than an unreachable server."""
    from slowave_graph.app import _auth_failure

    limited = Neo4jError._hydrate_neo4j(code="Neo.ClientError.Security.AuthenticationRateLimit", message="x")
    unauthorized = Neo4jError._hydrate_neo4j(code="Neo.ClientError.Security.Unauthorized", message="x")
    assert _auth_failure(limited) and _auth_failure(unauthorized)
    assert not _auth_failure(ServiceUnavailable("starting")) and not _auth_failure(SYNTAX)


async def test_refused_credentials_are_reported_as_such_after_the_start_up_wait(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A managed Neo4j refuses the credentials until its launcher has set the password, so start-up
    waits through refusals — but says so at the first one, and names the credentials at the end."""
    from slowave_graph.app import _wait_connectivity

    refused = Neo4jError._hydrate_neo4j(
        code="Neo.ClientError.Security.Unauthorized", message="authentication failure"
    )

    class RefusingDriver:
        attempts = 0

        async def verify_connectivity(self) -> None:
            self.attempts += 1
            raise refused

    db = Database.__new__(Database)
    db.driver = RefusingDriver()  # type: ignore[assignment]
    with pytest.raises(DatabaseUnavailable, match=r"refused the credentials \(NEO4J_USER / NEO4J_PASSWORD\)"):
        await _wait_connectivity(db, timeout=0.0)
    warnings = [r for r in caplog.records if "refused the credentials" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelname == "WARNING"
