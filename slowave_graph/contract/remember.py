"""slowave_remember: store durable claims."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from slowave_graph.contract.common import (
    RFC3339_HELP,
    ErrorBody,
    MemoryType,
    NonBlank,
    Output,
    Rfc3339,
    ScopeStr,
    SessionId,
    StrictInput,
)

CONTENT_MAX = 8_000
CONTENT_HELP = "One self-contained durable claim, useful without this conversation."
REMEMBER_BATCH_MAX = 100


# One claim of the batch form. Its fields are described at the top level only: tools/list is sent in
# every conversation (a docstring here would be published as the schema's description too).
class RememberItem(StrictInput):
    content: NonBlank = Field(max_length=CONTENT_MAX)
    type: MemoryType
    occurred_at: Rfc3339 | None = None


class RememberRequest(StrictInput):
    scope: ScopeStr
    session_id: SessionId
    content: NonBlank | None = Field(None, max_length=CONTENT_MAX, description=CONTENT_HELP)
    type: MemoryType | None = Field(None, description="Kind of claim.")
    occurred_at: Rfc3339 | None = Field(None, description=RFC3339_HELP)
    memories: list[RememberItem] | None = Field(
        None,
        min_length=1,
        max_length=REMEMBER_BATCH_MAX,
        description="Batch form instead of content + type: one write, much faster.",
    )

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        single = self.content is not None or self.type is not None or self.occurred_at is not None
        if self.memories is not None and single:
            raise PydanticCustomError(
                "exclusive",
                "use either content + type (+ occurred_at) or memories, not both",
                {"field": "memories"},
            )
        if self.memories is None:
            if self.content is None:
                raise PydanticCustomError(
                    "missing", "content is required (or use memories)", {"field": "content"}
                )
            if self.type is None:
                raise PydanticCustomError("missing", "type is required with content", {"field": "type"})
        return self

    def items(self) -> list[RememberItem]:
        """Both forms as a list of items."""
        if self.memories is not None:
            return list(self.memories)
        assert self.content is not None and self.type is not None
        return [RememberItem(content=self.content, type=self.type, occurred_at=self.occurred_at)]


class SimilarMemory(Output):
    memory_id: str
    kind: Literal["duplicate", "update"]
    excerpt: str


class RememberResult(Output):
    stored: bool = Field(description="True when the claim is in memory (new or matched).")
    memory_id: str
    disposition: Literal["created", "matched"] = Field(
        description="matched: an identical claim already existed in the scope and was reinforced."
    )
    type: MemoryType
    scope: str
    source_event_id: str = Field(description="evt_N — the event that records this call.")
    similar: list[SimilarMemory] | None = None  # stored memories this claim repeats or updates


class RememberItemResult(Output):
    index: int
    ok: bool
    data: RememberResult | None = None
    error: ErrorBody | None = None


class RememberBatchResult(Output):
    results: list[RememberItemResult]
