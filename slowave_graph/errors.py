"""Domain errors as the agent sees them. The MCP adapter turns them into the contract's error
envelope; what the store refuses (graph/errors.py) is said here, in one place (``from_store``)."""

from __future__ import annotations

from typing import Any

from slowave_graph.contract.common import ErrorBody, ErrorCode, FieldError
from slowave_graph.exceptions import SlowaveError
from slowave_graph.graph.errors import (
    CursorRefused,
    FeedbackOutstanding,
    SessionEnded,
    SessionScopeMismatch,
    StoreRefusal,
    UnknownSession,
)


class ServiceError(SlowaveError):
    """A failure the agent should see as ``{"ok": false, "error": {...}}``."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        retryable: bool = False,
        field_errors: list[FieldError] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable
        self.field_errors = field_errors
        self.extra = extra

    def body(self) -> ErrorBody:
        return ErrorBody(
            code=self.code,
            message=self.message,
            retryable=self.retryable,
            field_errors=self.field_errors,
            **self.extra,
        )


def invalid(message: str, path: str | None = None) -> ServiceError:
    """invalid_input, optionally pointing at the offending field."""
    field_errors = [FieldError(path=path, message=message)] if path else None
    return ServiceError(ErrorCode.invalid_input, message, field_errors=field_errors)


def timed_out(tool: str, seconds: float) -> ServiceError:
    """The call outlived its deadline (SLOWAVE_TOOL_TIMEOUT): the database stopped answering. Any
    write the call started runs in one transaction, so it lands whole or not at all."""
    return ServiceError(
        ErrorCode.unavailable,
        f"the memory database did not answer within {seconds:g} s; if this call wrote anything, it was "
        "stored completely or not at all — repeating the call is safe",
        retryable=True,
        detail=f"{tool} exceeded the tool timeout",
        outcome_unknown=True,
    )


def unavailable(detail: str, *, outcome_unknown: bool = False) -> ServiceError:
    """The database could not be used within the retry budget (the call may be repeated).

    ``outcome_unknown``: the connection broke while the call's transaction was committing, so it
    was stored whole or not at all — the agent may check (recall) or simply repeat the call:
    remember matches the identical claim, feedback and commit are safe to repeat.
    """
    if outcome_unknown:
        return ServiceError(
            ErrorCode.unavailable,
            "the connection to the memory database broke while this call was being committed; it was "
            "stored completely or not at all — repeating the call is safe",
            retryable=True,
            detail=detail[:300],
            outcome_unknown=True,
        )
    return ServiceError(
        ErrorCode.unavailable,
        "the memory database is unreachable right now; nothing was written — retry shortly",
        retryable=True,
        detail=detail[:300],
    )


def embedding_unavailable(detail: str, *, retryable: bool) -> ServiceError:
    """The embedding endpoint failed or refused (embedding/endpoint.py). Texts are embedded before
    the call's transaction, so nothing was written."""
    then = "retry shortly" if retryable else "its configuration needs a look (the server's log says why)"
    return ServiceError(
        ErrorCode.unavailable,
        f"the embedding model's endpoint did not answer usably; nothing was written — {then}",
        retryable=retryable,
        detail=detail[:300],
    )


def incomplete_feedback(outstanding: list[dict[str, Any]]) -> ServiceError:
    """commit refused: exposed targets still lack feedback (retry after slowave_feedback)."""
    count = sum(len(o["memory_ids"]) + len(o["procedure_ids"]) for o in outstanding)
    return ServiceError(
        ErrorCode.incomplete_feedback,
        f"{len(outstanding)} retrieval(s) of this session need feedback first ({count} exposed target(s) "
        "unassessed, or coverage not declared complete): call slowave_feedback for each, then commit again",
        retryable=True,
        outstanding=outstanding,
    )


_CURSOR = {
    "unknown": "unknown continue_from cursor",
    "other_scope": "continue_from belongs to another scope",
    "other_session": "continue_from belongs to another session",
    "past_end": "continue_from points past the end of its result",
}


def from_store(exc: StoreRefusal) -> ServiceError:
    """What the store refused, as the agent is told it (and what to do next)."""
    if isinstance(exc, UnknownSession):
        hint = "; call slowave_activate first" if exc.opening else ""
        return invalid(f"unknown session_id {exc.session_id!r}{hint}", "session_id")
    if isinstance(exc, SessionScopeMismatch):
        return invalid("session_id and scope do not match", "scope")
    if isinstance(exc, SessionEnded):
        return invalid("session is already ended; call slowave_activate to start a new one", "session_id")
    if isinstance(exc, CursorRefused):
        return invalid(_CURSOR[exc.problem], "continue_from")
    if isinstance(exc, FeedbackOutstanding):
        return incomplete_feedback(exc.outstanding)
    raise TypeError(f"no agent-facing form for {type(exc).__name__}") from exc
