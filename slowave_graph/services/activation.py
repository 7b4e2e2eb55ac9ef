"""slowave_activate: open a session in a scope and prime working memory."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime

from slowave_graph.contract.activate import ActivateRequest, ActivateResult
from slowave_graph.contract.common import Warning_
from slowave_graph.errors import invalid
from slowave_graph.graph.repository import ScopeState
from slowave_graph.graph.rows import ActivatedRow, ContinuityOwner, FrozenCatalog
from slowave_graph.services import text
from slowave_graph.services.context import ClientInfo, new_id, resolved
from slowave_graph.services.retrieval import (
    Catalog,
    Cues,
    Retriever,
    compact_procedure,
    context_cue,
    first_page,
    memory_item,
    policy_label,
)


def check_continuity(owner: ContinuityOwner | None, scope: str, client: ClientInfo) -> None:
    """A continuity line continues only in its scope and for the client that started it (lines
    from before owners were recorded are anyone's)."""
    # another principal's line, or one in a scope the caller may not use, is answered as unknown:
    # which lines exist elsewhere is not the caller's to learn
    foreign = owner is not None and (
        not client.may_use(str(owner["scope"]))
        or (owner["principal"] is not None and owner["principal"] != client.principal)
    )
    if owner is None or foreign:
        raise invalid("unknown continuity_id; omit it to start a new line of work", "continuity_id")
    if owner["scope"] != scope:
        raise invalid("continuity_id belongs to another scope", "continuity_id")
    if owner["principal"] is not None and (
        owner["principal"] != client.principal or (owner["client_name"] or "") != (client.name or "")
    ):
        raise invalid("continuity_id belongs to a different client", "continuity_id")


class ActivationService:
    """slowave_activate: open a session and show what the scope knows of the task."""

    def __init__(self, retriever: Retriever) -> None:
        self.retriever = retriever
        self.repo, self.policy, self.clock = retriever.repo, retriever.policy, retriever.clock

    async def activate(self, req: ActivateRequest, client: ClientInfo) -> ActivateResult:
        norm_key = text.scope_norm_key(req.scope)
        # The scope's state, the continuity check and the cue embeddings (CPU) overlap; embedding a
        # task for an empty scope is wasted only on its very first activation.
        state, owner, cues = await asyncio.gather(
            self.repo.scope_state(req.scope, norm_key),
            self.repo.continuity_owner(req.continuity_id)
            if req.continuity_id is not None
            else resolved(None),
            self.retriever.embed_cues(
                [req.task, req.initial_goal, req.semantic_context or ""], req.task_context
            ),
        )
        if req.continuity_id is not None:
            check_continuity(owner, req.scope, client)
        catalog = await self._catalog(req, state, cues, client)
        now = self.clock()
        retrieval_id = new_id("ctx")
        frozen = catalog.freeze(retrieval_id)
        opened = await self._open_session(req, client, norm_key, now, frozen)
        cold = not (state.has_memories or state.has_procedures)
        return ActivateResult(
            retrieval_id=retrieval_id,
            session_id=opened["session_id"],
            memory_state="cold_start" if cold else "available",
            memories=[
                memory_item(c, text.query_terms(f"{req.task} {req.initial_goal}")) for c in catalog.page(1)
            ],
            procedures=[compact_procedure(p) for p in catalog.page_procedures(1)],
            warnings=fragmentation_warnings(
                req.scope, [v for v in state.variants if client.may_use(v)], cold
            ),
            continuity_id=opened["continuity_id"],
            continuity_state="continued" if req.continuity_id else "started",
            retrieval_policy_version=policy_label("activate", self.policy),
            **first_page(catalog, frozen),
        )

    async def _catalog(
        self, req: ActivateRequest, state: ScopeState, cues: Cues, client: ClientInfo
    ) -> Catalog:
        """What the task, goal and context find in the scope; an empty scope is not searched —
        unless lessons of other scopes may travel into it (its first task may need one most)."""
        if not (state.has_memories or state.has_procedures or self.retriever.generalise):
            return Catalog([], [], False, req.page_size)
        return await self.retriever.build(
            req.scope,
            cues,
            context_cue(req.task_context),
            req.page_size,
            with_experience=state.has_learned,
            with_procedures=state.has_procedures,
            may_use=client.may_use,
        )

    async def _open_session(
        self, req: ActivateRequest, client: ClientInfo, norm_key: str, now: datetime, frozen: FrozenCatalog
    ) -> ActivatedRow:
        """Open the session with its first retrieval frozen, continuing the request's line if any."""
        kind, name = text.split_scope(req.scope)
        opened = await self.repo.activate(
            session={
                "scope": req.scope, "scope_kind": kind, "scope_name": name, "norm_key": norm_key,
                "session_id": new_id("sess"), "principal": client.principal,
                "continuity_id": req.continuity_id, "new_continuity_id": new_id("cont"),
                "task": req.task, "initial_goal": req.initial_goal,
                "task_context": json.dumps(req.task_context) if req.task_context is not None else None,
                "semantic_context": req.semantic_context, "client_name": client.name,
                "client_version": client.version, "now": now,
            },
            retrieval={
                "scope": req.scope, "kind": "activate", "query": req.task,
                "policy_version": policy_label("activate", self.policy), "now": now, **frozen,
            },
        )  # fmt: skip
        if opened is None:  # the continuity line vanished or moved between check and write
            raise invalid("continuity_id is not usable for this scope", "continuity_id")
        return opened


def fragmentation_warnings(scope: str, variants: list[str], cold: bool) -> list[Warning_]:
    """A warning when the scope looks like a variant spelling of another one."""
    # a variant spelling matters when it starts empty: that is when memories begin to split
    if not (variants and cold):
        return []
    return [
        Warning_(
            code="scope_fragmentation",
            message=f"scope {scope!r} looks like a variant of {', '.join(variants)}; "
            "memories are not shared between them — use one spelling",
        )
    ]
