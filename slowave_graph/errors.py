"""Domain errors. The MCP adapter turns them into the contract's error envelope."""

from __future__ import annotations

from typing import Any

from slowave_graph.contract.common import ErrorBody, ErrorCode, FieldError


class ServiceError(Exception):
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


def unavailable(detail: str) -> ServiceError:
    return ServiceError(
        ErrorCode.unavailable,
        "the memory database is unreachable right now; nothing was written — retry shortly",
        retryable=True,
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
