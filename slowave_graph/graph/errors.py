"""The store's errors, as plain exceptions without contract types or agent-facing text.

``StoreRefusal`` and its kinds: a precondition the store found unmet. Raised inside a transaction
function, each rolls its transaction back, so a refused call writes nothing. The service layer says
them to the agent (``slowave_graph.errors.from_store``). ``DatabaseUnavailable``: Neo4j could not
be used within the retry budget (``graph.retry``). ``EmbeddingMismatch``: the database holds the
vectors of another embedding model (``graph.schema``).
"""

from __future__ import annotations

from typing import Any, Literal

from slowave_graph.exceptions import SlowaveError


class DatabaseUnavailable(SlowaveError, RuntimeError):
    """Neo4j could not be reached (or kept failing transiently) within the retry budget.

    ``outcome_unknown``: the connection broke while a commit was in flight, so the transaction may
    or may not have been applied (it was applied whole or not at all, never in part).
    """

    def __init__(self, message: str, *, outcome_unknown: bool = False) -> None:
        super().__init__(message)
        self.outcome_unknown = outcome_unknown


class EmbeddingMismatch(SlowaveError, RuntimeError):
    """The database holds vectors of another embedding model than the configured one."""


class StoreRefusal(SlowaveError):
    """A precondition the store found unmet."""


class UnknownSession(StoreRefusal):
    """No session with this id that the calling principal opened (another's is unknown too)."""

    def __init__(self, session_id: str, *, opening: bool = False) -> None:
        super().__init__(session_id)
        self.session_id = session_id
        self.opening = opening  # a call that needs an open session (not a commit, which may update)


class SessionScopeMismatch(StoreRefusal):
    """The session belongs to another scope than the call names."""


class SessionEnded(StoreRefusal):
    """The session was committed or closed by the idle timeout."""


CursorProblem = Literal["unknown", "other_scope", "other_session", "past_end"]


class CursorRefused(StoreRefusal):
    """A continue_from cursor that this call cannot use."""

    def __init__(self, problem: CursorProblem) -> None:
        super().__init__(problem)
        self.problem = problem


class FeedbackOutstanding(StoreRefusal):
    """Exposed targets of the session's retrievals still lack feedback: the commit wrote nothing."""

    def __init__(self, outstanding: list[dict[str, Any]]) -> None:
        super().__init__(f"{len(outstanding)} retrieval(s) outstanding")
        self.outstanding = outstanding
