"""Typed handles of the named statements the repository runs: each declared once, here.

A ``Statement[R]`` pairs a statement of ``cypher/*.cypher`` with the row type its RETURN produces
(``graph/rows.py``) and the parameters its text uses. The database layer takes a handle wherever it
takes a statement's name and then returns ``list[R]`` (``Database.run_read`` …, ``records.rows``),
so a call site states which statement it runs and gets its rows typed without a cast. The pairing
of handle and Cypher is checked once, by a unit test (tests/unit/test_statements.py): the name
exists in the catalog and the declared parameters are exactly the ``$parameters`` of its text.
Statements other code runs by plain name (operator, dashboard, explore) stay untyped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from slowave_graph.graph.cypher import catalog
from slowave_graph.graph.rows import (
    ActivatedRow,
    ActivateRetrievalParams,
    CandidateContextRow,
    CatalogLinkRow,
    ClosedSessionRow,
    CommitSessionRow,
    ConceptWalkRow,
    ContinuityOwner,
    CursorRow,
    EvidenceRow,
    ExperienceRow,
    FeedbackContextRow,
    FulltextHit,
    GuardParams,
    HitsRow,
    MovedRow,
    NoRow,
    PageMemoryHome,
    ProcedureDetailsRow,
    ProcedureHit,
    PromotedHit,
    RecallRetrievalRow,
    RememberCallRow,
    RetrievalIdRow,
    RetrievalParams,
    ScopeScanRow,
    ScopeStateRow,
    SessionCallRow,
    SessionForCommitRow,
    SessionParams,
    SessionReadRow,
    VectorHit,
    WriteFeedbackRow,
)

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Statement(Generic[R]):
    """A named statement, the type of its rows and the names of its parameters."""

    name: str
    row: type[R]
    params: tuple[str, ...]

    @property
    def text(self) -> str:
        """The statement's Cypher, includes expanded (the catalog every Database runs from)."""
        return catalog()[self.name]


def statement_name(statement: Statement[Any] | str) -> str:
    """The catalog name of a handle or of a statement given by plain name."""
    return statement if isinstance(statement, str) else statement.name


def keys(*params: type[Any]) -> tuple[str, ...]:
    """The keys of parameter TypedDicts a call spreads into a statement's parameters (a key two
    of them share, once)."""
    return tuple(dict.fromkeys(key for typed in params for key in typed.__annotations__))


_SEARCH = ("scope", "embeddings", "k")

# ------------------------------------------------------------------ sessions (session.cypher)
SESSION_FOR_CALL = Statement("session_for_call", SessionCallRow, keys(GuardParams))
SESSION_FOR_READ = Statement(
    "session_for_read", SessionReadRow, ("session_id", "principal", "scope", "idle_before")
)
SET_SESSION_CONTEXT = Statement("set_session_context", NoRow, ("session_id", "task_context"))
CLOSE_IDLE_SESSIONS = Statement(
    "close_idle_sessions", ClosedSessionRow, ("now", "idle_before", "closer", "limit")
)
SCOPE_STATE = Statement("scope_state", ScopeStateRow, ("scope", "norm_key"))
CONTINUITY_SCOPE = Statement("continuity_scope", ContinuityOwner, ("continuity_id",))
ACTIVATE_SESSION = Statement("activate_session", ActivatedRow, keys(SessionParams, ActivateRetrievalParams))

# ------------------------------------------------------------------ remember (memory.cypher)
REMEMBER_CALL = Statement(
    "remember_call",
    RememberCallRow,
    (*keys(GuardParams), "call_id", "scope_token", "items", "client_name", "client_version", "concept_links",
     "concepts_version"),
)  # fmt: skip

# ------------------------------------------------------------------ retrieval (retrieval.cypher)
RECALL_RETRIEVAL = Statement("recall_retrieval", RecallRetrievalRow, keys(GuardParams, RetrievalParams))
CREATE_RETRIEVAL = Statement(
    "create_retrieval", RetrievalIdRow, ("session_id", "principal", "scope", "now", *keys(RetrievalParams))
)
EXPOSE_PAGE = Statement(
    "expose_page",
    RetrievalIdRow,
    ("retrieval_id", "page", "page_memories", "page_procedures", "next_cursor_id", "now"),
)
CURSOR_FOR_CALL = Statement("cursor_for_call", CursorRow, ("cursor_id", "principal"))
CATALOG_LINKS = Statement("catalog_links", CatalogLinkRow, ("ids",))
MEMORIES_FOR_PAGE = Statement("memories_for_page", PageMemoryHome, ("ids",))
PROMOTED_SEARCH = Statement("promoted_search", PromotedHit, (*_SEARCH, "kind"))  # generalisation.cypher
EVIDENCE_FOR_MEMORIES = Statement("evidence_for_memories", EvidenceRow, ("ids", "limit"))
PROCEDURE_SEARCH = Statement("procedure_search", ProcedureHit, (*_SEARCH, "floor"))
PROCEDURE_SEARCH_FILTERED = Statement(
    "procedure_search_filtered", ProcedureHit, (*_SEARCH, "floor", "search_from")
)
PROCEDURE_DETAILS = Statement("procedure_details", ProcedureDetailsRow, ("ids",))
FULLTEXT_SEARCH = Statement("fulltext_search", HitsRow[FulltextHit], (*_SEARCH, "lucene"))
VECTOR_SEARCH_FILTERED = Statement("vector_search_filtered", HitsRow[VectorHit], (*_SEARCH, "search_from"))
VECTOR_SCAN_SCOPE = Statement("vector_scan_scope", ScopeScanRow, (*_SEARCH, "scan_max"))
VECTOR_SEARCH_OVERFETCH = Statement("vector_search_overfetch", HitsRow[VectorHit], (*_SEARCH, "fetch"))
CANDIDATE_CONTEXT = Statement(
    "candidate_context",
    CandidateContextRow,
    ("scope", "context_ids", "associate_ids", "embeddings", "now", "min_strength", "half_life_days"),
)
CONCEPT_WALK = Statement(
    "concept_walk",
    ConceptWalkRow,
    ("scope", "seeds", "pool_ids", "embeddings", "concept_fanout", "walk_k", "outside_k", "hub_share",
     "hub_max"),
)  # fmt: skip
_EXPERIENCE = (*_SEARCH, "min_similarity", "irrelevant_at")
EXPERIENCE = Statement("experience", ExperienceRow, (*_EXPERIENCE, "window"))
EXPERIENCE_SEARCH = Statement("experience_search", ExperienceRow, (*_EXPERIENCE, "search_k", "search_from"))

# ------------------------------------------------------------------ feedback (feedback.cypher)
FEEDBACK_CONTEXT = Statement(
    "feedback_context", FeedbackContextRow, ("retrieval_id", "principal", "memory_ids", "procedure_ids")
)
WRITE_FEEDBACK = Statement(
    "write_feedback",
    WriteFeedbackRow,
    ("retrieval_id", "events", "retire", "memory_ids", "procedure_ids", "now", "client_name",
     "client_version", "retrieval_quality", "missing", "declare_complete"),
)  # fmt: skip
INDEX_PENDING_EXPERIENCE = Statement("index_pending_experience", MovedRow, ("limit",))

# ------------------------------------------------------------------ commit (commit.cypher)
SESSION_FOR_COMMIT = Statement("session_for_commit", SessionForCommitRow, ("session_id", "principal"))
COMMIT_SESSION = Statement(
    "commit_session",
    CommitSessionRow,
    ("session_id", "principal", "entries", "episode", "procedure", "close", "client_name",
     "client_version", "now"),
)  # fmt: skip
