"""The tools as agents see them: names, descriptions (when to call, what counts as use), schemas."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic

from mcp.types import ToolAnnotations

from slowave_graph.contract.activate import ActivateRequest
from slowave_graph.contract.commit import CommitRequest
from slowave_graph.contract.feedback import FeedbackRequest
from slowave_graph.contract.recall import RecallRequest
from slowave_graph.contract.remember import RememberRequest
from slowave_graph.mcp.adapter import ContractTool, Handler, RequestT, make_tool
from slowave_graph.services import Services
from slowave_graph.telemetry import ToolMetrics

INSTRUCTIONS = """\
slowave-graph is your long-term memory across tasks, shared with other agents working in the same \
scope. Per task: call slowave_activate once at the start (it opens a session and shows what is \
already known), slowave_remember for durable claims worth keeping beyond this task, \
slowave_recall for focused lookups mid-task, slowave_feedback to say honestly which shown items \
influenced your work, and slowave_commit at the end with the outcome. Memories are suggestions \
with provenance, not proof: check them against the current state before relying on them."""

ACTIVATE = """\
Start a task: opens a session in a scope and shows what earlier work stored there. Call it once at \
the start of every task, before the other memory tools, with the task verbatim and your initial \
goal. Keep session_id (for remember, recall, commit) and retrieval_id (for feedback).

Only relevant memories come back: an empty list means nothing stored matched (cold_start: the \
scope is empty). provenance.also_stored_as: repeats shown \
once; conflicts_with: claims beside it; origin_scope: a lesson from another scope. Procedures \
carry their outcome and caveats: read the caveats. If more_available, \
slowave_recall(continue_from=…) pages on.

Everything returned needs slowave_feedback before slowave_commit: "used" only if it influenced \
your reasoning, an action, a check or a constraint; reading it is not use."""

REMEMBER = """\
Store durable claims that will matter after this task (a fact, decision, lesson, warning… see \
type). Each claim stands on its own (name the project, component, value and condition) and was \
verified or told to you: not a guess, not a transcript. Call it when you learn such a claim, in \
the open session. A claim already stored \
in the scope (ignoring case, spacing and final punctuation) is not duplicated: disposition \
"matched" reinforces it; similar: memories it rephrases (duplicate) or changes (update). Storing \
needs no feedback. To correct a memory, remember the corrected claim, then mark the old one stale \
(superseded, replacement_memory_id = the new id) with slowave_feedback."""

RECALL = """\
Look something up mid-task: call it when you need history that slowave_activate did not surface \
(the task moved on, a sub-problem came up) or to fetch the next page.

Ask one focused question naming subject, goal and conditions; keep exact names, identifiers and \
error text (paraphrases match). Do not stuff keywords or assume the answer. Results are \
suggestions, not proof (an empty list does not prove absence): check provenance and evidence \
before applying a memory. continue_from=<cursor> (alone): the next page of a frozen result; \
unfetched pages create no obligation. Every retrieval_id you receive needs slowave_feedback \
before slowave_commit."""

FEEDBACK = """\
Record what actually happened with what a retrieval showed you: append-only evidence that decides \
what future retrievals rank first. Call it when the work with an activate/recall result is done, \
always before slowave_commit; partial checkpoints are fine.

Per memory: used only if it observably influenced reasoning, an action, a check or an applied \
constraint (reading it or topical similarity is not use); not_used: no influence; irrelevant: does \
not fit this task (not false); already_known; unassessable (reason required); stale: no longer true \
(stale_reason and reason; superseded also needs replacement_memory_id: remember the corrected \
claim first). Per procedure, use (used needs contribution) is separate from effect.

Entries are checked one by one: a bad one comes back in data.rejected (reason, hint), the others \
are accepted; read data.rejected and data.outstanding even when ok is true. \
Only what the retrieval showed can be assessed. coverage=complete declares every shown item \
assessed; an empty retrieval still needs {"retrieval_id": …, "coverage": "complete"}. Several \
retrievals: items=[…]; check each results[i].ok. The latest assessment of a target counts."""

COMMIT = """\
Close the task: its final goal, outcome (success|partial|failure), what happened and how it was \
verified. Call it once at the end of every task, after slowave_feedback covered every retrieval of \
the session; otherwise it answers incomplete_feedback (retryable) with the outstanding ids: give \
that feedback and commit again.

Pass procedure when the task taught a reusable method, also after a failure so others learn what \
not to do; and trajectory, up to 32 key actions and observations. Committing an ended session \
only updates its outcome (operation "updated", already_ended true)."""

# readOnlyHint and idempotentHint default to false: stated only where true (bytes in every conversation)
_WRITES = ToolAnnotations(destructive_hint=False, open_world_hint=False)


@dataclass(frozen=True)
class ToolSpec(Generic[RequestT]):
    """One tool as agents see it, and which service method answers it."""

    name: str
    title: str
    description: str
    request_model: type[RequestT]
    handler: Callable[[Services], Handler[RequestT]]
    annotations: ToolAnnotations = field(default_factory=lambda: _WRITES)


TOOLS: tuple[ToolSpec[Any], ...] = (
    ToolSpec("slowave_activate", "Start a task and prime working memory", ACTIVATE, ActivateRequest,
             lambda services: services.activation.activate),
    ToolSpec("slowave_remember", "Store durable claims", REMEMBER, RememberRequest,
             lambda services: services.remember.remember),
    # recall records what was shown (the feedback ledger needs it), otherwise reads: not read-only
    ToolSpec("slowave_recall", "Look up memories mid-task", RECALL, RecallRequest,
             lambda services: services.recall.recall),
    ToolSpec("slowave_feedback", "Assess what a retrieval showed", FEEDBACK, FeedbackRequest,
             lambda services: services.feedback.feedback,
             ToolAnnotations(destructive_hint=False, idempotent_hint=True, open_world_hint=False)),
    ToolSpec("slowave_commit", "Close the task with its outcome", COMMIT, CommitRequest,
             lambda services: services.commit.commit),
)  # fmt: skip


def build_tools(services: Services, metrics: ToolMetrics | None, timeout: float) -> list[ContractTool]:
    """The five tools; a call that outlives ``timeout`` seconds answers ``unavailable``."""
    return [
        make_tool(
            name=spec.name,
            title=spec.title,
            description=spec.description,
            request_model=spec.request_model,
            handler=spec.handler(services),
            annotations=spec.annotations,
            metrics=metrics,
            timeout=timeout,
        )
        for spec in TOOLS
    ]
