"""The tools as agents see them: names, descriptions (when to call, what counts as use), schemas."""

from __future__ import annotations

from mcp.server.mcpserver.tools.base import Tool
from mcp.types import ToolAnnotations

from slowave_graph.contract.activate import ActivateRequest, ActivateResult
from slowave_graph.contract.remember import RememberBatchResult, RememberRequest, RememberResult
from slowave_graph.mcp.adapter import make_tool
from slowave_graph.services.memory import MemoryService

INSTRUCTIONS = """\
slowave-graph is your long-term memory across tasks, shared with other agents working in the same \
scope. Per task: call slowave_activate once at the start (it opens a session and shows what is \
already known), slowave_remember for durable claims worth keeping beyond this task, \
slowave_recall for focused lookups mid-task, slowave_feedback to say honestly which shown items \
influenced your work, and slowave_commit at the end with the outcome. Memories are suggestions \
with provenance, not proof: check them against the current state before relying on them."""

ACTIVATE = """\
Start a task: opens a new session in a scope and primes working memory with what earlier work \
stored there. Call it once at the beginning of every task, before other memory tools, with the \
task verbatim and your initial goal; keep the returned session_id for remember, recall and commit, \
and the retrieval_id for feedback.

Returns only memories that qualify as relevant (an empty list is a valid answer — it does not prove \
that nothing is known; it means nothing stored matched). memory_state is cold_start when the scope \
holds nothing yet. Pass continuity_id from an earlier activation to continue the same line of work \
across sessions (same scope only). When more_available is true, slowave_recall with \
continue_from returns the next page of the same frozen result.

Everything returned here is exposed to you and will need feedback (slowave_feedback) before \
slowave_commit: "used" only if an item actually influenced your reasoning, an action, a check or \
a constraint you applied — having read it is not use. Scope is kind:id (e.g. project:shop); use the \
same spelling every time."""

REMEMBER = """\
Store durable claims: facts, decisions, preferences, constraints, instructions, lessons, warnings, \
open questions, tasks or artifacts that will matter after this task. Each claim should stand on its \
own (name the project, component, value and condition), and be something you verified or were \
told — not a guess or a transcript. Use occurred_at (RFC 3339 with offset) when the claim is about \
a specific time.

Needs the open session_id from slowave_activate and the same scope. One claim: content + type; \
several: memories=[{content, type, occurred_at?}]. The memory is searchable immediately. An \
identical claim already stored in the scope (ignoring case, spacing and final punctuation) is not \
duplicated: disposition is "matched" and the existing memory is reinforced. Storing creates no \
feedback obligation. To correct a wrong memory, remember the corrected claim, then mark the old \
one stale (superseded) with slowave_feedback."""


def build_tools(service: MemoryService) -> list[Tool]:
    return [
        make_tool(
            name="slowave_activate",
            title="Start a task and prime working memory",
            description=ACTIVATE,
            request_model=ActivateRequest,
            result_model=ActivateResult,
            handler=service.activate,
            annotations=ToolAnnotations(
                read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
            ),
        ),
        make_tool(
            name="slowave_remember",
            title="Store durable claims",
            description=REMEMBER,
            request_model=RememberRequest,
            result_model=RememberResult | RememberBatchResult,  # type: ignore[arg-type]
            handler=service.remember,
            annotations=ToolAnnotations(
                read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
            ),
        ),
    ]
