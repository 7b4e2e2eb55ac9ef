"""slowave_commit: close the task with its outcome, optionally as a reusable procedure."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from slowave_graph.contract.common import (
    CONTEXT_KEY_PATTERN,
    NonBlank,
    NonBlankItem,
    Output,
    SessionId,
    StrictInput,
    TaskContext,
)

Outcome = Literal["success", "partial", "failure"]
TRAJECTORY_MAX = 32
EvidenceRef = Annotated[str, StringConstraints(max_length=500)]


class Verification(StrictInput):
    status: Literal["verified", "partially_verified", "unverified"] = Field(
        description="How far the outcome was checked."
    )
    summary: NonBlank = Field(max_length=2_000, description="What was checked and how.")
    evidence_refs: list[EvidenceRef] = Field(
        default_factory=list,
        max_length=20,
        description="Test names, commands, files, URLs.",
    )


class ProcedureStep(StrictInput):
    summary: NonBlank = Field(max_length=1_000, description="One step, as an instruction.")


class ProcedureIn(StrictInput):
    summary: NonBlank = Field(max_length=2_000, description="The method in a sentence or two.")
    version: int = Field(2, ge=1, le=1_000, description="Procedure format version.")
    context: TaskContext = Field(
        default_factory=dict,
        description="When it applies (environment, tooling…), as task_context.",
    )
    steps: list[ProcedureStep] = Field(min_length=1, max_length=30)
    caveats: list[NonBlankItem] = Field(max_length=20, description="Failure modes and safety notes.")
    deduplication_key: str | None = Field(
        None,
        max_length=64,
        pattern=CONTEXT_KEY_PATTERN,
        description="Stable method name, e.g. deploy.harbor: a newer procedure with it replaces the older.",
    )


class TrajectoryEntry(StrictInput):
    kind: Literal["action", "observation"]
    summary: NonBlank = Field(max_length=1_000)
    status: Literal["started", "succeeded", "failed", "unknown"] = "unknown"


class CommitRequest(StrictInput):
    session_id: SessionId
    final_goal: NonBlank = Field(max_length=4_000, description="The goal at the end of the task.")
    outcome: Outcome
    outcome_summary: NonBlank = Field(max_length=4_000, description="What happened, in a few sentences.")
    verification: Verification
    procedure: ProcedureIn | None = Field(
        None, description="A reusable method learned (also after a failure)."
    )
    trajectory: list[TrajectoryEntry] | None = Field(
        None,
        max_length=TRAJECTORY_MAX,
        description="Key actions and observations; steps about the memory tools are left out.",
    )


class CommitResult(Output):
    session_id: str
    committed: bool
    outcome: Outcome
    feedback_status: Literal["complete"]
    verification_status: str
    episodes_formed: int
    operation: Literal["closed", "updated"] = Field(
        description="closed: this call ended the session; updated: it was already ended, its outcome was "
        "updated."
    )
    procedure_id: str | None = None
    already_ended: bool = Field(
        description="True when the session had already ended (by an earlier commit or the idle timeout): "
        "its outcome was updated without a feedback check."
    )
    trajectory_lifecycle_filtered: int = Field(
        description="Trajectory steps left out of the episode because they narrate the memory tools."
    )


class OutstandingRetrieval(Output):
    retrieval_id: str
    memory_ids: list[str]
    procedure_ids: list[str]
    coverage_declared_complete: bool


def outstanding_payload(rows: list[OutstandingRetrieval]) -> dict[str, Any]:
    return {"outstanding": [r.model_dump() for r in rows]}
