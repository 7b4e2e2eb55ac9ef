"""Shapes shared by activate and recall results."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from slowave_graph.contract.common import Output


class Association(Output):
    via: Literal["concept", "co_use"] = Field(
        description="concept: it talks about the same specific things as a direct match; co_use: "
        "agents used the two together before."
    )
    concepts: list[str] = Field(description="The shared concepts that led here (via concept).")
    from_memory_id: str | None = Field(None, description="The direct match it is linked to.")


class SourceExcerpt(Output):
    version: int = Field(description="Form of this record (1).")
    source_chars: int = Field(description="Length of the whole memory in characters.")
    source_spans: list[list[int]] = Field(
        description="[start, end) character ranges of the memory that content holds, in order, joined "
        "by newlines."
    )


class Provenance(Output):
    source_kind: Literal["event", "episode"]
    integration: str | None = Field(None, description="Name of the MCP client that stored the memory.")
    integration_version: str | None = None
    origin_scope: str | None = Field(
        None, description="Set for a lesson validated in other scopes: the scope it was learned in."
    )
    stage: int | None = Field(None, description="With origin_scope: 1 its kind's scopes, 2 all, 3 global.")
    association: Association | None = Field(
        None, description="Associated memories: why it came. Say irrelevant if it does not fit."
    )
    source_excerpt: SourceExcerpt | None = Field(
        None,
        description="Only for memories longer than 1,024 characters: content holds these parts of it "
        "(the sentences that bear on the task first), never a silent cut.",
    )
    also_stored_as: list[str] | None = Field(
        None, description="Near-duplicates shown as this one; feedback on it covers them."
    )
    conflicts_with: list[str] | None = Field(
        None,
        description="Memories on the same subject with other values, shown beside it newest first. "
        "If one is out of date, mark it stale: superseded, replacement_memory_id = the current one.",
    )


class MemoryItem(Output):
    memory_id: str = Field(description="sch_N — use in slowave_feedback.")
    content: str = Field(
        description="The memory verbatim up to 1,024 characters; longer ones as source spans (see "
        "provenance.source_excerpt)."
    )
    pathway: Literal["direct", "associated"] = Field(
        description="direct: matched the query; associated: linked to a direct match in the memory "
        "graph (shared concepts or past co-use), see provenance.association."
    )
    provenance: Provenance | None = None


class CompactProcedure(Output):
    procedure_id: str
    goal: str
    summary: str
    outcome: str
    outcome_summary: str
    caveats: list[str]


class AccessibleField(Output):
    extra_candidates: int = Field(description="Relevant memories and procedures not yet returned.")
    kinds: list[str] = Field(
        description="Sorted pathway labels that remain (direct, associated), plus procedure when "
        "procedures remain."
    )
    approx_extra_tokens: int = Field(description="Rough size of what remains, in tokens.")


class ProcedureTallies(Output):
    used: int
    not_used: int
    unassessable: int
    helped: int
    no_effect: int
    harmed: int
    unknown: int


class Contribution(Output):
    effect: str
    contribution: str
    outcome: str | None = Field(None, description="Outcome of the task in which it was used, once committed.")
    outcome_summary: str | None = None
    occurred_at: int = Field(description="Unix time of the feedback.")


class FullProcedure(Output):
    procedure_id: str = Field(description="proc_<session_id> — use in slowave_feedback.")
    goal: str
    summary: str
    context: dict[str, object]
    steps: list[str]
    caveats: list[str] = Field(description="Known failure modes; never omitted.")
    outcome: str = Field(description="Most recent outcome: success, partial, failure or unknown.")
    outcome_summary: str
    created_at: int
    evidence: ProcedureTallies = Field(description="Observed use and effect from past feedback.")
    contributions: list[Contribution] = Field(description="The three most recent observed contributions.")
