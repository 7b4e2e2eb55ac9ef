"""activate and remember: opening a task's session and storing durable claims."""

from __future__ import annotations

import json
import logging
import secrets
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from slowave_graph.contract.activate import ActivateRequest, ActivateResult
from slowave_graph.contract.common import ErrorCode, Warning_, parse_rfc3339
from slowave_graph.contract.remember import (
    RememberBatchResult,
    RememberItemResult,
    RememberRequest,
    RememberResult,
)
from slowave_graph.contract.retrieval import AccessibleField, MemoryItem, Provenance
from slowave_graph.embedder import Embedder
from slowave_graph.errors import ServiceError, invalid
from slowave_graph.graph.database import DatabaseUnavailable
from slowave_graph.graph.repository import GraphRepository
from slowave_graph.services import text
from slowave_graph.services.paging import paginate
from slowave_graph.services.ranking import (
    DEFAULT_POLICY,
    Candidate,
    RankingPolicy,
    admit_direct,
    merge_candidates,
    order_associated,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ClientInfo:
    """The MCP client as the transport reports it (never taken from tool arguments)."""

    name: str | None = None
    version: str | None = None


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def utcnow() -> datetime:
    return datetime.now(UTC)


class MemoryService:
    def __init__(
        self,
        repo: GraphRepository,
        embedder: Embedder,
        policy: RankingPolicy = DEFAULT_POLICY,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.repo = repo
        self.embedder = embedder
        self.policy = policy
        self.clock = clock

    # ------------------------------------------------------------------ remember
    async def remember(
        self, req: RememberRequest, client: ClientInfo
    ) -> RememberResult | RememberBatchResult:
        items = req.items()
        vectors = await self.embedder.aembed([item.content for item in items])
        rows = [
            {
                "index": index,
                "content": item.content,
                "type": item.type,
                "occurred_at": parse_rfc3339(item.occurred_at) if item.occurred_at else None,
                "active_key": text.active_key(req.scope, item.content),
                "content_hash": text.content_hash(item.content),
                "embedding": vector,
            }
            for index, (item, vector) in enumerate(zip(items, vectors, strict=True))
        ]
        written = await self._write_memories(req, rows, client)
        if req.memories is None:
            result = written[0]
            assert isinstance(result, RememberResult)
            return result
        return RememberBatchResult(
            results=[
                RememberItemResult(index=i, ok=True, data=r)
                if isinstance(r, RememberResult)
                else RememberItemResult(index=i, ok=False, error=r.body())
                for i, r in enumerate(written)
            ]
        )

    async def _write_memories(
        self, req: RememberRequest, rows: list[dict[str, Any]], client: ClientInfo
    ) -> list[RememberResult | ServiceError]:
        try:
            return [self._remembered(req, r) for r in await self._store(req, rows, client)]
        except (ServiceError, DatabaseUnavailable):
            raise
        except Exception as exc:
            if len(rows) == 1:
                raise
            # A batch is not all-or-nothing: store item by item so one bad item fails alone.
            log.warning("batch remember failed as a whole (%s); storing items one by one", exc)
        results: list[RememberResult | ServiceError] = []
        for row in rows:
            try:
                stored = await self._store(req, [row], client)
                results.append(self._remembered(req, stored[0]))
            except (ServiceError, DatabaseUnavailable):
                raise
            except Exception as exc:
                log.exception("remember item %s failed", row["index"])
                results.append(ServiceError(ErrorCode.storage_error, f"storing this memory failed: {exc}"))
        return results

    async def _store(
        self, req: RememberRequest, rows: list[dict[str, Any]], client: ClientInfo
    ) -> list[dict[str, Any]]:
        return await self.repo.remember(
            session_id=req.session_id,
            scope=req.scope,
            scope_token=text.scope_token(req.scope),
            items=rows,
            client_name=client.name,
            client_version=client.version,
            now=self.clock(),
        )

    @staticmethod
    def _remembered(req: RememberRequest, row: dict[str, Any]) -> RememberResult:
        return RememberResult(
            stored=True,
            memory_id=row["memory_id"],
            disposition="created" if row["created"] else "matched",
            type=row["type"],
            scope=req.scope,
            source_event_id=row["event_id"],
        )

    # ------------------------------------------------------------------ activate
    async def activate(self, req: ActivateRequest, client: ClientInfo) -> ActivateResult:
        if req.continuity_id is not None:
            owner = await self.repo.continuity_scope(req.continuity_id)
            if owner is None:
                raise invalid("unknown continuity_id; omit it to start a new line of work", "continuity_id")
            if owner != req.scope:
                raise invalid("continuity_id belongs to another scope", "continuity_id")

        norm_key = text.scope_norm_key(req.scope)
        state = await self.repo.scope_state(req.scope, norm_key)
        catalog: list[Candidate] = []
        truncated = False
        if state.has_memories:
            catalog, truncated = await self._find(req.scope, self._activation_cues(req))

        pages = paginate([c.pathway for c in catalog], req.page_size)
        first = [catalog[i] for i in pages[0]] if pages else []
        now = self.clock()
        retrieval_id = new_id("ctx")
        cursor_id = new_id("cur") if len(pages) > 1 else None
        kind, name = text.split_scope(req.scope)
        written = await self.repo.create_activation(
            scope=req.scope,
            scope_kind=kind,
            scope_name=name,
            norm_key=norm_key,
            continuity_id=req.continuity_id,
            new_continuity_id=new_id("cont"),
            task=req.task,
            initial_goal=req.initial_goal,
            task_context=json.dumps(req.task_context) if req.task_context is not None else None,
            semantic_context=req.semantic_context,
            client_name=client.name,
            client_version=client.version,
            retrieval_id=retrieval_id,
            query=req.task,
            policy_version=self.policy.version,
            page_size=req.page_size,
            catalog_ids=[c.id for c in catalog],
            catalog_pathways=[c.pathway for c in catalog],
            relevant_total=len(catalog),
            catalog_truncated=truncated,
            page_memories=[{"id": c.id, "rank": i + 1, "pathway": c.pathway} for i, c in enumerate(first)],
            page_procedures=[],
            cursor_id=cursor_id,
            now=now,
        )
        if written is None:  # the continuity line vanished or moved between check and write
            raise invalid("continuity_id is not usable for this scope", "continuity_id")

        warnings = []
        if state.variants:
            warnings.append(
                Warning_(
                    code="scope_fragmentation",
                    message=f"scope {req.scope!r} looks like a variant of {', '.join(state.variants)}; "
                    "memories are not shared between them — use one spelling",
                )
            )
        rest = [catalog[i] for page in pages[1:] for i in page]
        return ActivateResult(
            retrieval_id=retrieval_id,
            session_id=written["session_id"],
            memory_state="available" if state.has_memories or state.has_procedures else "cold_start",
            memories=[memory_item(c) for c in first],
            procedures=[],
            warnings=warnings,
            continuity_id=written["continuity_id"],
            continuity_state="continued" if req.continuity_id else "started",
            retrieval_policy_version=self.policy.version,
            relevant_total=len(catalog),
            catalog_truncated=truncated,
            more_available=cursor_id is not None,
            continue_from=cursor_id,
            accessible_field=accessible_field(rest),
        )

    @staticmethod
    def _activation_cues(req: ActivateRequest) -> list[str]:
        cues = [req.task, req.initial_goal]
        if req.semantic_context:
            cues.append(req.semantic_context)
        return list(dict.fromkeys(c.strip() for c in cues if c.strip()))

    async def _find(self, scope: str, cues: list[str]) -> tuple[list[Candidate], bool]:
        """Direct hits for the cues, then memories associated with them: the frozen catalog."""
        embeddings = await self.embedder.aembed(cues)
        lucene = text.lucene_query(" ".join(cues), text.scope_token(scope))
        found = await self.repo.search_direct(
            scope=scope, embeddings=embeddings, lucene=lucene, k=self.policy.candidate_k
        )
        direct = admit_direct(merge_candidates(found.vector, found.fulltext), self.policy)
        associated_rows = await self.repo.search_associated(
            scope=scope,
            seed_ids=[c.id for c in direct],
            now=self.clock(),
            min_strength=self.policy.associated_min_strength,
            half_life_days=self.policy.association_half_life_days,
            k=self.policy.associated_max,
        )
        associated = order_associated(associated_rows, exclude={c.id for c in direct})
        return direct + associated, found.truncated


def memory_item(cand: Candidate) -> MemoryItem:
    return MemoryItem(
        memory_id=cand.id,
        content=cand.content[:500],
        pathway="associated" if cand.pathway == "associated" else "direct",
        provenance=Provenance(
            source_kind="event",
            integration=cand.integration,
            integration_version=cand.integration_version,
        ),
    )


def accessible_field(rest: list[Candidate]) -> AccessibleField | dict[str, int]:
    """Size hints about catalog items not yet served; never their content."""
    if not rest:
        return {}
    return AccessibleField(
        extra_candidates=len(rest),
        kinds=dict(Counter(c.type for c in rest)),
        approx_extra_tokens=sum(len(c.content) for c in rest) // 4 + 1,
    )
