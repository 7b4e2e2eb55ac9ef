"""slowave_commit: close a task — feedback preflight, trajectory, episode, procedure."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from slowave_graph.contract.commit import CommitRequest, CommitResult, TrajectoryEntry
from slowave_graph.embedding.embedder import Embedder
from slowave_graph.graph.errors import UnknownSession
from slowave_graph.graph.repository import GraphRepository
from slowave_graph.graph.rows import ProcedureParams, TrajectoryStep
from slowave_graph.services import text
from slowave_graph.services.context import ClientInfo, utcnow
from slowave_graph.services.retrieval import context_cue

# Steps that narrate the memory tools themselves ("Activated the Slowave session.", "Submitted
# retrieval feedback.", "Called slowave_recall …") are bookkeeping, not evidence about the task: an
# episode built from them would be recalled for every later task.
LIFECYCLE_NARRATION = re.compile(
    r"\bslowave_(activate|remember|recall|feedback|commit)\b"
    r"|\bslowave[- ]graph\b"
    r"|\b(activated|opened|started|committed|closed)\b.{0,40}\b(slowave|memory)\b.{0,20}\bsession\b"
    r"|\b(submitted|sent|gave|recorded|provided)\b.{0,30}\b(retrieval|memory)\s+feedback\b"
    r"|\b(recalled|remembered|stored)\b.{0,30}\b(in|from|to)\s+(slowave|memory)\b",
    re.I,
)


def task_entries(trajectory: list[TrajectoryEntry] | None) -> tuple[list[TrajectoryStep], int]:
    """The trajectory's task steps, numbered, and how many lifecycle steps were left out."""
    steps = trajectory or []
    kept = [e for e in steps if not LIFECYCLE_NARRATION.search(e.summary)]
    entries: list[TrajectoryStep] = [
        {"kind": e.kind, "summary": e.summary, "status": e.status, "position": i} for i, e in enumerate(kept)
    ]
    return entries, len(steps) - len(kept)


def episode_details(req: CommitRequest, entries: list[TrajectoryStep]) -> str:
    """The episode's text after its first line, "Task: <the session's task>", which commit_session
    writes from the session it locks (so a commit without a procedure reads nothing first)."""
    lines = [
        f"Final goal: {req.final_goal}",
        f"Outcome: {req.outcome} — {req.outcome_summary}",
        f"Verification: {req.verification.status} — {req.verification.summary}",
    ]
    if req.verification.evidence_refs:
        lines.append("Evidence: " + "; ".join(req.verification.evidence_refs))
    if entries:
        lines.append("Trajectory:")
        lines.extend(f"- [{e['kind']}/{e['status']}] {e['summary']}" for e in entries)
    return "\n".join(lines)


@dataclass
class CommitService:
    repo: GraphRepository
    embedder: Embedder
    clock: Callable[[], datetime] = utcnow

    async def commit(self, req: CommitRequest, client: ClientInfo) -> CommitResult:
        entries, filtered = task_entries(req.trajectory)
        procedure: ProcedureParams | None = None
        session = None
        if req.procedure is not None or client.scopes is not None:
            # A token limited to some scopes commits only sessions in them (its own sessions are,
            # unless its grants were narrowed since); one outside them is unknown to it, exactly
            # like a session that does not exist. A procedure's scope token needs the session's
            # scope, and an unknown session costs no embedding.
            session = await self.repo.session_for_commit(req.session_id, client.principal)
            if session is None or not client.may_use(session["scope"]):
                raise UnknownSession(req.session_id)
        if req.procedure is not None:
            assert session is not None
            p = req.procedure
            steps = [s.summary for s in p.steps]
            cue = context_cue(p.context)
            [embedding] = await self.embedder.aembed([text.procedure_text(req.final_goal, p.summary, cue)])
            procedure = {
                "goal": req.final_goal, "summary": p.summary, "context": json.dumps(p.context),
                "context_text": cue, "steps": steps, "steps_text": "\n".join(steps),
                "caveats": list(p.caveats), "deduplication_key": p.deduplication_key, "outcome": req.outcome,
                "outcome_summary": req.outcome_summary, "embedding": embedding,
                "scope_token": text.scope_token(session["scope"]),
                "verification_status": req.verification.status,
            }  # fmt: skip
        written = await self.repo.commit(
            session_id=req.session_id,
            trajectory=entries,
            episode={"details": episode_details(req, entries), "outcome": req.outcome},
            procedure=procedure,
            close={
                "final_goal": req.final_goal,
                "outcome": req.outcome,
                "outcome_summary": req.outcome_summary,
                "verification_status": req.verification.status,
                "verification_summary": req.verification.summary,
                "verification_refs": list(req.verification.evidence_refs),
            },
            client_name=client.name,
            client_version=client.version,
            principal=client.principal,
            now=self.clock(),
        )
        return CommitResult(
            session_id=req.session_id,
            committed=True,
            outcome=req.outcome,
            feedback_status="complete",
            verification_status=req.verification.status,
            episodes_formed=written.episodes_formed,
            operation="closed" if written.was_open else "updated",
            procedure_id=written.procedure_id,
            already_ended=not written.was_open,
            trajectory_lifecycle_filtered=filtered,
        )
