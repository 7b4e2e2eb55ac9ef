"""slowave_recall: deliberate mid-task lookup, and continuation of a frozen result."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from slowave_graph.contract.common import (
    NonBlank,
    Output,
    PageSize,
    ScopeStr,
    SessionId,
    StrictInput,
    TaskContext,
)
from slowave_graph.contract.retrieval import AccessibleField, FullProcedure, MemoryItem

EvidenceMode = Literal["references", "full"]


class RecallRequest(StrictInput):
    session_id: SessionId
    scope: ScopeStr
    query: NonBlank | None = Field(
        None,
        max_length=10_000,
        description="One focused question; omit with continue_from.",
    )
    task_context: TaskContext | None = Field(
        None, description="Facts about this sub-question, added to the session's."
    )
    semantic_context: str | None = Field(None, max_length=10_000, description="Free text used as a cue.")
    evidence: EvidenceMode = Field(
        "references",
        description="full adds the source text (≤ 1,000 characters per record); first page only.",
    )
    page_size: PageSize | None = Field(None, description="Memories per page (default 5).")
    continue_from: str | None = Field(
        None,
        min_length=1,
        max_length=100,
        description="A cursor of this session's earlier result: its next page. Send it alone.",
    )

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        if self.continue_from is None:
            if self.query is None:
                raise PydanticCustomError(
                    "missing", "query is required unless continue_from is given", {"field": "query"}
                )
            return self
        for name in ("query", "page_size", "task_context", "semantic_context"):
            if getattr(self, name) is not None:
                raise PydanticCustomError(
                    "exclusive",
                    "{name} cannot be combined with continue_from: a continuation replays a frozen result",
                    {"field": name, "name": name},
                )
        if self.evidence == "full":
            raise PydanticCustomError(
                "exclusive", "evidence=full cannot be combined with continue_from", {"field": "evidence"}
            )
        return self


class SourceRef(Output):
    kind: Literal["episode", "event"]
    id: int


class EvidenceRecord(Output):
    evidence_id: str = Field(description="ep_N or evt_N.")
    source_kind: Literal["episode", "event"]
    recorded_at: int = Field(description="Unix time the record was written.")
    occurred_at: int = Field(description="Unix time of the source event (recorded_at unless given).")
    source_ref: SourceRef
    content: str | None = Field(None, description="full mode: the source text, at most 1000 characters.")
    truncated: bool | None = Field(None, description="full mode: true when the text was cut.")


class RecallResult(Output):
    retrieval_id: str = Field(description="Pass to slowave_feedback after using (or not) what was shown.")
    session_id: str = Field(description="The session this retrieval belongs to.")
    memories: list[MemoryItem]
    procedures: list[FullProcedure]
    evidence: list[EvidenceRecord] = Field(
        description="At most 8 source records behind the memories; on the first page only ([] on a "
        "continuation)."
    )
    evidence_mode: EvidenceMode
    evidence_truncated: bool
    retrieval_policy_version: str
    relevant_total: int
    catalog_truncated: bool
    more_available: bool
    continue_from: str | None = None
    accessible_field: AccessibleField | dict[str, object]
