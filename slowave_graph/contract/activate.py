"""slowave_activate: start a task, open a session, prime working memory."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from slowave_graph.contract.common import (
    NonBlank,
    Output,
    PageSize,
    ScopeStr,
    StrictInput,
    TaskContext,
    Warning_,
)
from slowave_graph.contract.retrieval import AccessibleField, CompactProcedure, MemoryItem


class ActivateRequest(StrictInput):
    task: NonBlank = Field(
        max_length=10_000, description="The task exactly as it was given to you (verbatim)."
    )
    initial_goal: NonBlank = Field(
        max_length=4_000, description="What you intend to achieve, in a sentence or two."
    )
    scope: ScopeStr
    continuity_id: str | None = Field(
        None,
        max_length=100,
        description="From an earlier activation in this scope: continues that line of work.",
    )
    task_context: TaskContext | None = None
    semantic_context: str | None = Field(
        None, max_length=10_000, description="Free text about the situation, used as a cue."
    )
    page_size: PageSize = 5


class ActivateResult(Output):
    retrieval_id: str = Field(description="ctx_… — pass to slowave_feedback after the work.")
    session_id: str = Field(description="Pass to remember, recall and commit.")
    memory_state: Literal["cold_start", "available"] = Field(
        description="cold_start: this scope holds no memories yet."
    )
    memories: list[MemoryItem]
    procedures: list[CompactProcedure] = Field(
        description="Procedures from earlier tasks, at most 3 per page; more through "
        "continue_from (see accessible_field.kinds).",
    )
    warnings: list[Warning_]
    continuity_id: str
    continuity_state: Literal["started", "continued"]
    retrieval_policy_version: str
    relevant_total: int = Field(description="How many memories qualified as relevant in all.")
    catalog_truncated: bool = Field(description="True when the bounded search may have missed some.")
    more_available: bool
    continue_from: str | None = Field(None, description="Cursor for slowave_recall(continue_from=…).")
    accessible_field: AccessibleField | dict[str, object] = Field(
        description="{} when nothing is left; otherwise a size hint about the unreturned memories."
    )
