"""slowave_recall: a focused question mid-task answered from a fresh catalog (services/retrieval.py),
or the next page of a frozen one."""

from __future__ import annotations

import asyncio
import json

from slowave_graph.contract.recall import RecallRequest, RecallResult
from slowave_graph.graph.paging import FORGOTTEN, paginate
from slowave_graph.graph.rows import JsonObject, PageMemoryHome
from slowave_graph.services import text
from slowave_graph.services.context import ClientInfo, cursor_id, new_id
from slowave_graph.services.ranking import Candidate
from slowave_graph.services.retrieval import (
    Remaining,
    Retriever,
    accessible_field,
    context_cue,
    first_page,
    memory_item,
    policy_label,
    procedure_hint_text,
)


class RecallService:
    """slowave_recall: a focused lookup mid-task, or the next page of a frozen result."""

    def __init__(self, retriever: Retriever) -> None:
        self.retriever = retriever
        self.repo, self.policy, self.clock = retriever.repo, retriever.policy, retriever.clock

    async def recall(self, req: RecallRequest, client: ClientInfo) -> RecallResult:
        if req.continue_from is not None:
            return await self._continue(req, req.continue_from, client)
        assert req.query is not None
        # A read-only session check and the query embedding (CPU) overlap. The guard proper, the
        # idle clock and the task_context update go with the retrieval's write, so a failed recall
        # changes nothing.
        session, cues = await asyncio.gather(
            self.repo.session_for_recall(
                session_id=req.session_id, scope=req.scope, now=self.clock(), principal=client.principal
            ),
            self.retriever.embed_cues([req.query, req.semantic_context or ""], req.task_context),
        )
        stored = session.task_context
        context = merge_context(stored, req.task_context) if req.task_context else stored
        catalog = await self.retriever.build(
            req.scope,
            cues,
            context_cue(context),
            req.page_size or 5,
            with_experience=session.has_learned,
            with_procedures=session.has_procedures,
            may_use=client.may_use,
        )
        retrieval_id = new_id("rec")
        frozen = catalog.freeze(retrieval_id)
        first = catalog.page(1)
        mode = req.evidence
        # Freezing the retrieval (a write) and reading what page 1 shows are independent.
        _, (evidence, evidence_truncated), procedures = await asyncio.gather(
            self.repo.create_retrieval(
                session_id=req.session_id,
                scope=req.scope,
                kind="recall",
                query=req.query,
                policy_version=policy_label("recall", self.policy),
                now=self.clock(),
                principal=client.principal,
                context_update=req.task_context,
                merge=merge_context,
                **frozen,
            ),
            self.retriever.evidence([c.id for c in first], mode),
            self.retriever.full_procedures([p["id"] for p in catalog.page_procedures(1)]),
        )
        return RecallResult(
            retrieval_id=retrieval_id,
            session_id=req.session_id,
            memories=[memory_item(c, text.query_terms(req.query)) for c in first],
            procedures=procedures,
            evidence=evidence,
            evidence_mode=mode,
            evidence_truncated=evidence_truncated,
            retrieval_policy_version=policy_label("recall", self.policy),
            **first_page(catalog, frozen),
        )

    async def _continue(self, req: RecallRequest, cursor: str, client: ClientInfo) -> RecallResult:
        served = await self.repo.serve_cursor(
            cursor_id=cursor, session_id=req.session_id, scope=req.scope, now=self.clock(),
            principal=client.principal, page_of=paginate, next_cursor=cursor_id,
        )  # fmt: skip
        rows = {r["id"]: r for r in await self.repo.memories_by_id(served.page_ids + served.rest_ids)}
        pathways = dict(zip(served.catalog_ids, served.catalog_pathways, strict=True))
        why = dict(zip(served.catalog_ids, served.catalog_associations, strict=True))
        noted = dict(zip(served.catalog_ids, served.catalog_links, strict=True))

        def candidate(i: str) -> Candidate:
            return _candidate(rows[i], req.scope, pathways[i], why[i], noted[i])

        page = [candidate(i) for i in served.page_ids if i in rows]
        rest = [candidate(i) for i in served.rest_ids if i in rows]
        details = await self.retriever.full_procedures(served.page_procedure_ids + served.rest_procedure_ids)
        shown = set(served.page_procedure_ids)
        later = [procedure_hint_text(p.goal, p.summary) for p in details if p.procedure_id not in shown]
        return RecallResult(
            retrieval_id=served.retrieval_id,
            session_id=req.session_id,
            memories=[memory_item(c, text.query_terms(served.query)) for c in page],
            procedures=[p for p in details if p.procedure_id in shown],
            # evidence belongs to the first page of a result (it was offered there)
            evidence=[],
            evidence_mode=req.evidence,
            evidence_truncated=False,
            retrieval_policy_version=served.policy_version,
            relevant_total=served.relevant_total,
            catalog_truncated=served.catalog_truncated,
            more_available=served.next_cursor_id is not None,
            continue_from=served.next_cursor_id,
            accessible_field=accessible_field(Remaining(rest, later)),
        )


def merge_context(old: JsonObject, new: JsonObject) -> JsonObject:
    """Deep merge: new keys win, nested objects merge."""
    merged = dict(old)
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_context(merged[key], value)
        else:
            merged[key] = value
    return merged


def _candidate(row: PageMemoryHome, scope: str, pathway: str, association: str, links: str = "") -> Candidate:
    noted = json.loads(links) if links else {}
    return Candidate(
        origin_scope=row["scope"] if row["scope"] != scope else None,
        stage=row["stage"],
        # a memory forgotten since the catalog was frozen is named no more
        also_stored_as=[i for i in noted.get("also_stored_as", []) if i != FORGOTTEN],
        conflicts_with=[i for i in noted.get("conflicts_with", []) if i != FORGOTTEN],
        id=row["id"],
        content=row["content"],
        type=row["type"],
        integration=row.get("integration"),
        integration_version=row.get("integration_version"),
        pathway=pathway,
        association=json.loads(association) if association else None,
    )
