"""What the store refuses (plain exceptions) reaches the agent as the contract's errors, in one
place: code, message with what to do next, and the field it concerns."""

from __future__ import annotations

import pytest

from slowave_graph.contract.common import ErrorCode
from slowave_graph.errors import from_store
from slowave_graph.graph.errors import (
    CursorRefused,
    FeedbackOutstanding,
    SessionEnded,
    SessionScopeMismatch,
    StoreRefusal,
    UnknownSession,
)


@pytest.mark.parametrize(
    ("refusal", "code", "message", "path"),
    [
        (UnknownSession("sess_1", opening=True), ErrorCode.invalid_input,
         "unknown session_id 'sess_1'; call slowave_activate first", "session_id"),
        (UnknownSession("sess_1"), ErrorCode.invalid_input, "unknown session_id 'sess_1'", "session_id"),
        (SessionScopeMismatch("sess_1"), ErrorCode.invalid_input, "session_id and scope do not match", "scope"),
        (SessionEnded("sess_1"), ErrorCode.invalid_input,
         "session is already ended; call slowave_activate to start a new one", "session_id"),
        (CursorRefused("other_session"), ErrorCode.invalid_input,
         "continue_from belongs to another session", "continue_from"),
        (CursorRefused("past_end"), ErrorCode.invalid_input,
         "continue_from points past the end of its result", "continue_from"),
    ],
)  # fmt: skip
def test_each_refusal_says_what_to_do(
    refusal: StoreRefusal, code: ErrorCode, message: str, path: str
) -> None:
    body = from_store(refusal).body()
    assert (body.code, body.message, body.retryable) == (code, message, False)
    assert [(e.path, e.message) for e in body.field_errors or []] == [(path, message)]


def test_outstanding_feedback_is_a_retryable_refusal_listing_the_targets() -> None:
    outstanding = [{"retrieval_id": "ctx_1", "memory_ids": ["sch_1", "sch_2"], "procedure_ids": []}]
    body = from_store(FeedbackOutstanding(outstanding)).body()
    assert body.code == ErrorCode.incomplete_feedback and body.retryable is True
    assert "2 exposed target(s)" in body.message
    assert body.model_dump()["outstanding"] == outstanding


def test_an_unknown_refusal_is_a_programming_error() -> None:
    with pytest.raises(TypeError, match="no agent-facing form"):
        from_store(StoreRefusal("new"))
