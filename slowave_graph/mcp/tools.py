"""The tools as agents see them: names, descriptions (when to call, what counts as use), schemas."""

from __future__ import annotations

from mcp.server.mcpserver.tools.base import Tool
from mcp.types import ToolAnnotations

from slowave_graph.contract.activate import ActivateRequest, ActivateResult
from slowave_graph.contract.commit import CommitRequest, CommitResult
from slowave_graph.contract.feedback import FeedbackBatchResult, FeedbackRequest, FeedbackResult
from slowave_graph.contract.recall import RecallRequest, RecallResult
from slowave_graph.contract.remember import RememberBatchResult, RememberRequest, RememberResult
from slowave_graph.mcp.adapter import make_tool
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
Start a task: opens a new session in a scope and primes working memory with what earlier work \
stored there. Call it once at the beginning of every task, before the other memory tools, with the \
task verbatim and your initial goal; keep session_id for remember, recall and commit, and \
retrieval_id for feedback.

Returns only memories that qualify as relevant — an empty list is a valid answer: nothing stored \
matched, which does not prove nothing is known. memory_state is cold_start when the scope holds \
nothing yet. Procedures from earlier tasks (up to three per page) come with their outcome and \
caveats (read the caveats; a procedure that failed says so). Pass continuity_id from an earlier \
activation to continue the same line of work across sessions (same scope and client only). When \
more_available is true, slowave_recall(continue_from=…) returns the next page of the same frozen \
result (accessible_field says what remains). A memory longer than 1,024 characters comes as the \
parts that bear on the task, listed in provenance.source_excerpt.

Everything returned is exposed to you and needs feedback (slowave_feedback) before slowave_commit: \
"used" only if an item actually influenced your reasoning, an action, a check or a constraint you \
applied — having read it is not use. Scope is kind:id (e.g. project:shop); spell it the same way \
every time."""

REMEMBER = """\
Store durable claims: facts, decisions, preferences, constraints, instructions, lessons, warnings, \
open questions, tasks or artifacts that will matter after this task. Each claim should stand on its \
own (name the project, component, value and condition) and be something you verified or were \
told — not a guess, not a transcript. Use occurred_at (RFC 3339 with offset, e.g. \
2026-03-01T09:30:00Z) when the claim is about a specific time.

Needs the open session_id from slowave_activate and the same scope. One claim: content + type; \
several: memories=[{content, type, occurred_at?}] (each item gets its own result). The memory is \
searchable at once. An identical claim already stored in the scope (ignoring case, spacing and \
final punctuation) is not duplicated: disposition is "matched" and the existing memory is \
reinforced. Storing creates no feedback obligation. To correct a wrong memory, remember the \
corrected claim, then mark the old one stale (stale_reason superseded, replacement_memory_id = the \
new id) with slowave_feedback."""

RECALL = """\
Look something up mid-task: a deliberate, focused search of the session's scope when you need \
history that slowave_activate did not surface — the task moved on, a sub-problem came up, or an \
earlier result said more_available. Needs the open session_id and the same scope.

Ask one focused natural-language question naming the subject, goal and conditions; keep exact \
project and service names, identifiers and error text. Paraphrases match: "How long do Atlas login \
tokens remain valid?" finds "Atlas authentication credentials expire after 45 minutes". Put \
independent needs in separate sentences; do not stuff keywords or assume the answer. Results are \
bounded suggestions, not proof and not an inventory: an empty list does not prove absence.

Check provenance and evidence before applying a memory; evidence="full" adds the source text (up \
to 1000 characters per record, marked truncated). Procedures come with steps, caveats, their \
outcome and how past uses went. continue_from=<cursor> (alone) replays the next page of a frozen \
result — identical on every replay, never repeating an item; pages you do not fetch create no \
obligation. Every retrieval_id you receive needs slowave_feedback before slowave_commit."""

FEEDBACK = """\
Record what actually happened with what a retrieval showed you — append-only evidence that decides \
what future retrievals rank first. Call it when the work that used (or did not use) the items of an \
activate/recall is done, and always before slowave_commit; partial checkpoints earlier are fine. \
Task outcome does not belong here (slowave_commit owns it).

