"""slowave_feedback: check each assessment on its own, append it to the ledger, learn from it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from slowave_graph.contract.common import ErrorCode
from slowave_graph.contract.feedback import (
    MEMORY_ASSESSMENTS,
    PROCEDURE_USES,
    RELEVANCE,
    STALE_REASONS,
    Applied,
    Coverage,
    FeedbackBatchResult,
    FeedbackItem,
    FeedbackItemResult,
    FeedbackRequest,
    FeedbackResult,
    MemoryFeedbackEntry,
    Outstanding,
    ProcedureFeedbackEntry,
    Rejection,
    SalienceChange,
)
from slowave_graph.errors import ServiceError, from_store, unavailable
from slowave_graph.graph.errors import DatabaseUnavailable, StoreRefusal
from slowave_graph.graph.repository import FeedbackDecision, GraphRepository
from slowave_graph.graph.rows import (
    FeedbackContextRow,
    FeedbackEvent,
    LearningChange,
    NamedMemory,
    RetireItem,
)
from slowave_graph.services.context import ClientInfo, utcnow
from slowave_graph.services.generalisation import Generaliser

NEUTRAL_MEMORY = {"not_used", "unassessable", "irrelevant", "already_known"}
# the form of a memory id (cypher/memory.cypher mints sch_<n>)
MEMORY_ID = re.compile(r"^sch_[0-9]+$")

HINTS = {
    "target_not_exposed": "only targets this retrieval showed (including continuation pages already served) "
    "can be assessed",
    "invalid_memory_assessment": "use one of: " + ", ".join(MEMORY_ASSESSMENTS),
    "invalid_relevance": "use relevant, irrelevant or uncertain, or omit relevance",
    "used_requires_helped_no_effect_or_harmed_effect": "for used give effect helped, no_effect or harmed "
    "(omitted means helped)",
    "neutral_requires_unknown_or_absent_effect": "effect belongs to used; omit it or send unknown",
    "unassessable_requires_reason": "say in reason why usage cannot be assessed",
    "already_known_requires_unknown_or_absent_effect": "already_known takes no effect; omit it or send "
    "unknown",
    "already_known_requires_no_replacement": "replacement_memory_id belongs to assessment stale",
    "irrelevant_requires_unknown_or_absent_effect": "irrelevant takes no effect; omit it or send unknown",
    "stale_requires_unknown_or_absent_effect": "stale takes no effect; omit it or send unknown",
    "stale_requires_reason": "say in reason why the memory is no longer true",
    "stale_requires_valid_stale_reason": "stale_reason must be one of: " + ", ".join(STALE_REASONS),
    "superseded_requires_replacement_memory_id": "remember the corrected claim first, then pass its id as "
    "replacement_memory_id",
    "stale_reason_requires_stale_assessment": "stale_reason belongs to assessment stale",
    "replacement_requires_stale_assessment": "replacement_memory_id belongs to assessment stale",
    "replacement_matches_retired_memory": "the replacement must be another memory than the one marked stale",
    "invalid_replacement_memory_id": "replacement_memory_id must be a memory id such as sch_12",
    "replacement_not_found": "replacement_memory_id must name an existing memory",
    "replacement_scope_mismatch": "the replacement must be in the retrieval's scope",
    "replacement_not_current": "the replacement must be an active memory",
    "invalid_procedure_use": "use one of: " + ", ".join(PROCEDURE_USES),
    "invalid_procedure_effect": "effect must be helped, no_effect, harmed or unknown",
    "used_procedure_requires_contribution": "for used, describe in contribution how the procedure "
    "contributed",
    "not_used_requires_unknown_effect_and_no_contribution": "effect and contribution belong to used; for "
    "not_used/unassessable omit them (or send effect unknown)",
    "incomplete_coverage": "assess every outstanding target and correct rejected entries, then declare "
    "coverage complete again",
}


def _blank(value: str | None) -> bool:
    return value is None or not value.strip()


def memory_rejection(
    entry: MemoryFeedbackEntry,
    ctx: FeedbackContextRow,
    memories: dict[str, NamedMemory],
    may_use: Callable[[str], bool] = lambda _: True,
) -> tuple[str, str] | None:
    """(reason, field) when this entry cannot be accepted, else None. The rules are checked in the
    reference contract's order, so a client sees the same first failing rule. ``may_use``: the
    caller's grant; a replacement in a scope it may not use is answered as one that does not exist
    (which memories exist elsewhere is not the caller's to learn)."""
    a, effect, replacement = entry.assessment, entry.effect, entry.replacement_memory_id
    if entry.memory_id not in ctx["exposed_memories"]:
        return "target_not_exposed", "target_id"
    if a not in MEMORY_ASSESSMENTS:
        return "invalid_memory_assessment", "assessment"
    if entry.relevance is not None and entry.relevance not in RELEVANCE:
        return "invalid_relevance", "relevance"
    absent_effect = effect in (None, "unknown")
    if a == "used" and effect not in (None, "helped", "no_effect", "harmed"):
        return "used_requires_helped_no_effect_or_harmed_effect", "effect"
    if a in ("not_used", "unassessable"):
        if not absent_effect:
            return "neutral_requires_unknown_or_absent_effect", "effect"
        if a == "unassessable" and _blank(entry.reason):
            return "unassessable_requires_reason", "reason"
    if a == "already_known":
        if not absent_effect:
            return "already_known_requires_unknown_or_absent_effect", "effect"
        if replacement is not None:
            return "already_known_requires_no_replacement", "replacement_memory_id"
    if a == "irrelevant" and not absent_effect:
        return "irrelevant_requires_unknown_or_absent_effect", "effect"
    if a == "stale":
        if not absent_effect:
            return "stale_requires_unknown_or_absent_effect", "effect"
        if entry.stale_reason not in STALE_REASONS:
            return "stale_requires_valid_stale_reason", "stale_reason"
        if _blank(entry.reason):
            return "stale_requires_reason", "reason"
        if entry.stale_reason == "superseded" and _blank(replacement):
            return "superseded_requires_replacement_memory_id", "replacement_memory_id"
    elif entry.stale_reason is not None:
        return "stale_reason_requires_stale_assessment", "stale_reason"
    if replacement is None:
        return None
    if a != "stale":
        return "replacement_requires_stale_assessment", "replacement_memory_id"
    if replacement == entry.memory_id:
        return "replacement_matches_retired_memory", "replacement_memory_id"
    if not MEMORY_ID.match(replacement):
        return "invalid_replacement_memory_id", "replacement_memory_id"
    found = memories.get(replacement)
    if found is None or not may_use(found["scope"]):
        return "replacement_not_found", "replacement_memory_id"
    if found["scope"] != ctx["scope"]:
        return "replacement_scope_mismatch", "replacement_memory_id"
    if found["status"] != "active":
        return "replacement_not_current", "replacement_memory_id"
    return None


def procedure_rejection(entry: ProcedureFeedbackEntry, ctx: FeedbackContextRow) -> tuple[str, str] | None:
    """As memory_rejection, for a procedure entry."""
    if entry.procedure_id not in ctx["exposed_procedures"]:
        return "target_not_exposed", "target_id"
    if entry.use not in PROCEDURE_USES:
        return "invalid_procedure_use", "use"
    if entry.effect not in (None, "helped", "no_effect", "harmed", "unknown"):
        return "invalid_procedure_effect", "effect"
    if entry.use == "used":
        return (
            ("used_procedure_requires_contribution", "contribution") if _blank(entry.contribution) else None
        )
    if entry.effect not in (None, "unknown"):
        return "not_used_requires_unknown_effect_and_no_contribution", "effect"
    if entry.contribution is not None:
        return "not_used_requires_unknown_effect_and_no_contribution", "contribution"
    if entry.use == "unassessable" and _blank(entry.reason):
        return "unassessable_requires_reason", "reason"
    return None


@dataclass
class _Plan:
    events: list[FeedbackEvent]
    rejections: list[Rejection]
    retire: list[RetireItem]
    neutral: list[str]


def plan_item(
    item: FeedbackItem, ctx: FeedbackContextRow, may_use: Callable[[str], bool] = lambda _: True
) -> _Plan:
    """Decide, entry by entry, what is accepted and what is rejected (pure). ``may_use``: the
    caller's grant (``memory_rejection``)."""
    memories = {m["id"]: m for m in ctx["memories"]}
    procedures = {p["id"]: p for p in ctx["procedures"]}
    plan = _Plan([], [], [], [])

    def add(
        index: int, kind: str, target: str, props: dict[str, str | None], problem: tuple[str, str] | None
    ) -> None:
        if problem is not None:
            reason, field = problem
            plan.rejections.append(
                Rejection(target_id=target, reason=reason, field=field, hint=HINTS[reason])
            )
            known = memories if kind == "memory" else procedures
            if target in known and known[target]["scope"] == ctx["scope"]:
                # the ledger also keeps rejected assessments of this scope's targets
                props = {**props, "status": "rejected", "rejection_reason": reason}
            else:
                return
        else:
            props = {**props, "status": "accepted"}
        plan.events.append({"index": index, "target_kind": kind, "target_id": target,
                            "properties": {k: v for k, v in props.items() if v is not None}})  # fmt: skip

    index = 0
    for m in item.memory_feedback:
        problem = memory_rejection(m, ctx, memories, may_use)
        effect = m.effect
        if problem is None and m.assessment == "used" and effect is None:
            effect = "helped"  # absent means helped
        add(index, "memory", m.memory_id, {
            "assessment": m.assessment, "relevance": m.relevance, "effect": effect,
            "stale_reason": m.stale_reason, "replacement_memory_id": m.replacement_memory_id,
            "reason": m.reason, "coverage": item.coverage,
        }, problem)  # fmt: skip
        if problem is None:
            # a lesson of another scope is retired in its own scope, never from here: a stale mark
            # from here counts against it where it travels (services/generalisation.py)
            home = memories[m.memory_id]["scope"] if m.memory_id in memories else ctx["scope"]
            if m.assessment == "stale" and home == ctx["scope"]:
                plan.retire.append(
                    {"index": index, "memory_id": m.memory_id, "stale_reason": m.stale_reason,
                     "reason": m.reason, "replacement_id": m.replacement_memory_id}
                )  # fmt: skip
            elif m.assessment in NEUTRAL_MEMORY:
                plan.neutral.append(m.memory_id)
        index += 1
    for p in item.procedure_feedback:
        problem = procedure_rejection(p, ctx)
        add(index, "procedure", p.procedure_id, {
            "use": p.use, "effect": p.effect or ("unknown" if p.use == "used" else None),
            "contribution": p.contribution, "reason": p.reason, "coverage": item.coverage,
        }, problem)  # fmt: skip
        if problem is None and p.use != "used":
            plan.neutral.append(p.procedure_id)
        index += 1
    return plan


@dataclass
class FeedbackService:
    repo: GraphRepository
    clock: Callable[[], datetime] = utcnow
    # recomputes the lessons the assessed memories belong to (services/generalisation.py)
    generaliser: Generaliser | None = None

    async def feedback(
        self, req: FeedbackRequest, client: ClientInfo
    ) -> FeedbackResult | FeedbackBatchResult:
        items = req.feedback_items()
        if req.items is None:
            return await self.apply(items[0], client, ErrorCode.not_found)
        results = []
        for item in items:  # each item is its own transaction: one failure fails only its item
            try:
                # the reference contract: in a batch an unknown retrieval is invalid input of its item
                data = await self.apply(item, client, ErrorCode.invalid_input)
                results.append(FeedbackItemResult(ok=True, data=data))
            except (ServiceError, StoreRefusal) as exc:
                refused = (exc if isinstance(exc, ServiceError) else from_store(exc)).body()
                results.append(FeedbackItemResult(ok=False, error=refused.model_dump(exclude_none=True)))
            except DatabaseUnavailable as exc:
                failure = unavailable(str(exc), outcome_unknown=exc.outcome_unknown)
                error = failure.body().model_dump(exclude_none=True)
                results.append(FeedbackItemResult(ok=False, error=error))
        return FeedbackBatchResult(results=results)

    async def apply(self, item: FeedbackItem, client: ClientInfo, unknown: ErrorCode) -> FeedbackResult:
        """Record one item. ``unknown``: the error code of an unknown (or another principal's)
        retrieval."""
        memory_ids = [m.memory_id for m in item.memory_feedback] + [
            m.replacement_memory_id for m in item.memory_feedback if m.replacement_memory_id
        ]
        procedure_ids = [p.procedure_id for p in item.procedure_feedback]
        planned: list[_Plan] = []

        def decide(ctx: FeedbackContextRow | None) -> FeedbackDecision:
            # another principal's retrieval, and one in a scope the caller's token is not granted,
            # are unknown to it
            if ctx is None or not client.may_use(ctx["scope"]):
                raise ServiceError(unknown, f"unknown retrieval_id {item.retrieval_id!r}", retryable=False)
            plan = plan_item(item, ctx, client.may_use)
            planned[:] = [plan]  # a retried transaction decides again
            declare = item.coverage == "complete" and not plan.rejections
            return FeedbackDecision(plan.events, plan.retire, declare)

        written = await self.repo.record_feedback(
            retrieval_id=item.retrieval_id,
            named_memory_ids=memory_ids,
            named_procedure_ids=procedure_ids,
            decide=decide,
            retrieval_quality=item.retrieval_quality,
            missing=item.missing,
            client_name=client.name,
            client_version=client.version,
            principal=client.principal,
            now=self.clock(),
        )
        plan = planned[0]
        self._generalise(plan)
        coverage = written.coverage
        rejected = list(plan.rejections)
        # complete is achieved when a complete declaration covers every exposure (now or earlier);
        # a complete request with anything unassessed or rejected is reported as partial.
        achieved: Coverage = "complete" if coverage["complete"] else "partial"
        if item.coverage == "complete" and (plan.rejections or not coverage["complete"]):
            achieved = "partial"
            rejected.append(
                Rejection(
                    target_id=item.retrieval_id,
                    reason="incomplete_coverage",
                    field="coverage",
                    hint=HINTS["incomplete_coverage"],
                )
            )
        return FeedbackResult(
            retrieval_id=item.retrieval_id,
            coverage=achieved,
            requested_coverage=item.coverage,
            outstanding=Outstanding(
                memory_ids=coverage["memory_ids"], procedure_ids=coverage["procedure_ids"]
            ),
            accepted_event_ids=[r["event_id"] for r in written.recorded if r["status"] == "accepted"],
            rejected=rejected,
            applied=_applied(written.learning, plan.neutral, written.retired),
        )

    def _generalise(self, plan: _Plan) -> None:
        """The lessons of the memories this call assessed, judged again from the ledger once the
        call has answered (``Generaliser.judge_soon``)."""
        assessed = sorted({
            str(e["target_id"]) for e in plan.events
            if e["target_kind"] == "memory" and e["properties"].get("status") == "accepted"
        })  # fmt: skip
        if self.generaliser is None or not self.generaliser.enabled or not assessed:
            return  # off: the maintenance pass clears what travelled before
        self.generaliser.judge_soon(assessed, self.clock)


def _applied(learning: list[LearningChange], neutral: list[str], retired: list[str]) -> Applied:
    strengthened: list[str] = []
    weakened: list[str] = []
    unchanged: list[str] = []
    changes: list[SalienceChange] = []
    for row in learning:
        before = float(row["before"] if row["before"] is not None else 0.5)
        after = float(row["after"])
        if row["id"] in neutral or row["id"] in retired:
            continue
        if abs(after - before) <= 1e-9:
            unchanged.append(row["id"])
            continue
        (strengthened if after > before else weakened).append(row["id"])
        changes.append(SalienceChange(target_id=row["id"], before=round(before, 6), after=round(after, 6)))
    return Applied(
        strengthened=strengthened,
        weakened=weakened,
        unchanged=unchanged,
        neutral=sorted(set(neutral)),
        stale=retired,
        salience_changes=changes,
    )
