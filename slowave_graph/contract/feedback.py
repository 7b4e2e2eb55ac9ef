"""slowave_feedback: append-only assessments of what a retrieval exposed.

Two levels of checking, as the seed pages require:
- the *shape* (types, unknown keys, scalar-vs-batch form) is validated strictly here; a violation is
  ``invalid_input`` and nothing is written;
- the *meaning* of each entry (a known assessment value, effect rules, stale reasons, replacements,
  exposure) is checked per target by the service: a bad entry is rejected with a reason while its
  valid siblings are accepted. Those fields are therefore plain strings here, and the published
  schema still lists their allowed values as ``enum`` (``json_schema_extra``), so ``tools/list``
  advertises them exactly.
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import Field, StringConstraints, model_validator
from pydantic.json_schema import JsonDict
from pydantic_core import PydanticCustomError

from slowave_graph.contract.common import Output, StrictInput

MEMORY_ASSESSMENTS = ("used", "not_used", "unassessable", "irrelevant", "already_known", "stale")
MEMORY_EFFECTS = ("helped", "no_effect", "harmed", "unknown")
RELEVANCE = ("relevant", "irrelevant", "uncertain")
STALE_REASONS = ("contradicted", "superseded", "outdated", "unsupported", "withdrawn")
PROCEDURE_USES = ("used", "not_used", "unassessable")
PROCEDURE_EFFECTS = ("helped", "no_effect", "harmed", "unknown")
ITEMS_MAX = 50
ENTRIES_MAX = 100


def _enum(values: tuple[str, ...], nullable: bool = False) -> JsonDict:
    return {"enum": [*values, None] if nullable else list(values)}


class MemoryFeedbackEntry(StrictInput):
    memory_id: str = Field(min_length=1, max_length=100, description="A memory this retrieval showed.")
    assessment: str = Field(
        max_length=40,
        description="What the memory did for this task (see the tool description).",
        json_schema_extra=_enum(MEMORY_ASSESSMENTS),
    )
    relevance: str | None = Field(
        None,
        max_length=40,
        description="Independent of usage.",
        json_schema_extra=_enum(RELEVANCE, nullable=True),
    )
    effect: str | None = Field(
        None,
        max_length=40,
        description="For used: helped (default), no_effect or harmed; otherwise omit or unknown.",
        json_schema_extra=_enum(MEMORY_EFFECTS, nullable=True),
    )
    stale_reason: str | None = Field(
        None,
        max_length=40,
        description="Only for stale (superseded: see replacement_memory_id).",
        json_schema_extra=_enum(STALE_REASONS, nullable=True),
    )
    replacement_memory_id: str | None = Field(
        None,
        max_length=100,
        description="For stale: the active memory of this scope that replaces it.",
    )
    reason: str | None = Field(None, max_length=2_000, description="Required for stale and unassessable.")


class ProcedureFeedbackEntry(StrictInput):
    procedure_id: str = Field(min_length=1, max_length=100, description="A procedure this retrieval showed.")
    use: str = Field(
        max_length=40,
        description="used needs contribution; unassessable needs reason.",
        json_schema_extra=_enum(PROCEDURE_USES),
    )
    effect: str | None = Field(
        None,
        max_length=40,
        description="Omitted means unknown; only used may say more.",
        json_schema_extra=_enum(PROCEDURE_EFFECTS, nullable=True),
    )
    contribution: str | None = Field(
        None,
        max_length=2_000,
        description="How the procedure contributed (required when used).",
    )
    reason: str | None = Field(None, max_length=2_000, description="Required for unassessable.")


Coverage = Literal["partial", "complete"]
MissingNote = Annotated[str, StringConstraints(max_length=1_000)]


class FeedbackItem(StrictInput):
    # feedback on one retrieval (no docstring: it would be published in the schema)

    retrieval_id: str = Field(
        min_length=1,
        max_length=100,
        description="Returned by slowave_activate or slowave_recall.",
    )
    memory_feedback: list[MemoryFeedbackEntry] = Field(default_factory=list, max_length=ENTRIES_MAX)
    procedure_feedback: list[ProcedureFeedbackEntry] = Field(default_factory=list, max_length=ENTRIES_MAX)
    retrieval_quality: str | None = Field(
        None, max_length=2_000, description="Your judgement of the result as a whole."
    )
    missing: list[MissingNote] | None = Field(
        None, max_length=20, description="Knowledge you expected but did not get."
    )
    coverage: Coverage = Field(
        "partial",
        description="complete: every shown target assessed; partial: more may follow.",
    )


_SCALAR_FIELDS = (
    "retrieval_id",
    "memory_feedback",
    "procedure_feedback",
    "retrieval_quality",
    "missing",
    "coverage",
)


# Scalar form (the FeedbackItem fields at top level) xor batch form (items). The rule is enforced by
# validation and stated in the descriptions, not published as a root ``oneOf``: the Anthropic, OpenAI
# and Gemini APIs refuse a tool whose input schema has oneOf/anyOf/allOf at its root, and clients
# then drop the tool or fail the whole conversation.
class FeedbackRequest(StrictInput):
    items: list[FeedbackItem] | None = Field(
        None,
        min_length=1,
        max_length=ITEMS_MAX,
        description="Batch form: items alone, coverage inside each item, no other field.",
    )
    retrieval_id: str | None = Field(None, min_length=1, max_length=100)
    memory_feedback: list[MemoryFeedbackEntry] | None = Field(None, max_length=ENTRIES_MAX)
    procedure_feedback: list[ProcedureFeedbackEntry] | None = Field(None, max_length=ENTRIES_MAX)
    retrieval_quality: str | None = Field(None, max_length=2_000)
    missing: list[MissingNote] | None = Field(None, max_length=20)
    coverage: Coverage | None = Field(
        None,
        description="As in an item.",
        # the real default, advertised (None here only tells the scalar form from the batch form)
        json_schema_extra={"default": "partial"},
    )

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        scalar = [name for name in _SCALAR_FIELDS if getattr(self, name) is not None]
        if self.items is not None and scalar:
            raise PydanticCustomError(
                "exclusive",
                "batch mode: send items alone — move {fields} into each item",
                {"field": scalar[0], "fields": ", ".join(scalar)},
            )
        if self.items is None and self.retrieval_id is None:
            raise PydanticCustomError(
                "missing", "retrieval_id is required (or use items for a batch)", {"field": "retrieval_id"}
            )
        return self

    def feedback_items(self) -> list[FeedbackItem]:
        if self.items is not None:
            return list(self.items)
        assert self.retrieval_id is not None
        return [
            FeedbackItem(
                retrieval_id=self.retrieval_id,
                memory_feedback=self.memory_feedback or [],
                procedure_feedback=self.procedure_feedback or [],
                retrieval_quality=self.retrieval_quality,
                missing=self.missing,
                coverage=self.coverage or "partial",
            )
        ]


class Rejection(Output):
    target_id: str = Field(description="The memory, procedure or retrieval the rejection is about.")
    reason: str
    field: str | None = None
    hint: str


class Outstanding(Output):
    memory_ids: list[str]
    procedure_ids: list[str]


class SalienceChange(Output):
    target_id: str
    before: float
    after: float


class Applied(Output):
    strengthened: list[str] = Field(description="Targets whose salience rose.")
    weakened: list[str] = Field(description="Targets whose salience fell.")
    unchanged: list[str] = Field(description="Recomputed, no numeric change (e.g. a repeated assessment).")
    neutral: list[str] = Field(
        description="not_used, unassessable, irrelevant and already_known observations."
    )
    stale: list[str] = Field(description="Memories retired by this call.")
    salience_changes: list[SalienceChange] = Field(
        default_factory=list, description="Salience before and after, for the strengthened and weakened."
    )


class FeedbackResult(Output):
    retrieval_id: str
    coverage: Coverage = Field(description="Coverage actually achieved.")
    requested_coverage: Coverage
    outstanding: Outstanding
    accepted_event_ids: list[str]
    rejected: list[Rejection]
    applied: Applied


class FeedbackItemResult(Output):
    ok: bool
    data: FeedbackResult | None = None
    error: dict[str, object] | None = None


class FeedbackBatchResult(Output):
    results: list[FeedbackItemResult]