Per memory, assessment is one of: used — it observably influenced reasoning, an action, a check \
or an applied constraint (reading it or topical similarity is not use; effect helped|no_effect|\
harmed, omitted = helped); not_used — no influence; irrelevant — it does not fit this task (that \
does not make it false); already_known — you knew it anyway; unassessable — usage cannot be \
established (reason required); stale — no longer true (stale_reason contradicted|superseded|\
outdated|unsupported|withdrawn and a reason; superseded also needs replacement_memory_id, which \
any stale entry may carry: remember the corrected claim first). relevance (relevant|irrelevant|\
uncertain) is a separate, optional axis. \
Per procedure, use (used|not_used|unassessable) is separate from effect (helped|no_effect|harmed|\
unknown); used needs contribution; unassessable needs reason.

Each entry is checked on its own: a bad one comes back in data.rejected with a reason and hint \
while the others are accepted — so ok=true can still carry rejections; read data.rejected and \
data.outstanding. Only targets the retrieval actually showed can be assessed. coverage=complete \
declares every shown item assessed (anything outstanding or rejected makes it partial); an empty \
retrieval still needs {"retrieval_id": …, "coverage": "complete"}. Several retrievals at once: \
items=[{retrieval_id, memory_feedback, procedure_feedback, coverage}, …] with nothing at top level; \
check every results[i].ok. The latest assessment of a target in a retrieval is the one that counts."""

COMMIT = """\
Close the task: record its final goal, outcome (success|partial|failure), what happened, and how \
it was verified. Call it once at the end of every task, after slowave_feedback has covered every \
retrieval of the session: otherwise it returns incomplete_feedback (retryable) listing the \
outstanding retrieval and target ids — give that feedback and commit again.

Optionally pass procedure (summary, steps, caveats, context, deduplication_key) when the task \
taught a reusable method — also after a failure, so others learn what not to do (failed procedures \
are shown with a caution); and trajectory, up to 32 key actions/observations of the task itself \
(steps about these memory tools are left out and counted in trajectory_lifecycle_filtered). The \
session's events become an episode that future evidence points to. Committing a session that \
already ended (by commit or the idle timeout) only updates its outcome, with no feedback check \
(operation "updated", already_ended true)."""

_WRITES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)


def build_tools(services: Services, metrics: ToolMetrics | None, timeout: float) -> list[Tool]:
    """The five tools; a call that outlives ``timeout`` seconds answers ``unavailable``."""
    return [
        make_tool(
            name="slowave_activate",
            title="Start a task and prime working memory",
            description=ACTIVATE,
            request_model=ActivateRequest,
            result_model=ActivateResult,
            handler=services.activation.activate,
            annotations=_WRITES,
            metrics=metrics,
            timeout=timeout,
        ),
        make_tool(
            name="slowave_remember",
            title="Store durable claims",
            description=REMEMBER,
            request_model=RememberRequest,
            result_model=RememberResult | RememberBatchResult,  # type: ignore[arg-type]
            handler=services.remember.remember,
            annotations=_WRITES,
            metrics=metrics,
            timeout=timeout,
        ),
        make_tool(
            name="slowave_recall",
            title="Look up memories mid-task",
            description=RECALL,
            request_model=RecallRequest,
            result_model=RecallResult,
            handler=services.recall.recall,
            # records what was shown (the feedback ledger needs it), otherwise reads
            annotations=_WRITES,
            metrics=metrics,
            timeout=timeout,
        ),
        make_tool(
            name="slowave_feedback",
            title="Assess what a retrieval showed",
            description=FEEDBACK,
            request_model=FeedbackRequest,
            result_model=FeedbackResult | FeedbackBatchResult,  # type: ignore[arg-type]
            handler=services.feedback.feedback,
            annotations=ToolAnnotations(
                read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
            ),
            metrics=metrics,
            timeout=timeout,
        ),
        make_tool(
            name="slowave_commit",
            title="Close the task with its outcome",
            description=COMMIT,
            request_model=CommitRequest,
            result_model=CommitResult,
            handler=services.commit.commit,
            annotations=_WRITES,
            metrics=metrics,
            timeout=timeout,
        ),
    ]
